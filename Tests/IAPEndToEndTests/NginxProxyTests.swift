import Foundation
import IAPTestSupport
import Testing

/// The repository's nginx site (`deploy/nginx/iapkit.conf`) run by Debian's nginx in front of a real `iapkit serve`,
/// both on loopback, TLS with a certificate made for the test: the public surface is exactly the documented public
/// routes, the operator's are refused at the proxy (token or not), and a foreign `Host` is refused by the server.
@Suite(.serialized) struct NginxProxyTests {
    static let nginx = "/usr/sbin/nginx"
    static let available =
        FileManager.default.isExecutableFile(atPath: nginx)
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")
        && ExternalTool.hasOpenSSL
    static let site = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("deploy/nginx/iapkit.conf")
    /// The paths a deployment serves on its public name (everything else is the operator's).
    static let publicPrefixes = [
        "/v1/", "/verifyReceipt", "/sandbox/verifyReceipt", "/health", "/ready", "/openapi.yaml",
    ]

    /// A free loopback port (bound, read and released).
    static func freePort() throws -> Int {
        let connection = try RawHTTPListener()
        defer { connection.close() }
        return connection.port
    }

    /// The site file made runnable here: the upstream and listening ports, the test's certificate, no IPv6 or port 80.
    static func runnableSite(upstreams: [Int], port: Int, certificate: URL, key: URL) throws -> String {
        var site = try String(contentsOf: Self.site, encoding: .utf8)
        site = site.replacingOccurrences(
            of: "server 127.0.0.1:8080 max_fails=0;",
            with: upstreams.map { "server 127.0.0.1:\($0) max_fails=0;" }.joined(separator: "\n    "))
        site = site.replacingOccurrences(
            of: "server 127.0.0.1:8080;",
            with: upstreams.map { "server 127.0.0.1:\($0);" }.joined(separator: "\n    "))
        site = site.replacingOccurrences(of: "listen 443 ssl http2;", with: "listen 127.0.0.1:\(port) ssl http2;")
        site = site.replacingOccurrences(
            of: "/etc/letsencrypt/live/iap.example.com/fullchain.pem", with: certificate.path)
        site = site.replacingOccurrences(of: "/etc/letsencrypt/live/iap.example.com/privkey.pem", with: key.path)
        // The redirect from port 80 and the IPv6 listeners are for a real host.
        let lines = site.split(separator: "\n", omittingEmptySubsequences: false).filter {
            !$0.contains("listen [::]") && !$0.contains("listen 80;")
        }
        site = lines.joined(separator: "\n")
        if let redirect = site.range(of: "    return 301 https://$host$request_uri;") {
            site.replaceSubrange(
                redirect, with: "    listen 127.0.0.1:\(try freePort());\n    return 301 https://$host$request_uri;")
        }
        return site
    }

    /// curl through the proxy, resolving iap.example.com to loopback: the status and the body.
    static func curl(
        port: Int, _ method: String, _ path: String, host: String = "iap.example.com", headers: [String] = [],
        body: String? = nil, seconds: Int = 10
    ) async throws -> (status: Int, body: String) {
        var arguments = [
            "-sk", "--max-time", "\(seconds)", "--resolve", "iap.example.com:\(port):127.0.0.1", "-X", method,
            "-o", "-", "-w", "\n%{http_code}", "-H", "Host: \(host)",
        ]
        for header in headers { arguments += ["-H", header] }
        if let body { arguments += ["-H", "Content-Type: application/json", "--data-binary", body] }
        arguments.append("https://iap.example.com:\(port)\(path)")
        let (_, output) = try await ExternalTool.run("/usr/bin/curl", arguments)
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    @Test(.enabled(if: available, "nginx, curl or openssl is missing (apt-get install nginx curl openssl)"))
    func theProxyServesExactlyThePublicSurface() async throws {
        try #require(ServerProcess.executable != nil, Comment(rawValue: ServerProcess.skipMessage))
        let (folder, config) = try DeploymentSafetyTests.configured()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await ServerProcess.start(["--config", config.path])
        defer { Task { try? await server.stop() } }

        let nginx = try await NginxProcess.start(upstreams: [server.port], in: folder)
        defer { nginx.stop() }
        let port = nginx.port

        // Every documented operation: public ones reach the server (its JSON answer, whatever the status); the
        // operator's stop at the proxy with nginx's 404, even with the admin token.
        let document = try await Self.curl(port: port, "GET", "/openapi.yaml")
        #expect(document.status == 200)
        var operations: [(method: String, path: String)] = []
        var currentPath: String?
        for line in document.body.split(separator: "\n") {
            if line.hasPrefix("  /") && line.hasSuffix(":") {
                currentPath = String(line.dropFirst(2).dropLast())
            } else if let path = currentPath, line.hasPrefix("    "), !line.hasPrefix("     "),
                let method = ["get", "post", "put", "delete"].first(where: { line == "    \($0):" })
            {
                operations.append((method.uppercased(), path))
            }
        }
        #expect(operations.count > 60, "\(operations.count) operations read from the document")
        let token = "Authorization: Bearer \(DeploymentSafetyTests.adminToken)"
        for (method, template) in operations {
            let path = template.replacingOccurrences(of: #"\{[^}]+\}"#, with: "x", options: .regularExpression)
            let isPublic = Self.publicPrefixes.contains { path.hasPrefix($0) }
            let answer = try await Self.curl(
                port: port, method, path, headers: [token], body: ["POST", "PUT"].contains(method) ? "{}" : nil)
            let fromNginx = answer.status == 404 && answer.body.contains("<center>nginx")
            if isPublic {
                #expect(!fromNginx, "\(method) \(path) should reach the server")
            } else {
                #expect(fromNginx, "\(method) \(path) should stop at the proxy: \(answer.status)")
            }
        }
        // Pages and anything undocumented stop at the proxy too.
        for path in ["/", "/store", "/assets/app.css", "/nothing"] {
            let answer = try await Self.curl(port: port, "GET", path)
            #expect(answer.status == 404 && answer.body.contains("nginx"), "\(path)")
        }
        // What the public routes answer through the proxy.
        #expect(try await Self.curl(port: port, "GET", "/v1/customers/anyone/entitlements").status == 401)
        let verify = try await Self.curl(port: port, "POST", "/verifyReceipt", body: #"{"receipt-data":"AAAA"}"#)
        #expect(verify.status == 200 && verify.body.contains("\"status\""))
        let notification = try await Self.curl(port: port, "POST", "/v1/notifications", body: #"{"signedPayload":"x"}"#)
        #expect((400..<500).contains(notification.status) && notification.body.contains("\"code\""))
        // A name that is not the server's, passed on by the proxy: refused by the server (DNS rebinding).
        let foreign = try await Self.curl(port: port, "GET", "/health", host: "evil.example")
        #expect(foreign.status == 421, "\(foreign)")
    }
}

/// A listening loopback socket on a free port, used only to find one.
struct RawHTTPListener {
    let descriptor: Int32
    let port: Int

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.descriptor = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else { throw RawHTTP.Failure(description: "bind: errno \(errno)") }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() { _ = Glibc.close(descriptor) }
}
