import Foundation
import IAPCatalog
import IAPEntitlements
import IAPReceipts
import IAPSignedData
import IAPTestSupport
import Testing

private func ms(_ value: Double) -> Date { Date(timeIntervalSince1970: value / 1000) }

@Suite("Entitlements: records from every source")
struct RecordMappingTests {
    @Test(.enabled(if: SharedTestData.isAvailable, "\(SharedTestData.skipMessage)"))
    func signedTransactionWithRevocation() throws {
        let payload = try TransactionPayload(
            jsonBytes: SharedTestData.bytes("json/asn-v2-decoded/applelib-signedTransactionWithRevocation.json"))
        let record = try #require(PurchaseRecord(payload))
        #expect(record.transactionID == "23456")
        #expect(record.originalTransactionID == "12345")
        #expect(record.productID == "com.example.product")
        #expect(record.kind == .autoRenewable)
        #expect(record.subscriptionGroupID == "55555")
        #expect(record.purchaseDate == ms(1_698_148_900_000))
        #expect(record.originalPurchaseDate == ms(1_698_148_800_000))
        #expect(record.expiresDate == ms(1_698_149_000_000))
        #expect(record.ownership == .purchased)
        #expect(
            record.revocation
                == Revocation(
                    date: ms(1_698_148_950_000), kind: .proratedRefund, reason: "appIssue", percentage: 50_000))
        #expect(record.isUpgraded)
        #expect(record.offer == OfferUse(kind: .introductory, identifier: "abc.123", isFreeTrial: false))
        #expect(record.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect(record.webOrderLineItemID == "34343")
        #expect(record.environment == "LocalTesting")
        #expect(record.source == .signedTransaction)
    }

    @Test(.enabled(if: SharedTestData.isAvailable, "\(SharedTestData.skipMessage)"))
    func signedRenewalInfo() throws {
        let payload = try RenewalInfoPayload(
            jsonBytes: SharedTestData.bytes("json/asn-v2-decoded/applelib-signedRenewalInfo.json"))
        let renewal = try #require(RenewalRecord(payload))
        #expect(renewal.originalTransactionID == "12345")
        #expect(renewal.productID == "com.example.product")
        #expect(renewal.autoRenewProductID == "com.example.product.2")
        #expect(renewal.willAutoRenew == true)
        #expect(renewal.expirationReason == .voluntary)
        #expect(renewal.isInBillingRetry)
        #expect(renewal.gracePeriodExpiresDate == ms(1_698_148_900_000))
        #expect(renewal.renewalDate == ms(1_698_148_850_000))
        #expect(renewal.priceIncreasePending == true)
        #expect(renewal.signedDate == ms(1_698_148_800_000))
    }

    @Test func signedTransactionsOfEveryTypeAndFamilySharing() throws {
        var payload = TransactionPayload()
        #expect(PurchaseRecord(payload) == nil, "no ids, no date: not a purchase")
        payload.transactionID = "1"
        payload.productID = "p"
        payload.purchaseDate = EpochMilliseconds(millisecondsSince1970: 1_000)
        #expect(PurchaseRecord(payload)?.kind == nil)
        #expect(PurchaseRecord(payload)?.originalTransactionID == "1")
        let kinds: [(IAPSignedData.ProductType, ProductKind?)] = [
            (.consumable, .consumable), (.nonConsumable, .nonConsumable), (.nonRenewing, .nonRenewable),
            (.autoRenewable, .autoRenewable), ("Something New", nil),
        ]
        for (type, kind) in kinds {
            payload.type = type
            #expect(PurchaseRecord(payload)?.kind == kind)
        }
        payload.inAppOwnershipType = .familyShared
        payload.revocationDate = EpochMilliseconds(millisecondsSince1970: 2_000)
        #expect(PurchaseRecord(payload)?.ownership == .familyShared)
        #expect(PurchaseRecord(payload)?.revocation?.kind == .familyRevoke)
        payload.revocationType = .refundFull
        #expect(PurchaseRecord(payload)?.revocation?.kind == .refund)
        payload.offerType = .winBack
        payload.offerDiscountType = .freeTrial
        #expect(PurchaseRecord(payload)?.offer == OfferUse(kind: .winBack, isFreeTrial: true))
    }

    @Test func receiptEntriesAndTheUpgradeACancellationHides() {
        let start = Date(timeIntervalSince1970: 1_600_000_000)
        let bronze = InAppPurchase(
            productID: "bronze", transactionID: "10", originalTransactionID: "10", purchaseDate: start,
            productType: .autoRenewableSubscription, expiresDate: start.addingTimeInterval(30 * 86_400),
            cancellationDate: start.addingTimeInterval(86_400), isTrialPeriod: true)
        let gold = InAppPurchase(
            productID: "gold", transactionID: "11", originalTransactionID: "10",
            purchaseDate: start.addingTimeInterval(86_400 + 2), productType: .autoRenewableSubscription,
            expiresDate: start.addingTimeInterval(31 * 86_400))
        let refunded = InAppPurchase(
            productID: "coins", transactionID: "12", purchaseDate: start, productType: .consumable,
            cancellationDate: start.addingTimeInterval(3600))
        let undated = InAppPurchase(productID: "old", transactionID: "13")
        let receipt = AppReceipt(
            environment: .productionSandbox, bundleID: "b", appVersion: "1",
            inAppPurchases: [bronze, gold, refunded, undated])

        let records = PurchaseRecord.records(from: receipt)
        #expect(records.map(\.transactionID) == ["10", "11", "12"], "an entry with no date cannot be placed in time")
        #expect(records[0].isUpgraded && records[0].revocation == nil, "cancelled when gold was bought: an upgrade")
        #expect(records[0].offer == OfferUse(kind: .introductory, isFreeTrial: true))
        #expect(records[2].revocation == Revocation(date: start.addingTimeInterval(3600), kind: .unspecified))
        #expect(records[2].kind == .consumable)
        #expect(records.allSatisfy { $0.environment == "Sandbox" && $0.source == .receipt })

        let status = EntitlementEngine().snapshot(records: records, at: start.addingTimeInterval(2 * 86_400))
            .subscriptionGroups[0]
        #expect(status.currentProductID == "gold")
        #expect(status.upgradedTransactionIDs == ["10"])
    }
}
