import ArgumentParser
import Foundation
import IAPKitCLI
import IAPSignedData
import IAPTestSupport
import IAPTrust
import SwiftASN1
import Testing
import X509

/// The jws commands, run in process as a user would run them: on the shared corpus, and on documents minted here.
struct JWSCommandTests {
    /// A temporary folder with the test root and some signed documents in it.
    struct Workspace {
        let directory: URL
        let root: String

        init() throws {
            directory = TestFiles.url("jws")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            var serializer = DER.Serializer()
            try serializer.serialize(TestJWS.trusted.root)
            root = directory.appendingPathComponent("root.der").path
            try Data(serializer.serializedBytes).write(to: URL(fileURLWithPath: root))
        }

        func write(_ name: String, _ text: String) throws -> String {
            let path = directory.appendingPathComponent(name).path
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            return path
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    @Test func verifyJSONGivesValidFailuresTypeAndPayload() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let signer = TestJWS.signer()
        let transaction = try workspace.write("transaction.jws", try signer.sign(TestJWS.transaction()))
        let forged = try workspace.write(
            "forged.jws", try TestJWS.signer(key: TestJWS.rogueKey).sign(TestJWS.transaction()))
        let notification = try workspace.write(
            "notification.json",
            #"{"signedPayload":""#
                + (try signer.sign(
                    TestJWS.notification(
                        signedTransaction: try signer.sign(TestJWS.transaction()), signedRenewalInfo: nil)))
                + #""}"#)

        let output = CapturedOutput()
        let command = try JWSVerifyCommand.parse([
            transaction, forged, notification, "--root", workspace.root, "--bundle-id", "com.example.florist",
            "--environment", "Sandbox", "--app-apple-id", "1234567", "--json",
        ])
        #expect(await command.execute(output: output) == 1)
        let objects = try output.jsonObjects()
        #expect(objects.count == 3)
        #expect(objects[0]["valid"] as? Bool == true)
        #expect(objects[0]["type"] as? String == "transaction")
        #expect((objects[0]["failures"] as? [String])?.isEmpty == true)
        let payload = try #require(objects[0]["payload"] as? [String: Any])
        #expect(payload["productId"] as? String == "com.example.florist.vip.gold.monthly")
        #expect(payload["price"] as? Int == 4_990)
        #expect(objects[1]["valid"] as? Bool == false)
        #expect(objects[1]["failures"] as? [String] == ["signatureInvalid"])
        #expect(objects[2]["valid"] as? Bool == true)
        #expect(objects[2]["type"] as? String == "notification")
        let nested = try #require(objects[2]["nested"] as? [[String: Any]])
        #expect(nested.first?["field"] as? String == "data.signedTransactionInfo")
        #expect(nested.first?["type"] as? String == "transaction")
        #expect(output.diagnostics.last == "3 files: 2 valid, 1 invalid (signatureInvalid 1)")
    }

    @Test func verifyExitsZeroOnlyWhenAllAreValidAndTwoForABadRoot() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let good = try workspace.write("good.jws", try TestJWS.signer().sign(TestJWS.transaction()))
        let output = CapturedOutput()
        let command = try JWSVerifyCommand.parse([good, "--root", workspace.root, "--bundle-id", "com.example.florist"])
        #expect(await command.execute(output: output) == 0)
        #expect(output.lines.first?.contains("VALID transaction") == true)
        #expect(output.lines.joined().contains("not checked: environment"))
        #expect(output.lines.last == "1 file: 1 valid, 0 invalid")

        let garbage = try workspace.write("garbage.jws", "not.a.jws")
        let invalid = CapturedOutput()
        #expect(await (try JWSVerifyCommand.parse([garbage, "--root", workspace.root])).execute(output: invalid) == 1)
        #expect(invalid.lines.joined(separator: "\n").contains("garbage.jws: INVALID\n  malformedBase64"))

        let notACertificate = try workspace.write("root.pem", "hello")
        #expect(await (try JWSVerifyCommand.parse([good, "--root", notACertificate])).execute(output: invalid) == 2)
    }

    @Test func productionNeedsAnAppAppleID() {
        #expect(throws: (any Error).self) {
            try JWSVerifyCommand.parse(["a.jws", "--root", "r.der", "--environment", "Production"])
        }
    }

    @Test func decodeJSONShowsHeaderPayloadAndNestedDocuments() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let signer = TestJWS.signer()
        let path = try workspace.write(
            "notification.jws",
            try signer.sign(
                TestJWS.notification(
                    signedTransaction: try signer.sign(TestJWS.transaction()),
                    signedRenewalInfo: try signer.sign(TestJWS.renewalInfo()))))
        let output = CapturedOutput()
        #expect(await (try JWSDecodeCommand.parse([path, "--json"])).execute(output: output) == 0)
        let object = try #require(try output.jsonObjects().first)
        #expect(object["algorithm"] as? String == "ES256")
        #expect(object["type"] as? String == "notification")
        #expect((object["certificates"] as? [Any])?.count == 3)
        let nested = try #require(object["nested"] as? [[String: Any]])
        #expect(nested.map { $0["field"] as? String } == ["data.signedTransactionInfo", "data.signedRenewalInfo"])
        #expect(nested.map { $0["type"] as? String } == ["transaction", "renewalInfo"])

        let text = CapturedOutput()
        #expect(await (try JWSDecodeCommand.parse([path])).execute(output: text) == 0)
        #expect(text.lines.joined().contains("\"notificationType\" : \"DID_RENEW\""))
    }

    @Test(.enabled(if: SharedTestData.isAvailable, "\(SharedTestData.skipMessage)"))
    func verifyTheCorpusAsItsManifestSays() async throws {
        func run(_ arguments: [String]) async throws -> [[String: Any]] {
            let output = CapturedOutput()
            _ = await (try JWSVerifyCommand.parse(arguments + ["--json"])).execute(output: output)
            return try output.jsonObjects()
        }
        let jws = { (name: String) in SharedTestData.path("jws/\(name)") }
        let real = try await run([
            jws("aporat-test-notification-signedPayload.jws"), "--root",
            SharedTestData.path("certs/apple-official/AppleRootCA-G3.cer"), "--bundle-id", "com.Abilities",
            "--environment", "Sandbox",
        ])
        #expect(real.first?["valid"] as? Bool == true)
        #expect(real.first?["chain"] as? String == "apple")

        let xcodeRoot = SharedTestData.path("certs/storekit-testing/StoreKitTestingInXcode-jws-x5c-from-applelib.der")
        let xcodeFile = jws("applelib-xcode-signed-transaction.jws")
        let bundle = "com.example.naturelab.backyardbirds.example"
        let refused = try await run([xcodeFile, "--root", xcodeRoot, "--bundle-id", bundle, "--environment", "Xcode"])
        #expect(refused.first?["failures"] as? [String] == ["xcodeSignedNotAllowed"])
        let allowed = try await run([
            xcodeFile, "--insecure-xcode-cert", xcodeRoot, "--bundle-id", bundle, "--environment", "Xcode",
        ])
        #expect(allowed.first?["valid"] as? Bool == true)
        #expect(allowed.first?["chain"] as? String == "xcodeTest")
    }
}
