public import Crypto
public import Foundation
import IAPCatalog
import IAPReceipts
public import IAPSignedData

/// How a simulator is set up: the app it plays the App Store for, the environment its artifacts claim, its time rate
/// and start, and the inputs that make it deterministic.
public struct SimulatorConfiguration: Sendable {
    /// The app's bundle identifier: every artifact names it.
    public var bundleID: String
    /// The app's Apple id (adam id); artifacts carry it in every environment so Production verifiers can check it.
    public var appAppleID: Int64
    /// The app version receipts and app transactions are issued for (`CFBundleVersion`).
    public var appVersion: String
    /// The version customers first obtained (receipts' original application version).
    public var originalAppVersion: String
    /// The environment every artifact claims: Sandbox by default, Production or Xcode on request.
    public var environment: AppStoreEnvironment
    /// How long periods, grace and retry last.
    public var timeRate: TimeRate
    /// The simulated moment the simulator starts at.
    public var start: Date
    /// Whether a failed renewal keeps access for a grace period; nil takes the catalog's setting.
    public var billingGracePeriodEnabled: Bool?
    /// Seeds the notification UUIDs and device opaque values, so two runs with the same inputs sign the same bytes.
    public var seed: UInt64
    /// The first transaction id; each new transaction takes the next.
    public var firstTransactionID: UInt64
    /// Promotional-offer signing keys by key id (the public halves of the keys you create in App Store Connect):
    /// a promotional offer's signature must verify with the key its key id names.
    public var promotionalOfferKeys: [String: P256.Signing.PublicKey]
    /// Offer codes customers can redeem: code -> (product, offer id of one of the product's offer codes).
    public var offerCodes: [String: OfferCodeGrant]
    /// App Store Server API keys by key id (the public halves of the in-app purchase keys you create in App Store
    /// Connect): a bearer token for the simulator's `/inApps` API must be signed by the key its `kid` names.
    public var serverAPIKeys: [String: P256.Signing.PublicKey] = [:]
    /// The issuer id tokens must carry in `iss`, when set.
    public var serverAPIIssuerID: String?
    /// How Retention Messaging performance tests load the developer's realtime URL.
    public var performanceTest: PerformanceTestConfiguration = .standard
    /// The most renewals, retries and expiries one clock move may run; a move that would run more stops at the
    /// limit with an error (so a two-second time rate advanced by a century cannot hang the caller).
    public var maximumEventsPerAdvance: Int = 5_000_000
    /// The latest moment the clock may reach (receipts and certificates stop making sense after it).
    public static let latestDate = Date(timeIntervalSince1970: 4_102_444_799)  // 2099-12-31T23:59:59Z

    public init(
        bundleID: String = "com.example.app", appAppleID: Int64 = 1_234_567_890, appVersion: String = "1.0",
        originalAppVersion: String = "1.0", environment: AppStoreEnvironment = .sandbox,
        timeRate: TimeRate = .realTime, start: Date = Date(timeIntervalSince1970: 1_767_225_600),
        billingGracePeriodEnabled: Bool? = nil, seed: UInt64 = 1, firstTransactionID: UInt64 = 2_000_000_000_000_001,
        promotionalOfferKeys: [String: P256.Signing.PublicKey] = [:], offerCodes: [String: OfferCodeGrant] = [:]
    ) {
        self.bundleID = bundleID
        self.appAppleID = appAppleID
        self.appVersion = appVersion
        self.originalAppVersion = originalAppVersion
        self.environment = environment
        self.timeRate = timeRate
        self.start = start
        self.billingGracePeriodEnabled = billingGracePeriodEnabled
        self.seed = seed
        self.firstTransactionID = firstTransactionID
        self.promotionalOfferKeys = promotionalOfferKeys
        self.offerCodes = offerCodes
    }
}

/// What redeeming an offer code gives: a subscription product and one of its offer-code offers.
public struct OfferCodeGrant: Hashable, Sendable {
    public var productID: String
    public var offerID: String
    public init(productID: String, offerID: String) {
        self.productID = productID
        self.offerID = offerID
    }
}
