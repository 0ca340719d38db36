import ArgumentParser
import Foundation
import IAPKitCLI
import IAPSignedData
import IAPTestSupport
import IAPTrust
import Testing

/// `iapkit entitlements`, run in process on minted documents and on the shared corpus.
struct EntitlementsCommandTests {
    typealias Workspace = JWSCommandTests.Workspace

    @Test func onlyVerifiedDocumentsCount() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let signer = TestJWS.signer()
        var refunded = TestJWS.transaction()
        refunded.transactionID = "2000000000000001"
        refunded.originalTransactionID = "2000000000000001"
        refunded.productID = "com.example.florist.flowers"
        refunded.type = .nonConsumable
        refunded.subscriptionGroupIdentifier = nil
        refunded.expiresDate = nil
        refunded.revocationDate = EpochMilliseconds(TestPKI.signingTime.addingTimeInterval(-3600))
        refunded.revocationType = .refundFull
        var forged = TestJWS.transaction()
        forged.transactionID = "2000000000000002"
        forged.productID = "com.example.florist.chocolates"
        forged.type = .nonConsumable
        var renewal = TestJWS.renewalInfo()
        renewal.autoRenewProductID = "com.example.florist.vip.bronze"

        let files = [
            try workspace.write("transaction.jws", try signer.sign(TestJWS.transaction())),
            try workspace.write(
                "notification.json",
                #"{"signedPayload":""#
                    + (try signer.sign(
                        TestJWS.notification(signedTransaction: try signer.sign(refunded), signedRenewalInfo: nil)))
                    + #""}"#),
            try workspace.write("renewal.jws", try signer.sign(renewal)),
            try workspace.write("forged.jws", try TestJWS.signer(key: TestJWS.rogueKey).sign(forged)),
        ]
        let output = CapturedOutput()
        let command = try EntitlementsCommand.parse(
            files + [
                "--root", workspace.root, "--bundle-id", "com.example.florist", "--at", "2026-01-01T00:00:00Z",
                "--json",
            ])
        #expect(await command.execute(output: output, currentTime: Date()) == 1, "one file is forged")
        let object = try #require(try output.jsonObjects().first)
        let reports = try #require(object["files"] as? [[String: Any]])
        #expect(reports.map { $0["valid"] as? Bool } == [true, true, true, false])
        #expect(reports.map { $0["added"] as? Int } == [1, 1, 1, 0])
        #expect((reports[3]["failures"] as? [[String: Any]])?.first?["code"] as? String == "signatureInvalid")

        #expect(object["entitledProductIds"] as? [String] == ["com.example.florist.vip.gold.monthly"])
        let snapshot = try #require(object["snapshot"] as? [String: Any])
        #expect(snapshot["moment"] as? String == "2026-01-01T00:00:00Z")
        let group = try #require((snapshot["subscriptionGroups"] as? [[String: Any]])?.first)
        #expect(group["groupID"] as? String == "21345678")
        #expect(group["state"] as? String == "subscribed")
        #expect(group["renewsToProductID"] as? String == "com.example.florist.vip.bronze")
        #expect(group["pendingChange"] as? String == "otherProduct", "no catalog: levels unknown")
        #expect(group["willAutoRenew"] as? Bool == true)
        let revoked = try #require((snapshot["revokedTransactions"] as? [[String: Any]])?.first)
        #expect(revoked["productID"] as? String == "com.example.florist.flowers")
        #expect((snapshot["nonConsumables"] as? [Any])?.isEmpty == true, "refunded flowers, forged chocolates")

        // The same in text, at a moment after the period ended: nothing is entitled.
        let text = CapturedOutput()
        let later = try EntitlementsCommand.parse(files + ["--root", workspace.root, "--at", "2026-03-01T00:00:00Z"])
        #expect(await later.execute(output: text, currentTime: Date()) == 1)
        let lines = text.lines.joined(separator: "\n")
        #expect(lines.contains("forged.jws: INVALID, not counted"))
        #expect(lines.contains("entitled now: nothing"))
        #expect(lines.contains("group 21345678: expired"))
        #expect(lines.contains("com.example.florist.flowers: transaction 2000000000000001, refund on"))
    }

    @Test(.enabled(if: SharedTestData.isAvailable, "\(SharedTestData.skipMessage)"))
    func receiptWithCatalogInText() async throws {
        let files = [
            SharedTestData.path("receipts/revenuecat-base64encodedreceiptsample1.der"),
            SharedTestData.path("receipts/tamtamchik-validReceipt.der"),
            "--root", SharedTestData.path("certs/apple-official/AppleIncRootCertificate.cer"),
            "--catalog", SharedTestData.path("storekit/RevenueCat-UnitTestsConfiguration.storekit"),
            "--at", "2020-07-22T17:54:46Z",
        ]
        // Two apps' receipts and no --bundle-id: nothing is counted silently.
        let mixed = CapturedOutput()
        let mixedCommand = try EntitlementsCommand.parse(files)
        #expect(await mixedCommand.execute(output: mixed, currentTime: Date()) == 2)
        #expect(mixed.diagnostics.last?.contains("[severalApps]") == true)
        #expect(mixed.lines.isEmpty)

        // With the app named, the other app's receipt is refused and the snapshot is this app's.
        let output = CapturedOutput()
        let command = try EntitlementsCommand.parse(files + ["--bundle-id", "com.revenuecat.sampleapp"])
        #expect(await command.execute(output: output, currentTime: Date()) == 1)
        let text = output.lines.joined(separator: "\n")
        #expect(text.contains("tamtamchik-validReceipt.der: INVALID, not counted"))
        #expect(text.contains("bundleIdMismatch"))
        #expect(text.contains("1 of 2 files verified, 9 purchase records"))
        #expect(text.contains("entitled now: com.revenuecat.annual_39.99.2_week_intro"))
        #expect(text.contains("group subscription_group_1: subscribed"))
        #expect(text.contains("current com.revenuecat.annual_39.99.2_week_intro (Annual Subscription), level 1"))
        #expect(text.contains("introductory offer used"))
        #expect(!text.contains("consumable: balance"))

        // Sandbox receipts grant nothing where Production is expected, and count under Sandbox.
        let production = CapturedOutput()
        let underProduction = try EntitlementsCommand.parse(
            files + ["--bundle-id", "com.revenuecat.sampleapp", "--environment", "Production", "--app-apple-id", "1"])
        #expect(await underProduction.execute(output: production, currentTime: Date()) == 1)
        let productionText = production.lines.joined(separator: "\n")
        #expect(productionText.contains("environmentMismatch"))
        #expect(!productionText.contains("entitled now: com.revenuecat"))
        let sandbox = CapturedOutput()
        let underSandbox = try EntitlementsCommand.parse(
            files + ["--bundle-id", "com.revenuecat.sampleapp", "--environment", "Sandbox"])
        #expect(await underSandbox.execute(output: sandbox, currentTime: Date()) == 1)
        #expect(
            sandbox.lines.joined(separator: "\n").contains("entitled now: com.revenuecat.annual_39.99.2_week_intro"))
    }

    @Test func badOptionsAndInputs() async throws {
        #expect(throws: (any Error).self) { try EntitlementsCommand.parse(["x", "--root", "r", "--at", "yesterday"]) }
        #expect(throws: (any Error).self) {
            try EntitlementsCommand.parse(["x", "--root", "r", "--non-renewing-duration", "pass=forever"])
        }
        _ = try EntitlementsCommand.parse(["x", "--root", "r", "--non-renewing-duration", "P1M"])

        let workspace = try Workspace()
        defer { workspace.remove() }
        let garbage = try workspace.write("garbage.bin", "not a receipt and not a JWS")
        let badCatalog = try workspace.write("bad.storekit", "{")
        let output = CapturedOutput()
        let withBadCatalog = try EntitlementsCommand.parse([garbage, "--root", workspace.root, "--catalog", badCatalog])
        #expect(await withBadCatalog.execute(output: output, currentTime: Date()) == 2)

        let json = CapturedOutput()
        let command = try EntitlementsCommand.parse([garbage, "--root", workspace.root, "--json"])
        #expect(await command.execute(output: json, currentTime: Date(timeIntervalSince1970: 0)) == 1)
        let report = try #require((try json.jsonObjects().first?["files"] as? [[String: Any]])?.first)
        #expect(report["valid"] as? Bool == false)
        #expect((report["failures"] as? [[String: Any]])?.isEmpty == false)
    }
}
