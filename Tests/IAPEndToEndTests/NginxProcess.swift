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
    ///
    /// The listening ports are found free and then released, so another process can take one before nginx binds it:
    /// nginx then exits, and the start is tried again on fresh ports (three times at most). A failure says what nginx
    /// logged and what `/health` last answered.
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
        var failures: [String] = []
        for attempt in 1...3 {
            let prefix = folder.appendingPathComponent("nginx-\(attempt)")
            try FileManager.default.createDirectory(at: prefix, withIntermediateDirectories: true)
            let port = try NginxProxyTests.freePort()
            let site = try NginxProxyTests.runnableSite(
                upstreams: upstreams, port: port, certificate: certificate, key: key)
            let nginx = try await launch(site: site, port: port, prefix: prefix)
            let (ready, lastAnswer) = await nginx.waitForHealth(seconds: 30)
            if ready { return nginx }
            nginx.stop()
            let log = (try? String(contentsOf: prefix.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
            failures.append("attempt \(attempt) on port \(port): /health \(lastAnswer); error.log: \(log.suffix(600))")
        }
        throw DidNotComeUp(description: "nginx did not come up: \(failures.joined(separator: " | "))")
    }

    /// Writes the main configuration around `site`, checks it with `nginx -t` and starts nginx in the foreground.
    private static func launch(site: String, port: Int, prefix: URL) async throws -> NginxProcess {
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
        return NginxProcess(port: port, process: proxy)
    }

    /// Polls `/health` through the proxy until it answers 200, nginx exits, or `seconds` pass; returns whether it
    /// answered and what the last try got.
    private func waitForHealth(seconds: Double) async -> (ready: Bool, lastAnswer: String) {
        let deadline = Date() + seconds
        var lastAnswer = "not tried"
        while Date() < deadline {
            do {
                let answer = try await NginxProxyTests.curl(port: port, "GET", "/health")
                // A 200 from a port another process took would not be this nginx's.
                if answer.status == 200, process.isRunning { return (true, "200") }
                lastAnswer = "\(answer.status) \(answer.body.prefix(200))"
            } catch {
                lastAnswer = "\(error)"
            }
            guard process.isRunning else { return (false, lastAnswer + " (nginx exited)") }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return (false, lastAnswer + " (after \(Int(seconds)) s)")
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

    /// nginx answered no `/health` in any attempt; the description says what each attempt saw.
    struct DidNotComeUp: Error, CustomStringConvertible {
        let description: String
    }
}
