import Foundation
import IAPSignedData
import IAPTestSupport
import Testing

/// Apple's decoded-payload JSON files round-trip through the models field for field, and the models read what the
/// files say.
@Suite(.enabled(if: SharedTestData.isAvailable, "\(SharedTestData.skipMessage)"))
struct PayloadModelTests {
    static func json(_ name: String) throws -> [UInt8] {
        try SharedTestData.bytes("json/asn-v2-decoded/applelib-\(name).json")
    }

    /// Decodes with `Model`, encodes, and compares with the file as generic JSON; then decodes the encoding again.
    func roundTrip<Model: PayloadModel>(_ name: String, as model: Model.Type) throws -> Model {
        let bytes = try Self.json(name)
        let decoded = try Model(jsonBytes: bytes)
        let original = try JSONValue(jsonBytes: bytes)
        #expect(
            decoded.json.isEquivalent(to: original), "\(name): \(String(decoding: decoded.jsonBytes(), as: UTF8.self))")
        #expect(try Model(jsonBytes: decoded.jsonBytes()) == decoded)
        return decoded
    }

    @Test func everyFileIsCovered() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: SharedTestData.path("json/asn-v2-decoded"))
        #expect(files.count == 11)
    }

    @Test func transaction() throws {
        let transaction = try roundTrip("signedTransaction", as: TransactionPayload.self)
        #expect(transaction.transactionID == "23456")
        #expect(transaction.originalTransactionID == "12345")
        #expect(transaction.webOrderLineItemID == "34343")
        #expect(transaction.bundleID == "com.example")
        #expect(transaction.productID == "com.example.product")
        #expect(transaction.subscriptionGroupIdentifier == "55555")
        #expect(transaction.purchaseDate?.wholeMilliseconds == 1_698_148_900_000)
        #expect(transaction.originalPurchaseDate?.wholeMilliseconds == 1_698_148_800_000)
        #expect(transaction.expiresDate?.wholeMilliseconds == 1_698_149_000_000)
        #expect(transaction.quantity == 1)
        #expect(transaction.type == .autoRenewable)
        #expect(transaction.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect(transaction.inAppOwnershipType == .purchased)
        #expect(transaction.signedDate?.wholeMilliseconds == 1_698_148_900_000)
        #expect(transaction.revocationReason == .appIssue)
        #expect(transaction.revocationDate?.wholeMilliseconds == 1_698_148_950_000)
        #expect(transaction.isUpgraded == true)
        #expect(transaction.offerType == .introductory)
        #expect(transaction.offerIdentifier == "abc.123")
        #expect(transaction.environment == .localTesting)
        #expect(transaction.transactionReason == .purchase)
        #expect(transaction.storefront == "USA")
        #expect(transaction.storefrontID == "143441")
        #expect(transaction.price == 10_990)
        #expect(transaction.currency == "USD")
        #expect(transaction.offerDiscountType == .payAsYouGo)
        #expect(transaction.appTransactionID == "71134")
        #expect(transaction.offerPeriod == "P1Y")
        // Members the models do not type (Advanced Commerce, commitment plans) are kept as they were.
        #expect(
            transaction.additionalFields.keys.sorted() == ["advancedCommerceInfo", "billingPlanType", "commitmentInfo"])
        #expect(transaction.additionalFields["billingPlanType"] == .string("MONTHLY"))
    }

    @Test func transactionWithRevocation() throws {
        let transaction = try roundTrip("signedTransactionWithRevocation", as: TransactionPayload.self)
        #expect(transaction.revocationType == .refundProrated)
        #expect(transaction.revocationPercentage == 50_000)
        #expect(transaction.additionalFields.isEmpty)
    }

    @Test func renewalInfo() throws {
        let info = try roundTrip("signedRenewalInfo", as: RenewalInfoPayload.self)
        #expect(info.expirationIntent == .customerCancelled)
        #expect(info.originalTransactionID == "12345")
        #expect(info.autoRenewProductID == "com.example.product.2")
        #expect(info.productID == "com.example.product")
        #expect(info.autoRenewStatus == .on)
        #expect(info.isInBillingRetryPeriod == true)
        #expect(info.priceIncreaseStatus == .notResponded)
        #expect(info.gracePeriodExpiresDate?.wholeMilliseconds == 1_698_148_900_000)
        #expect(info.offerType == .promotional)
        #expect(info.offerIdentifier == "abc.123")
        #expect(info.signedDate?.wholeMilliseconds == 1_698_148_800_000)
        #expect(info.environment == .localTesting)
        #expect(info.recentSubscriptionStartDate?.wholeMilliseconds == 1_698_148_800_000)
        #expect(info.renewalDate?.wholeMilliseconds == 1_698_148_850_000)
        #expect(info.renewalPrice == 9_990)
        #expect(info.currency == "USD")
        #expect(info.offerDiscountType == .payAsYouGo)
        #expect(info.eligibleWinBackOfferIDs == ["eligible1", "eligible2"])
        #expect(info.appTransactionID == "71134")
        #expect(info.offerPeriod == "P1Y")
        #expect(info.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
    }

    @Test func appTransaction() throws {
        let app = try roundTrip("appTransaction", as: AppTransactionPayload.self)
        #expect(app.receiptType == .localTesting)
        #expect(app.appAppleID == 531_412)
        #expect(app.bundleID == "com.example")
        #expect(app.applicationVersion == "1.2.3")
        #expect(app.versionExternalIdentifier == 512)
        #expect(app.receiptCreationDate?.wholeMilliseconds == 1_698_148_900_000)
        #expect(app.originalPurchaseDate?.wholeMilliseconds == 1_698_148_800_000)
        #expect(app.originalApplicationVersion == "1.1.2")
        #expect(app.deviceVerification == "device_verification_value")
        #expect(app.deviceVerificationNonce == "48ccfa42-7431-4f22-9908-7e88983e105a")
        #expect(app.preorderDate?.wholeMilliseconds == 1_698_148_700_000)
        #expect(app.appTransactionID == "71134")
        #expect(app.originalPlatform == .iOS)
        #expect(app.additionalFields.isEmpty)
    }

    @Test func notification() throws {
        let notification = try roundTrip("signedNotification", as: NotificationPayload.self)
        #expect(notification.notificationType == .subscribed)
        #expect(notification.subtype == .initialBuy)
        #expect(notification.notificationUUID == "002e14d5-51f5-4503-b5a8-c3a1af68eb20")
        #expect(notification.version == "2.0")
        #expect(notification.signedDate?.wholeMilliseconds == 1_698_148_900_000)
        let data = try #require(notification.data)
        #expect(data.environment == .localTesting)
        #expect(data.appAppleID == 41_234)
        #expect(data.bundleID == "com.example")
        #expect(data.bundleVersion == "1.2.3")
        #expect(data.signedTransactionInfo == "signed_transaction_info_value")
        #expect(data.signedRenewalInfo == "signed_renewal_info_value")
        #expect(data.status == .active)
    }

    @Test func consumptionRequestNotification() throws {
        let notification = try roundTrip("signedConsumptionRequestNotification", as: NotificationPayload.self)
        #expect(notification.notificationType == .consumptionRequest)
        #expect(notification.subtype == nil)
        #expect(notification.data?.consumptionRequestReason == .unintendedPurchase)
    }

    @Test func summaryNotification() throws {
        let notification = try roundTrip("signedSummaryNotification", as: NotificationPayload.self)
        #expect(notification.notificationType == .renewalExtension)
        #expect(notification.subtype == .summary)
        let summary = try #require(notification.summary)
        #expect(summary.environment == .localTesting)
        #expect(summary.appAppleID == 41_234)
        #expect(summary.bundleID == "com.example")
        #expect(summary.productID == "com.example.product")
        #expect(summary.requestIdentifier == "efb27071-45a4-4aca-9854-2a1e9146f265")
        #expect(summary.storefrontCountryCodes == ["CAN", "USA", "MEX"])
        #expect(summary.succeededCount == 5)
        #expect(summary.failedCount == 2)
    }

    @Test(arguments: ["signedExternalPurchaseTokenNotification", "signedExternalPurchaseTokenSandboxNotification"])
    func externalPurchaseTokenNotification(name: String) throws {
        let notification = try roundTrip(name, as: NotificationPayload.self)
        #expect(notification.notificationType == .externalPurchaseToken)
        #expect(notification.subtype == .unreported)
        let token = try #require(notification.externalPurchaseToken)
        #expect(token.tokenCreationDate?.wholeMilliseconds == 1_698_148_950_000)
        #expect(token.appAppleID == 55_555)
        #expect(token.bundleID == "com.example")
        #expect(token.externalPurchaseID?.isEmpty == false)
    }

    @Test func rescindConsentNotification() throws {
        let notification = try roundTrip("signedRescindConsentNotification", as: NotificationPayload.self)
        #expect(notification.notificationType == .rescindConsent)
        let appData = try #require(notification.appData)
        #expect(appData.appAppleID == 41_234)
        #expect(appData.bundleID == "com.example")
        #expect(appData.environment == .localTesting)
        #expect(appData.signedAppTransactionInfo == "signed_app_transaction_info_value")
    }

    @Test func realtimeRequest() throws {
        let request = try roundTrip("decodedRealtimeRequest", as: RealtimeRequestPayload.self)
        #expect(request.originalTransactionID == "99371282")
        #expect(request.appAppleID == 531_412)
        #expect(request.productID == "com.example.product")
        #expect(request.userLocale == "en-US")
        #expect(request.requestIdentifier == "3db5c98d-8acf-4e29-831e-8e1f82f9f6e9")
        #expect(request.environment == .localTesting)
        #expect(request.signedDate?.wholeMilliseconds == 1_698_148_900_000)
    }
}

/// Model behaviour that needs no corpus: unknown enum values survive, wrong types are refused, nulls are kept.
struct PayloadModelEdgeTests {
    @Test func unknownEnumerationValuesAreKept() throws {
        let json =
            #"{"notificationType":"SOMETHING_NEW","subtype":"ALSO_NEW","data":{"status":9,"environment":"Staging"}}"#
        let notification = try NotificationPayload(jsonBytes: Array(json.utf8))
        #expect(notification.notificationType?.rawValue == "SOMETHING_NEW")
        #expect(notification.subtype?.rawValue == "ALSO_NEW")
        #expect(notification.data?.status?.rawValue == 9)
        #expect(notification.data?.environment?.rawValue == "Staging")
        #expect(notification.json.isEquivalent(to: try JSONValue(jsonBytes: Array(json.utf8))))
    }

    @Test(arguments: [
        (#"{"purchaseDate":"1698148900000"}"#, "purchaseDate"),
        (#"{"quantity":1.5}"#, "quantity"),
        (#"{"quantity":99999999999999999999}"#, "quantity"),
        (#"{"isUpgraded":"true"}"#, "isUpgraded"),
        (#"{"transactionId":23456}"#, "transactionId"),
        (#"{"type":["Consumable"]}"#, "type"),
    ])
    func wrongTypesAreRefusedNamingTheField(json: String, field: String) {
        #expect {
            try TransactionPayload(jsonBytes: Array(json.utf8))
        } throws: { error in
            let error = error as! SignedDataParsingError
            return error.code == .malformedField && error.reason.contains(field)
        }
    }

    @Test func nullKnownFieldsAreKeptAsTheyWere() throws {
        let json = #"{"transactionId":"1","expiresDate":null}"#
        let transaction = try TransactionPayload(jsonBytes: Array(json.utf8))
        #expect(transaction.expiresDate == nil)
        #expect(transaction.additionalFields["expiresDate"] == .null)
        #expect(transaction.json.isEquivalent(to: try JSONValue(jsonBytes: Array(json.utf8))))
    }

    @Test func fractionalAndNegativeDatesSurviveEncoding() throws {
        let json = #"{"purchaseDate":1697679936049.7297,"originalPurchaseDate":-62135769600000}"#
        let transaction = try TransactionPayload(jsonBytes: Array(json.utf8))
        #expect(String(decoding: transaction.jsonBytes(), as: UTF8.self) == json)
    }
}
