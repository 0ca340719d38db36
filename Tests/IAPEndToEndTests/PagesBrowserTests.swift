import Foundation
import IAPTestSupport
import Testing

/// The pages in a real headless Chromium against real `iapkit serve` processes: `Scripts/browser-tests.py` (selenium,
/// axe-core) buys in the store, waits for an ask-to-buy approval, refunds, fails a card, moves the clock, reads the
/// customers, the overview and the log, pastes a receipt and JWS into the inspector, and checks every page at desktop
/// and phone widths for accessibility, console errors, failed requests and anything fetched from outside the server;
/// then the same database is served without the simulator, behind an admin token. Screenshots go to
/// `.build/screenshots`.
@Suite struct PagesBrowserTests {
    static let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test(.enabled(if: ExternalTool.hasBrowser, "chromium, chromium-driver or selenium/axe-selenium-python missing"))
    func thePagesWorkInARealBrowser() async throws {
        try #require(ServerProcess.executable != nil, Comment(rawValue: ServerProcess.skipMessage))
        let folder = try ServerProcessTests.pkiFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("pages.sqlite").path
        let screenshots = Self.package.appendingPathComponent(".build/screenshots")
        func browse(_ port: Int, _ extra: [String] = []) async throws -> String {
            let (status, output) = try await ExternalTool.run(
                "/usr/bin/env",
                [
                    "python3", Self.package.appendingPathComponent("Scripts/browser-tests.py").path,
                    "http://127.0.0.1:\(port)", screenshots.path,
                ] + extra)
            #expect(status == 0, "\(output)")
            return output
        }

        // With the simulator on, and a webhook nobody answers (port 9 on loopback), so events wait with attempts.
        let server = try await ServerProcess.start([
            "--database", database, "--pki", folder.path, "--webhook", "http://127.0.0.1:9/events",
            "--webhook-secret", "pages-webhook-secret-0123",
        ])
        let output = try await browse(server.port)
        try await server.stop()
        let passed = output.split(separator: "\n").filter { $0.hasPrefix("ok ") }
        #expect(passed.count >= 25, "\(output)")
        for name in [
            "store", "manager", "inspector", "customer", "overview", "log", "home-desktop", "store-phone",
            "manager-phone", "log-phone", "manager-actions-phone",
        ] {
            #expect(FileManager.default.fileExists(atPath: screenshots.appendingPathComponent("\(name).png").path))
        }

        // The same database serving the florist and a second app, the simulator off, behind an admin token.
        let token = "pages-admin-token-0123456789"
        let settings: [String: Any] = [
            "apps": ["florist", "shop"],
            "app": [
                "florist": [
                    "bundleId": "com.example.florist", "environments": ["Sandbox"],
                    "roots": [folder.appendingPathComponent("roots/jws-root.der").path],
                    "catalog": Self.package.appendingPathComponent("Examples/Florist/Florist.storekit").path,
                ],
                "shop": [
                    "bundleId": "com.example.shop", "environments": ["Sandbox"],
                    "roots": [folder.appendingPathComponent("roots/jws-root.der").path],
                ],
            ],
            "simulator": ["enabled": false], "adminToken": token, "database": ["url": database],
        ]
        let config = folder.appendingPathComponent("iapkit.json")
        try JSONSerialization.data(withJSONObject: settings).write(to: config)
        let off = try await ServerProcess.start(["--config", config.path])
        defer { Task { try? await off.stop() } }
        let offOutput = try await browse(off.port, ["--simulator-off", token])
        #expect(offOutput.split(separator: "\n").filter { $0.hasPrefix("ok ") }.count >= 12, "\(offOutput)")
        for name in ["customer-off", "overview-desktop-off", "log-phone-off"] {
            #expect(FileManager.default.fileExists(atPath: screenshots.appendingPathComponent("\(name).png").path))
        }
    }

    /// A page of another site (another loopback origin) in the same browser tries the POSTs that need no CORS
    /// preflight, a JSON POST, an HTML form and reads of the operator data: nothing changes and nothing is read, even
    /// in development mode, where the operator routes need no token.
    @Test(.enabled(if: ExternalTool.hasBrowser, "chromium, chromium-driver or selenium/axe-selenium-python missing"))
    func anotherSitesPageCanNeitherChangeNorReadAnything() async throws {
        try #require(ServerProcess.executable != nil, Comment(rawValue: ServerProcess.skipMessage))
        let folder = try ServerProcessTests.pkiFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await ServerProcess.start(["--database", ":memory:", "--pki", folder.path])
        defer { Task { try? await server.stop() } }
        #expect(try await server.post("/simulator/accounts", ["accountId": "ana"]).0 == 201)
        let (status, output) = try await ExternalTool.run(
            "/usr/bin/env",
            [
                "python3", Self.package.appendingPathComponent("Scripts/browser-cross-origin.py").path,
                "http://127.0.0.1:\(server.port)",
            ])
        #expect(status == 0, "\(output)")
        #expect(output.contains("ok   no account was created"), "\(output)")
        #expect(output.contains("ok   the other site's page could read none"), "\(output)")
    }
}
