import Foundation
import IAPTestSupport
import Testing

/// Debian's nginx running the repository's site (`deploy/nginx/iapkit.conf`) on loopback in front of `iapkit serve`
/// processes, with a certificate made for the test; stopped by its process id.
final class NginxProcess: @unchecked Sendable {
    let port: Int
    private let process: Process

    private init(port: Int, process: Process) {
        self.port = port
        self.process = process
    }

    /// Starts nginx balancing over `upstreams` (loopback ports), its files in `folder`, and waits until it answers
    /// `/health`.
    static func start(upstreams: [Int], in folder: URL) async throws -> NginxProcess {
        let certificate = folder.appendingPathComponent("site.pem")
        let key = folder.appendingPathComponent("site.key")
        let (made, madeOutput) = try await ExternalTool.run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
                "-subj", "/CN=iap.example.com", "-keyout", key.path, "-out", certificate.path,
            ])
        try #require(made == 0, "\(madeOutput)")
        let port = try NginxProxyTests.freePort()
        let prefix = folder.appendingPathComponent("nginx")
        try FileManager.default.createDirectory(at: prefix, withIntermediateDirectories: true)
        let site = try NginxProxyTests.runnableSite(
            upstreams: upstreams, port: port, certificate: certificate, key: key)
        let main = """
            daemon off;
            worker_processes 1;
            pid \(prefix.path)/nginx.pid;
            error_log \(prefix.path)/error.log warn;
            events { worker_connections 256; }
            http {
                access_log off;
                client_body_temp_path \(prefix.path)/body;
                proxy_temp_path \(prefix.path)/proxy;
                fastcgi_temp_path \(prefix.path)/fastcgi;
                uwsgi_temp_path \(prefix.path)/uwsgi;
                scgi_temp_path \(prefix.path)/scgi;
            \(site)
            }
            """
        let configuration = prefix.appendingPathComponent("nginx.conf")
        try main.write(to: configuration, atomically: true, encoding: .utf8)
        let (checked, checkOutput) = try await ExternalTool.run(
            NginxProxyTests.nginx,
            ["-t", "-p", prefix.path, "-c", configuration.path, "-e", prefix.path + "/error.log"])
        try #require(checked == 0, "nginx -t: \(checkOutput)")
        let proxy = Process()
        proxy.executableURL = URL(fileURLWithPath: NginxProxyTests.nginx)
        proxy.arguments = ["-p", prefix.path, "-c", configuration.path, "-e", prefix.path + "/error.log"]
        proxy.standardOutput = FileHandle.nullDevice
        proxy.standardError = FileHandle.nullDevice
        try proxy.run()
        let nginx = NginxProcess(port: port, process: proxy)
        var ready = false
        for _ in 0..<100 where !ready {
            ready = (try? await NginxProxyTests.curl(port: port, "GET", "/health").status) == 200
            if !ready { try await Task.sleep(for: .milliseconds(100)) }
        }
        if !ready { nginx.stop() }
        try #require(ready, "nginx did not come up")
        return nginx
    }

    /// SIGTERM (the master stops its worker); a proxy still running after 5 s is killed.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date() + 5
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    deinit { stop() }
}
