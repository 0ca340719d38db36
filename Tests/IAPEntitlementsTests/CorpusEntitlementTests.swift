import Foundation
import IAPCatalog
import IAPEntitlements
import IAPReceipts
import IAPTestSupport
import Testing

private func receipt(_ name: String) throws -> AppReceipt {
    try SignedReceipt(bytes: SharedTestData.bytes("receipts/\(name)")).receipt
}

private func date(_ text: String) -> Date { try! Date(text, strategy: .iso8601) }

@Suite("Entitlements: real receipts", .enabled(if: SharedTestData.isAvailable, "\(SharedTestData.skipMessage)"))
struct CorpusEntitlementTests {
    /// 187 five-minute sandbox periods of one subscription moving between lite, optimum and pro.
    @Test func theLargeSandboxReceiptExplainsItself() throws {
        let receipt = try receipt("tpinapp-receipt-sandbox-legacy.der")
        let records = PurchaseRecord.records(from: receipt)
        #expect(records.count == 187)
        #expect(
            records.allSatisfy { $0.kind == .autoRenewable && $0.source == .receipt && $0.environment == "Sandbox" })

        let engine = EntitlementEngine()
        let atCreation = engine.snapshot(
            records: records, originalAppVersion: receipt.originalAppVersion, at: receipt.creationDate!)
        // No catalog: the group is the one subscription (original transaction id) all periods share.
        #expect(atCreation.subscriptionGroups.count == 1)
        let group = atCreation.subscriptionGroups[0]
        #expect(group.groupID == nil)
        #expect(group.key == "original:1000000603177571")
        #expect(group.state == .subscribed)
        #expect(group.currentProductID == "com.nutcallalert.inapp.pro")
        #expect(group.currentTransactionID == "1000000661019370")
        #expect(group.expiresDate == date("2020-05-06T18:31:31Z"))
        #expect(group.willAutoRenew == nil, "a receipt carries no renewal information")
        #expect(!group.introductoryOfferEligible, "the optimum free trial of 2020-03-10 used it")
        #expect(group.serviceLevel == nil)
        #expect(atCreation.nonConsumables.isEmpty && atCreation.consumables.isEmpty && atCreation.unclassified.isEmpty)
        #expect(atCreation.obtainedAppBefore(version: "2.0") == true)
        #expect(atCreation.entitledProductIDs == ["com.nutcallalert.inapp.pro"])

        // Five periods were bought while another ran (upgrades and crossgrades in the sandbox): the newer one is
        // current, with no catalog to rank levels.
        let overlapping = records.sorted { $0.purchaseDate < $1.purchaseDate }
        for (earlier, later) in zip(overlapping, overlapping.dropFirst())
        where later.purchaseDate < earlier.expiresDate! {
            let moment = later.purchaseDate.addingTimeInterval(1)
            #expect(
                engine.snapshot(records: records, at: moment).subscriptionGroups[0].currentTransactionID
                    == later.transactionID)
        }

        let afterwards = engine.snapshot(records: records, at: date("2020-06-01T00:00:00Z")).subscriptionGroups[0]
        #expect(afterwards.state == .expired)
        #expect(afterwards.expirationReason == .unknown)
    }

    /// The same receipt through the ASN.1 path and Apple's verifyReceipt answer must tell the same story.
    @Test func revenueCatReceiptAgreesWithItsVerifyReceiptResponse() throws {
        let receipt = try receipt("revenuecat-base64encodedreceiptsample1.der")
        let response =
            try JSONSerialization.jsonObject(
                with: Data(SharedTestData.bytes("json/verifyReceipt/revenuecat-verifyReceiptSample1.json")))
            as! [String: Any]
        let latest = response["latest_receipt_info"] as! [[String: Any]]
        let pending = (response["pending_renewal_info"] as! [[String: Any]])[0]
        let requestDate = Date(
            timeIntervalSince1970: Double((response["receipt"] as! [String: Any])["request_date_ms"] as! String)! / 1000
        )
        func millis(_ entry: [String: Any], _ key: String) -> Date {
            Date(timeIntervalSince1970: Double(entry[key] as! String)! / 1000)
        }

        let records = PurchaseRecord.records(from: receipt)
        #expect(Set(records.map(\.transactionID)) == Set(latest.map { $0["transaction_id"] as! String }))
        for entry in latest {
            let record = records.first { $0.transactionID == entry["transaction_id"] as? String }!
            #expect(record.productID == entry["product_id"] as? String)
            #expect(record.originalTransactionID == entry["original_transaction_id"] as? String)
            #expect(record.purchaseDate == millis(entry, "purchase_date_ms"))
            #expect(record.expiresDate == millis(entry, "expires_date_ms"))
            #expect((record.offer?.isFreeTrial ?? false) == (entry["is_trial_period"] as? String == "true"))
        }

        // What the response implies at its request date: the period running then, renewing to the product named.
        let running = latest.filter {
            millis($0, "purchase_date_ms") <= requestDate && requestDate < millis($0, "expires_date_ms")
        }
        #expect(running.count == 1)
        let renewal = RenewalRecord(
            originalTransactionID: pending["original_transaction_id"] as! String,
            productID: pending["product_id"] as? String,
            autoRenewProductID: pending["auto_renew_product_id"] as? String,
            willAutoRenew: pending["auto_renew_status"] as? String == "1", source: .receipt)

        let catalog = try Catalog.load(
            contentsOfFile: SharedTestData.path("storekit/RevenueCat-UnitTestsConfiguration.storekit"))
        for engine in [EntitlementEngine(), EntitlementEngine(catalog: catalog)] {
            let snapshot = engine.snapshot(
                records: records, renewals: [renewal], originalAppVersion: receipt.originalAppVersion, at: requestDate)
            #expect(snapshot.subscriptionGroups.count == 1)
            let group = snapshot.subscriptionGroups[0]
            #expect(group.state == .subscribed)
            #expect(group.currentProductID == running[0]["product_id"] as? String)
            #expect(group.currentTransactionID == running[0]["transaction_id"] as? String)
            #expect(group.expiresDate == millis(running[0], "expires_date_ms"))
            #expect(group.originalTransactionID == pending["original_transaction_id"] as? String)
            #expect(group.willAutoRenew == true)
            #expect(group.renewsToProductID == pending["auto_renew_product_id"] as? String)
            #expect(group.pendingChange == nil)
            #expect(!group.introductoryOfferEligible)
            #expect(snapshot.entitledProductIDs == ["com.revenuecat.annual_39.99.2_week_intro"])
        }
        // With the catalog the group is the catalog's (Xcode's id; Apple's sandbox called it 20662382).
        let withCatalog = EntitlementEngine(catalog: catalog).snapshot(records: records, at: requestDate)
        #expect(
            withCatalog.subscriptionGroups[0].groupID == catalog.product(records[0].productID)?.subscription?.groupID)
        #expect(withCatalog.subscriptionGroups[0].serviceLevel == 1)

        // An hour later the annual period (a sandbox hour) has ended; with auto-renew on and no newer record the
        // reason is unknown rather than guessed.
        let later = EntitlementEngine(catalog: catalog).snapshot(
            records: records, at: requestDate.addingTimeInterval(3600)
        ).subscriptionGroups[0]
        #expect(later.state == .expired)
    }

    @Test func everyCorpusReceiptGivesASnapshot() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: SharedTestData.path("receipts"))
            .filter { $0.hasSuffix(".der") && !$0.contains("invalid") }
        #expect(names.count >= 10)
        for name in names {
            let receipt = try receipt(name)
            let records = PurchaseRecord.records(from: receipt)
            #expect(records.count == receipt.inAppPurchases.count, "\(name)")
            // One Xcode receipt writes its creation date with a +0300 offset but its purchase date, in the same local
            // time, as "Z": the purchase then seems to follow the receipt. Look at the later of the two.
            let moment = ([receipt.creationDate ?? .distantPast] + records.map(\.purchaseDate)).max()!
            let snapshot = EntitlementEngine().snapshot(records: records, at: moment)
            let accounted =
                snapshot.nonConsumables.count + snapshot.consumables.count + snapshot.subscriptionGroups.count
                + snapshot.nonRenewingSubscriptions.count + snapshot.unclassified.count
            #expect(records.isEmpty == (accounted == 0), "\(name)")
        }
    }
}
