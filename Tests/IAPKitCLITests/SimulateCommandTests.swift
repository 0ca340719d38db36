import ArgumentParser
import Foundation
import IAPKitCLI
import IAPReceipts
import IAPSignedData
import IAPSimulator
import IAPTestSupport
import IAPTrust
import Testing

private let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Examples/Florist")
private let script = ExternalTool.appleVerifyScript

@Suite("iapkit simulate", .serialized)
struct SimulateCommandTests {
    /// The florist story, run once into a folder shared by the tests of this suite.
    struct Story: Sendable {
        let status: Int32
        let output: CapturedOutput
        let folder: URL

        func files(_ name: String) throws -> [URL] {
            let directory = folder.appendingPathComponent(name)
            return try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted().map {
                directory.appendingPathComponent($0)
            }
        }
    }

    private static let story = Task {
        let folder = TestFiles.url("simulate")
        let output = CapturedOutput()
        let command = try SimulateCommand.parse([
            examples.appendingPathComponent("florist-story.yaml").path, "--out", folder.path,
        ])
        return Story(status: await command.execute(output: output), output: output, folder: folder)
    }

    static func run() async throws -> Story { try await story.value }

    @Test func writesTheTimelineRootsAndEveryArtifact() async throws {
        let run = try await Self.run()
        #expect(run.status == 0, "\(run.output.lines.joined(separator: "\n"))")
        #expect(run.output.lines.joined(separator: "\n").contains("All 47 expectations met."))
        let manager = FileManager.default
        for path in ["timeline.txt", SimulatorPKI.FileName.receiptRoot, SimulatorPKI.FileName.jwsRoot] {
            #expect(manager.fileExists(atPath: run.folder.appendingPathComponent(path).path), "\(path)")
        }
        #expect(try run.files("receipts").count >= 10)
        #expect(try run.files("notifications").count == 21)
        #expect(try run.files("jws").contains { $0.lastPathComponent.hasPrefix("appTransaction-") })
    }

    @Test func everyArtifactVerifiesWithIAPKitAgainstTheExportedRoots() async throws {
        let run = try await Self.run()
        let roots = try [SimulatorPKI.FileName.receiptRoot, SimulatorPKI.FileName.jwsRoot].flatMap {
            try TrustAnchorLoader.certificates(contentsOfFile: run.folder.appendingPathComponent($0).path)
        }
        let store = TrustStore(roots: roots)
        let verifier = try SignedDataVerifier(
            trustStore: store, configuration: .init(bundleID: "com.example.florist", environments: [.sandbox]))
        for file in try run.files("jws") + run.files("notifications") {
            var text = try String(contentsOf: file, encoding: .utf8)
            if text.hasPrefix("{"),
                let body = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String]
            {
                text = body["signedPayload"] ?? ""
            }
            let verdict = try await verifier.verify(text)
            #expect(verdict.isValid, "\(file.lastPathComponent): \(verdict.failures)")
        }
        let receipts = ReceiptVerifier(trustStore: store, configuration: .init(bundleID: "com.example.florist"))
        for file in try run.files("receipts") {
            let verdict = try await receipts.verify(
                Array(try Data(contentsOf: file)), at: Date(timeIntervalSince1970: 1_780_000_000))
            #expect(verdict.isValid, "\(file.lastPathComponent): \(verdict.failures)")
        }
    }

    @Test(.enabled(if: ExternalTool.hasOpenSSL, "openssl is not installed"))
    func opensslVerifiesEveryReceipt() async throws {
        let run = try await Self.run()
        let rootPEM = run.folder.appendingPathComponent("receipt-root.pem")
        _ = try await ExternalTool.run(
            "/usr/bin/openssl",
            [
                "x509", "-inform", "DER", "-in",
                run.folder.appendingPathComponent(SimulatorPKI.FileName.receiptRoot).path,
                "-out", rootPEM.path,
            ])
        for file in try run.files("receipts") {
            let (status, output) = try await ExternalTool.run(
                "/usr/bin/openssl",
                [
                    "cms", "-verify", "-inform", "DER", "-in", file.path, "-CAfile", rootPEM.path, "-purpose", "any",
                    "-binary", "-out", "/dev/null",
                ])
            #expect(status == 0, "\(file.lastPathComponent): \(output)")
        }
    }

    @Test(.enabled(if: ExternalTool.hasAppleLibrary, "python3 with app-store-server-library is not installed"))
    func applesLibraryVerifiesEverySignedDocument() async throws {
        let run = try await Self.run()
        var documents: [String] = []
        for file in try run.files("jws") {
            let name = file.lastPathComponent
            let kind = name.hasPrefix("transaction") ? "transaction" : name.hasPrefix("renewalInfo") ? "renewal" : "app"
            documents.append("\(kind)=\(file.path)")
        }
        documents += try run.files("notifications").map { "notification=\($0.path)" }
        let (status, output) = try await ExternalTool.run(
            "/usr/bin/env",
            [
                "python3", script, "--root", run.folder.appendingPathComponent(SimulatorPKI.FileName.jwsRoot).path,
                "--bundle-id", "com.example.florist", "--environment", "Sandbox",
            ] + documents)
        #expect(status == 0, "\(output)")
        #expect(output.split(separator: "\n").filter { $0.hasPrefix("ok ") }.count == documents.count)
    }

    @Test func badInputsExitTwo() async throws {
        let folder = TestFiles.url("bad")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let noCatalog = folder.appendingPathComponent("no-catalog.yaml")
        try "name: x\nsteps: []\n".write(to: noCatalog, atomically: true, encoding: .utf8)
        let garbage = folder.appendingPathComponent("garbage.yaml")
        try "steps: [[[".write(to: garbage, atomically: true, encoding: .utf8)
        let failing = folder.appendingPathComponent("failing.yaml")
        try "name: x\nsteps:\n  - createAccount: ana\n  - expect: ana\n    entitled: [flowers]\n".write(
            to: failing, atomically: true, encoding: .utf8)
        let catalog = examples.appendingPathComponent("Florist.storekit").path
        let cases: [([String], Int32, String)] = [
            ([noCatalog.path], 2, "names no catalog"),
            ([garbage.path, "--catalog", catalog], 2, "error"),
            ([folder.appendingPathComponent("missing.yaml").path], 2, "cannot read"),
            ([noCatalog.path, "--catalog", folder.path], 2, "error"),
            ([failing.path, "--catalog", catalog], 1, ""),
        ]
        for (arguments, expected, message) in cases {
            let output = CapturedOutput()
            let status = await (try SimulateCommand.parse(arguments)).execute(output: output)
            #expect(status == expected, "\(arguments): \(output.lines) \(output.diagnostics)")
            #expect(message.isEmpty || output.diagnostics.joined().contains(message), "\(output.diagnostics)")
        }
    }

    @Test func savedAuthorityIsReused() async throws {
        let folder = TestFiles.url("pki")
        defer { try? FileManager.default.removeItem(at: folder) }
        let scenario = examples.appendingPathComponent("florist-year.yaml").path
        for _ in 0..<2 {
            let status = await (try SimulateCommand.parse([scenario, "--pki", folder.path])).execute(
                output: CapturedOutput())
            #expect(status == 0)
        }
        let loaded = try SimulatorPKI.load(from: folder)
        #expect(loaded.jwsChain.root == (try SimulatorPKI.load(from: folder)).jwsChain.root)
    }

    @Test func helpDocumentsTheFormat() {
        let help = IAPKitCommand.helpMessage(for: SimulateCommand.self)
        for word in ["createAccount", "advance: P1M", "expectError", "--out", "timeline.txt", "offerCodes"] {
            #expect(help.contains(word), "\(word)")
        }
    }
}
