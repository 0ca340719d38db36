public import Crypto
public import Foundation
public import IAPSignedData
public import IAPTrust
public import X509

/// Fixed P-256 keys and Apple-shaped EC chains for the signed-data tests. The keys are derived from fixed labels, so
/// every run mints the same certificates.
public enum TestJWS {
    /// A P-256 key whose scalar is SHA-256 of `label`.
    public static func key(_ label: String) -> P256.Signing.PrivateKey {
        // A SHA-256 output is a valid P-256 scalar with overwhelming probability; these labels are known to be.
        try! P256.Signing.PrivateKey(rawRepresentation: Array(SHA256.hash(data: Array("iapkit-test-\(label)".utf8))))
    }

    public static let rootKey = key("jws-root")
    public static let intermediateKey = key("jws-intermediate")
    public static let leafKey = key("jws-leaf")
    public static let rogueKey = key("jws-rogue")

    /// The Apple-shaped chain the signed-data tests trust.
    public static let trusted: MintedChain = mint()

    /// Mints a chain from the fixed EC keys (or others), some of Apple's shape switched off by `options`.
    public static func mint(
        rootKey: P256.Signing.PrivateKey = rootKey,
        intermediateKey: P256.Signing.PrivateKey = intermediateKey,
        leafKey: P256.Signing.PrivateKey = leafKey,
        notValidBefore: Date = TestPKI.notValidBefore,
        notValidAfter: Date = TestPKI.notValidAfter,
        options: MintedChain.Options = MintedChain.Options()
    ) -> MintedChain {
        TestPKI.mint(
            rootKey: Certificate.PrivateKey(rootKey), intermediateKey: Certificate.PrivateKey(intermediateKey),
            leafKey: Certificate.PrivateKey(leafKey), notValidBefore: notValidBefore, notValidAfter: notValidAfter,
            options: options)
    }

    /// A signer with the trusted chain's leaf key and x5c.
    public static func signer(
        chain: [Certificate] = trusted.certificates, key: P256.Signing.PrivateKey = leafKey
    ) -> JWSSigner {
        try! JWSSigner(privateKey: key, certificateChain: chain)
    }

    /// A Sandbox verifier for `com.example.florist` that trusts the test root.
    public static func verifier(
        roots: [Certificate] = [trusted.root], bundleID: String = "com.example.florist", appAppleID: Int64? = 1_234_567,
        environment: AppStoreEnvironment = .sandbox
    ) -> SignedDataVerifier {
        try! SignedDataVerifier(
            trustStore: TrustStore(roots: roots),
            configuration: .init(bundleID: bundleID, appAppleID: appAppleID, environments: [environment]))
    }

    /// A realistic subscription transaction, about 1.5 KB of JSON once signed fields and Apple's newer members are in.
    public static func transaction(
        signedAt date: Date = TestPKI.signingTime, environment: AppStoreEnvironment = .sandbox,
        bundleID: String = "com.example.florist"
    ) -> TransactionPayload {
        var transaction = TransactionPayload()
        let start = EpochMilliseconds(date.addingTimeInterval(-86_400))
        transaction.transactionID = "2000000123456789"
        transaction.originalTransactionID = "2000000012345678"
        transaction.webOrderLineItemID = "2000000098765432"
        transaction.bundleID = bundleID
        transaction.productID = "com.example.florist.vip.gold.monthly"
        transaction.subscriptionGroupIdentifier = "21345678"
        transaction.purchaseDate = start
        transaction.originalPurchaseDate = EpochMilliseconds(date.addingTimeInterval(-86_400 * 90))
        transaction.expiresDate = EpochMilliseconds(date.addingTimeInterval(86_400 * 29))
        transaction.quantity = 1
        transaction.type = .autoRenewable
        transaction.appAccountToken = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        transaction.inAppOwnershipType = .purchased
        transaction.signedDate = EpochMilliseconds(date)
        transaction.isUpgraded = false
        transaction.offerType = .promotional
        transaction.offerIdentifier = "com.example.florist.vip.winter-promo"
        transaction.environment = environment
        transaction.storefront = "GBR"
        transaction.storefrontID = "143444"
        transaction.transactionReason = .renewal
        transaction.currency = "GBP"
        transaction.price = 4_990
        transaction.offerDiscountType = .payAsYouGo
        transaction.offerPeriod = "P3M"
        transaction.appTransactionID = "704289572311573297"
        transaction.deviceVerification = "sGDnpg+ozb8uwDSuCDZ2oVZo1CKrbB8ujR8VxCxhykRwyBIK6x6XCyERm8yWrzE8"
        transaction.deviceVerificationNonce = "3439919e-87c9-47b6-aeee-2823f7a9d3c3"
        transaction.additionalFields["billingPlanType"] = .string("MONTHLY")
        transaction.additionalFields["commitmentInfo"] = .object(
            JSONObject([
                ("billingPeriodNumber", .number(JSONNumber(3 as Int64))),
                ("commitmentExpiresDate", .number(JSONNumber(Int64(1_798_761_600_000) as Int64))),
                ("commitmentPrice", .number(JSONNumber(59_880 as Int64))),
                ("totalBillingPeriods", .number(JSONNumber(12 as Int64))),
            ]))
        return transaction
    }

    /// Renewal information for ``transaction(signedAt:environment:bundleID:)``.
    public static func renewalInfo(signedAt date: Date = TestPKI.signingTime) -> RenewalInfoPayload {
        var info = RenewalInfoPayload()
        info.originalTransactionID = "2000000012345678"
        info.autoRenewProductID = "com.example.florist.vip.gold.monthly"
        info.productID = "com.example.florist.vip.gold.monthly"
        info.autoRenewStatus = .on
        info.signedDate = EpochMilliseconds(date)
        info.environment = .sandbox
        info.renewalDate = EpochMilliseconds(date.addingTimeInterval(86_400 * 29))
        info.currency = "GBP"
        info.renewalPrice = 4_990
        return info
    }

    /// A notification about a renewal, carrying the given signed documents.
    public static func notification(
        signedTransaction: String?, signedRenewalInfo: String?, signedAt date: Date = TestPKI.signingTime,
        appAppleID: Int64? = 1_234_567
    ) -> NotificationPayload {
        var data = NotificationData()
        data.environment = .sandbox
        data.appAppleID = appAppleID
        data.bundleID = "com.example.florist"
        data.bundleVersion = "42"
        data.signedTransactionInfo = signedTransaction
        data.signedRenewalInfo = signedRenewalInfo
        data.status = .active
        var notification = NotificationPayload()
        notification.notificationType = .didRenew
        notification.notificationUUID = "6b8f1a8e-0b8e-4a57-9d0e-0c1c44a4a9a1"
        notification.data = data
        notification.version = "2.0"
        notification.signedDate = EpochMilliseconds(date)
        return notification
    }
}
