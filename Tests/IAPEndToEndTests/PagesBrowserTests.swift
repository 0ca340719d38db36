import Foundation
import IAPTestSupport
import Testing

/// The pages in a real headless Chromium against a real `iapkit serve` process: `Scripts/browser-tests.py` (selenium,
/// axe-core) buys in the store, waits for an ask-to-buy approval, pastes a receipt and JWS into the inspector, and
/// checks every page at desktop and phone widths for accessibility, console errors, failed requests and anything
/// fetched from outside the server. Screenshots go to `.build/screenshots`.
@Suite struct PagesBrowserTests {
    static let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test(.enabled(if: ExternalTool.hasBrowser, "chromium, chromium-driver or selenium/axe-selenium-python missing"))
    func thePagesWorkInARealBrowser() async throws {
        try #require(ServerProcess.executable != nil, Comment(rawValue: ServerProcess.skipMessage))
        let folder = try ServerProcessTests.pkiFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await ServerProcess.start(["--database", ":memory:", "--pki", folder.path])
        defer { Task { try? await server.stop() } }
        let screenshots = Self.package.appendingPathComponent(".build/screenshots")
        let (status, output) = try await ExternalTool.run(
            "/usr/bin/env",
            [
                "python3", Self.package.appendingPathComponent("Scripts/browser-tests.py").path,
                "http://127.0.0.1:\(server.port)", screenshots.path,
            ])
        #expect(status == 0, "\(output)")
        let passed = output.split(separator: "\n").filter { $0.hasPrefix("ok ") }
        #expect(passed.count >= 18, "\(output)")
        for name in [
            "store", "manager", "inspector", "home-desktop", "store-phone", "manager-phone", "inspector-phone",
        ] {
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
