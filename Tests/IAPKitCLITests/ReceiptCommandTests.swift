import ArgumentParser
import Foundation
import IAPKitCLI
import IAPTestSupport
import IAPTrust
import SwiftASN1
import Testing
import X509

/// The receipt commands run in process against the shared corpus, as a user would run them.
@Suite(.enabled(if: SharedTestData.isAvailable, "\(SharedTestData.skipMessage)"))
struct ReceiptCommandTests {
    static let appleRoot = SharedTestData.path("certs/apple-official/AppleIncRootCertificate.cer")
    static let xcodeCertificate = SharedTestData.path("certs/storekit-testing/StoreKitTestCertificate.cer")
    static let now = Date(timeIntervalSince1970: 1_767_225_600)

    func receipt(_ name: String) -> String { SharedTestData.path("receipts/\(name)") }

    @Test func inspectJSONHasEveryField() async throws {
        let output = CapturedOutput()
        let command = try ReceiptInspectCommand.parse([receipt("revenuecat-base64encodedreceiptsample1.der"), "--json"])
        #expect(await command.execute(output: output) == 0)
        let object = try #require(try output.jsonObjects().first)
        for key in [
            "environment", "bundleId", "appVersion", "originalAppVersion", "creationDate", "expirationDate",
            "opaqueValue", "sha1Hash", "inAppPurchases", "unknownAttributes",
        ] {
            #expect(object.keys.contains(key), "missing \(key)")
        }
        #expect(object["environment"] as? String == "Sandbox")
        #expect(object["bundleId"] as? String == "com.revenuecat.sampleapp")
        #expect(object["creationDate"] as? String == "2020-07-22T17:39:08Z")
        #expect(object["expirationDate"] is NSNull)
        let purchases = try #require(object["inAppPurchases"] as? [[String: Any]])
        #expect(purchases.count == 9)
        let first = purchases[0]
        for key in [
            "productId", "transactionId", "originalTransactionId", "quantity", "purchaseDate",
            "originalPurchaseDate", "expiresDate", "cancellationDate", "webOrderLineItemId", "isTrialPeriod",
            "isInIntroOfferPeriod", "promotionalOfferId",
        ] {
            #expect(first.keys.contains(key), "missing \(key)")
        }
        #expect(first["transactionId"] as? String == "1000000692879214")
        #expect(first["webOrderLineItemId"] as? String == "1000000054042695")
        #expect(first["expiresDate"] as? String == "2020-07-14T19:41:40Z")
        #expect(first["isTrialPeriod"] as? Bool == false)
    }

    @Test func inspectReadsBase64AndReportsBadFiles() async throws {
        let directory = TestFiles.url("cli")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let base64 = directory.appendingPathComponent("receipt.b64")
        try Data(try SharedTestData.bytes("receipts/kvitto-receipt.der")).base64EncodedData().write(to: base64)

        let output = CapturedOutput()
        let command = try ReceiptInspectCommand.parse([
            base64.path, receipt("voltrue2-legacy-ios6-transactionReceipt.b64"),
            receipt("tamtamchik-invalidReceipt.der"),
            directory.appendingPathComponent("missing.der").path, "--json",
        ])
        #expect(await command.execute(output: output) == 1)
        let objects = try output.jsonObjects()
        #expect(objects[0]["bundleId"] as? String == "com.apple.dt.Xcode")
        let codes = objects.dropFirst().map { ($0["error"] as? [String: Any])?["code"] as? String }
        #expect(codes == ["legacyTransactionReceipt", "malformedASN1", "unreadableFile"])
    }

    @Test func inspectTextView() async throws {
        let output = CapturedOutput()
        let command = try ReceiptInspectCommand.parse([receipt("tamtamchik-validReceipt.der")])
        #expect(await command.execute(output: output) == 0)
        let text = output.lines.joined(separator: "\n")
        #expect(text.contains("com.mbaasy.ios.demo"))
        #expect(text.contains("in-app purchases      7"))
    }

    @Test func verifyManyFilesWithASummary() async throws {
        let output = CapturedOutput()
        let files = ["kvitto-receipt.der", "kvitto-sandboxReceipt.der", "tpinapp-receipt-sandbox-legacy.der"].map(
            receipt)
        let command = try ReceiptVerifyCommand.parse(files + ["--root", Self.appleRoot, "--json"])
        #expect(await command.execute(output: output, currentTime: Self.now) == 0)
        let objects = try output.jsonObjects()
        #expect(objects.count == 3)
        #expect(objects.allSatisfy { $0["valid"] as? Bool == true && ($0["failures"] as? [String]) == [] })
        #expect(output.diagnostics.last == "3 files: 3 valid, 0 invalid")
    }

    @Test func verifyChecksTheEnvironmentWhenAsked() async throws {
        // kvitto-receipt is a Production receipt, the others are sandbox receipts.
        let files = ["kvitto-receipt.der", "kvitto-sandboxReceipt.der", "tpinapp-receipt-sandbox-legacy.der"].map(
            receipt)
        func failures(_ environments: [String]) async throws -> (Int32, [[String]]) {
            let output = CapturedOutput()
            let command = try ReceiptVerifyCommand.parse(
                files + ["--root", Self.appleRoot, "--json"] + environments.flatMap { ["--environment", $0] })
            let status = await command.execute(output: output, currentTime: Self.now)
            return (status, try output.jsonObjects().map { $0["failures"] as? [String] ?? [] })
        }
        let production = try await failures(["Production"])
        #expect(production.0 == 1)
        #expect(production.1 == [[], ["environmentMismatch"], ["environmentMismatch"]])
        let sandbox = try await failures(["Sandbox"])
        #expect(sandbox.1 == [["environmentMismatch"], [], []])
        let both = try await failures(["Production", "Sandbox"])
        #expect(both.0 == 0)
        #expect(throws: (any Error).self) {
            try ReceiptVerifyCommand.parse([files[0], "--root", Self.appleRoot, "--environment", "Staging"])
        }
        // Xcode-signed receipts, even with the Xcode certificate configured, fail where Production is expected.
        let output = CapturedOutput()
        let xcode = try ReceiptVerifyCommand.parse([
            receipt("apple-xcode-app-receipt-with-transaction.der"), "--insecure-xcode-cert", Self.xcodeCertificate,
            "--environment", "Production", "--json",
        ])
        #expect(await xcode.execute(output: output, currentTime: Self.now) == 1)
        #expect((try output.jsonObjects().first?["failures"] as? [String])?.contains("xcodeSignedNotAllowed") == true)
    }

    @Test func verifyReportsFailureCodesAndExitsNonZero() async throws {
        let output = CapturedOutput()
        let command = try ReceiptVerifyCommand.parse([
            receipt("kvitto-receipt.der"), receipt("apple-xcode-app-receipt-empty.der"),
            receipt("tamtamchik-invalidReceipt.der"),
            "--root", Self.appleRoot, "--bundle-id", "com.example.other", "--json",
        ])
        #expect(await command.execute(output: output, currentTime: Self.now) == 1)
        let failures = try output.jsonObjects().map { $0["failures"] as? [String] ?? [] }
        #expect(failures[0] == ["bundleIdMismatch"])
        #expect(Set(failures[1]) == ["xcodeSignedNotAllowed", "bundleIdMismatch"])
        #expect(failures[2] == ["malformedASN1"])
        #expect(
            output.diagnostics.last
                == "3 files: 0 valid, 3 invalid (bundleIdMismatch 2, malformedASN1 1, xcodeSignedNotAllowed 1)")
    }

    @Test func verifyXcodeReceiptsOnlyWhenAllowed() async throws {
        let output = CapturedOutput()
        let command = try ReceiptVerifyCommand.parse([
            receipt("apple-xcode-app-receipt-with-transaction.der"), "--insecure-xcode-cert", Self.xcodeCertificate,
            "--bundle-id", "com.example.naturelab.backyardbirds.example", "--app-version", "1",
        ])
        #expect(await command.execute(output: output, currentTime: Self.now) == 0)
        #expect(output.lines.first?.contains(": VALID\n") == true)
        #expect(output.diagnostics.first?.contains("warning") == true)
    }

    @Test func verifyChainAtNowFailsForOldReceipts() async throws {
        let output = CapturedOutput()
        let command = try ReceiptVerifyCommand.parse([
            receipt("tpinapp-receipt-sandbox-legacy.der"), "--root", Self.appleRoot, "--chain-time", "now", "--json",
        ])
        #expect(await command.execute(output: output, currentTime: Self.now) == 1)
        #expect(
            try output.jsonObjects().first?["failures"] as? [String] == ["certificateExpired", "certificateExpired"])
    }

    @Test func verifyRefusesAnImpostorRoot() async throws {
        // A self-signed certificate carrying the name "Apple Root CA" that is not Apple's.
        let name = try DistinguishedName {
            CountryName("US")
            OrganizationName("Apple Inc.")
            CommonName("Apple Root CA")
        }
        let impostor = try CertificateMinter.mint(
            .init(
                subject: name, serialNumber: .init(bytes: [0x02]), notValidBefore: TestPKI.notValidBefore,
                notValidAfter: TestPKI.notValidAfter, isCertificateAuthority: true),
            publicKey: TestKeys.rogueRoot.publicKey, issuer: name, issuerKey: TestKeys.rogueRoot)
        var coder = DER.Serializer()
        try coder.serialize(impostor)
        let path = TestFiles.url("impostor.cer")
        try Data(coder.serializedBytes).write(to: path)
        defer { try? FileManager.default.removeItem(at: path) }

        let output = CapturedOutput()
        let command = try ReceiptVerifyCommand.parse([receipt("kvitto-receipt.der"), "--root", path.path])
        #expect(await command.execute(output: output, currentTime: Self.now) == 2)
        #expect(output.diagnostics.first?.contains("impostorAppleRoot") == true)

        let missing = CapturedOutput()
        let second = try ReceiptVerifyCommand.parse([receipt("kvitto-receipt.der"), "--root", "/nonexistent.cer"])
        #expect(await second.execute(output: missing, currentTime: Self.now) == 2)
        #expect(missing.diagnostics.first?.contains("unreadableFile") == true)
    }

    @Test func verifyNeedsARoot() {
        #expect(throws: (any Error).self) { try ReceiptVerifyCommand.parse([receipt("kvitto-receipt.der")]) }
        #expect(throws: (any Error).self) {
            try ReceiptVerifyCommand.parse([
                receipt("kvitto-receipt.der"), "--root", Self.appleRoot, "--device-id", "x",
            ])
        }
    }
}
