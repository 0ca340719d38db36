public import Crypto
public import Foundation
public import IAPCatalog
public import IAPReceipts
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

/// Why the simulated store refused an operation. `code` is stable; the StoreKit-shaped codes (`networkError`,
/// `ineligibleForOffer`, ...) are the ones StoreKit testing lets you inject; the others name misuse of the simulator.
public struct StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        // StoreKit's errors, injectable per operation.
        public static let networkError = Code(rawValue: "networkError")
        public static let systemError = Code(rawValue: "systemError")
        public static let notAvailableInStorefront = Code(rawValue: "notAvailableInStorefront")
        public static let notEntitled = Code(rawValue: "notEntitled")
        public static let productUnavailable = Code(rawValue: "productUnavailable")
        public static let purchaseNotAllowed = Code(rawValue: "purchaseNotAllowed")
        public static let ineligibleForOffer = Code(rawValue: "ineligibleForOffer")
        public static let invalidOfferIdentifier = Code(rawValue: "invalidOfferIdentifier")
        public static let invalidOfferPrice = Code(rawValue: "invalidOfferPrice")
        public static let invalidOfferSignature = Code(rawValue: "invalidOfferSignature")
        public static let missingOfferParameters = Code(rawValue: "missingOfferParameters")
        public static let invalidQuantity = Code(rawValue: "invalidQuantity")
        public static let unknown = Code(rawValue: "unknown")
        // Misuse of the simulator.
        public static let unknownAccount = Code(rawValue: "unknownAccount")
        public static let unknownDevice = Code(rawValue: "unknownDevice")
        public static let unknownTransaction = Code(rawValue: "unknownTransaction")
        public static let unknownRequest = Code(rawValue: "unknownRequest")
        public static let unknownFamily = Code(rawValue: "unknownFamily")
        public static let invalidState = Code(rawValue: "invalidState")
        public static let invalidArgument = Code(rawValue: "invalidArgument")
        public static let timeGoesForward = Code(rawValue: "timeGoesForward")
        public static let signingFailed = Code(rawValue: "signingFailed")

        /// The codes that can be injected into an operation, as StoreKit testing allows.
        public static let injectable: [Code] = [
            .networkError, .systemError, .notAvailableInStorefront, .notEntitled, .productUnavailable,
            .purchaseNotAllowed, .ineligibleForOffer, .invalidOfferIdentifier, .invalidOfferPrice,
            .invalidOfferSignature, .missingOfferParameters, .unknown,
        ]
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}

/// The store operations a failure can be injected into (StoreKit testing's list, plus the simulator's others).
public enum StoreOperation: String, Hashable, Sendable, Codable, CaseIterable {
    case loadProducts, purchase, sync, refundRequest, appTransaction, subscriptionStatus, offerCodeRedemption
}

/// Options of one purchase, as StoreKit's `Product.PurchaseOption`s give them.
public struct PurchaseOptions: Sendable {
    /// How many (consumables; others must be 1).
    public var quantity: Int
    /// The app's identifier for the customer, written into the transaction (the account's token when nil).
    public var appAccountToken: UUID?
    /// A promotional offer with its signature, or a win-back offer.
    public var offer: OfferChoice?
    /// The purchase is interrupted (the customer must act outside the app) and stays pending until resolved.
    public var interrupted: Bool
    /// The customer cancels the purchase sheet.
    public var userCancels: Bool

    public init(
        quantity: Int = 1, appAccountToken: UUID? = nil, offer: OfferChoice? = nil, interrupted: Bool = false,
        userCancels: Bool = false
    ) {
        self.quantity = quantity
        self.appAccountToken = appAccountToken
        self.offer = offer
        self.interrupted = interrupted
        self.userCancels = userCancels
    }
}

/// An offer the purchase asks for.
public enum OfferChoice: Hashable, Sendable {
    /// A promotional offer, signed by the developer's server with a promotional-offer key.
    case promotional(PromotionalOfferSignature)
    /// A win-back offer (for customers whose subscription lapsed).
    case winBack(offerID: String)
}

/// The parameters of a signed promotional offer, as `Product.PurchaseOption.promotionalOffer` takes them.
///
/// Apple's format: an ECDSA P-256 SHA-256 signature (DER, base64) over the bundle id, key id, product id, offer id,
/// application username (the app account token, lowercased), nonce (lowercased) and timestamp (ms), joined by
/// U+2063 (invisible separator).
public struct PromotionalOfferSignature: Hashable, Sendable {
    public var offerID: String
    public var keyID: String
    public var nonce: UUID
    public var timestamp: Int64
    public var signature: String

    public init(offerID: String, keyID: String, nonce: UUID, timestamp: Int64, signature: String) {
        self.offerID = offerID
        self.keyID = keyID
        self.nonce = nonce
        self.timestamp = timestamp
        self.signature = signature
    }

    /// The bytes the signature covers.
    public static func message(
        bundleID: String, keyID: String, productID: String, offerID: String, appAccountToken: UUID?, nonce: UUID,
        timestamp: Int64
    ) -> [UInt8] {
        let parts = [
            bundleID, keyID, productID, offerID, appAccountToken?.uuidString.lowercased() ?? "",
            nonce.uuidString.lowercased(), String(timestamp),
        ]
        return Array(parts.joined(separator: "\u{2063}").utf8)
    }

    /// Signs an offer as a developer's server does; tests and scenarios use it with the key they configured.
    public static func sign(
        key: P256.Signing.PrivateKey, bundleID: String, keyID: String, productID: String, offerID: String,
        appAccountToken: UUID?, nonce: UUID, timestamp: Int64
    ) throws -> PromotionalOfferSignature {
        let message = Self.message(
            bundleID: bundleID, keyID: keyID, productID: productID, offerID: offerID,
            appAccountToken: appAccountToken, nonce: nonce, timestamp: timestamp)
        let signature = try key.signature(for: message).derRepresentation.base64EncodedString()
        return PromotionalOfferSignature(
            offerID: offerID, keyID: keyID, nonce: nonce, timestamp: timestamp, signature: signature)
    }
}

/// A transaction as the store hands it out: its id and the signed JWS (and the payload it signs).
public struct IssuedTransaction: Hashable, Sendable {
    public let transactionID: String
    public let jws: String
    public let payload: TransactionPayload
}

/// An app receipt as the store hands it out: the DER PKCS#7 bytes and what they say.
public struct IssuedReceipt: Hashable, Sendable {
    public let bytes: [UInt8]
    public let receipt: SignedReceipt
}

/// A purchase waiting for someone: a parent's approval (ask to buy) or the customer's action (interrupted purchase).
public struct PendingPurchase: Hashable, Sendable {
    public enum Reason: String, Hashable, Sendable, Codable {
        case askToBuy, interrupted
    }

    public let id: String
    public let reason: Reason
    public let accountID: String
    public let productID: String
    public let requestedAt: Date
}

/// What a purchase came to.
public enum PurchaseOutcome: Hashable, Sendable {
    /// The store charged the customer (or the customer already owned it); the transaction is unfinished until the app
    /// finishes it.
    case purchased(IssuedTransaction)
    /// Waiting for approval or for the customer; resolve it with the simulator.
    case pending(PendingPurchase)
    /// The customer dismissed the sheet; nothing happened.
    case userCancelled

    /// The transaction, when there is one.
    public var transaction: IssuedTransaction? {
        if case .purchased(let transaction) = self { transaction } else { nil }
    }
}

/// A product as a product request returns it: localized for the account's storefront, with the account's
/// introductory-offer eligibility.
public struct StoreProduct: Hashable, Sendable {
    public let id: String
    public let kind: ProductKind
    public let displayName: String
    public let description: String
    public let price: Decimal
    public let displayPrice: String
    public let subscriptionGroupID: String?
    public let subscriptionPeriod: SubscriptionPeriod?
    public let isFamilyShareable: Bool
    /// Whether this account would get the introductory offer if it bought now.
    public let isEligibleForIntroductoryOffer: Bool
}

/// The consumption information a developer's server sends when Apple asks about a refund request (the App Store
/// Server API's `ConsumptionRequest`); the simulator checks every field's range as Apple does.
public struct ConsumptionReport: Hashable, Sendable, Codable {
    /// Must be true: the customer consented to sharing the data.
    public var customerConsented: Bool
    /// 0 undeclared, 1 not consumed, 2 partially consumed, 3 fully consumed.
    public var consumptionStatus: Int
    /// 0 undeclared, 1 Apple platform, 2 non-Apple platform.
    public var platform: Int
    public var sampleContentProvided: Bool
    /// 0 delivered and working, 1 not delivered (quality issue), 2 wrong item, 3 server outage, 4 currency change,
    /// 5 other reason.
    public var deliveryStatus: Int
    /// 0-7 buckets of how long the account has existed.
    public var accountTenure: Int
    /// 0-7 buckets of time spent in the app.
    public var playTime: Int
    /// 0-7 buckets of money refunded / spent in the app.
    public var lifetimeDollarsRefunded: Int
    public var lifetimeDollarsPurchased: Int
    /// 0 undeclared, 1 active, 2 suspended, 3 terminated, 4 limited access.
    public var userStatus: Int
    /// 0 undeclared, 1 grant, 2 decline, 3 no preference.
    public var refundPreference: Int

    public init(
        customerConsented: Bool = true, consumptionStatus: Int = 0, platform: Int = 1,
        sampleContentProvided: Bool = false, deliveryStatus: Int = 0, accountTenure: Int = 0, playTime: Int = 0,
        lifetimeDollarsRefunded: Int = 0, lifetimeDollarsPurchased: Int = 0, userStatus: Int = 1,
        refundPreference: Int = 0
    ) {
        self.customerConsented = customerConsented
        self.consumptionStatus = consumptionStatus
        self.platform = platform
        self.sampleContentProvided = sampleContentProvided
        self.deliveryStatus = deliveryStatus
        self.accountTenure = accountTenure
        self.playTime = playTime
        self.lifetimeDollarsRefunded = lifetimeDollarsRefunded
        self.lifetimeDollarsPurchased = lifetimeDollarsPurchased
        self.userStatus = userStatus
        self.refundPreference = refundPreference
    }

    /// The first field out of Apple's range, if any.
    func invalidField() -> String? {
        let ranges: [(String, Int, ClosedRange<Int>)] = [
            ("consumptionStatus", consumptionStatus, 0...3), ("platform", platform, 0...2),
            ("deliveryStatus", deliveryStatus, 0...5), ("accountTenure", accountTenure, 0...7),
            ("playTime", playTime, 0...7), ("lifetimeDollarsRefunded", lifetimeDollarsRefunded, 0...7),
            ("lifetimeDollarsPurchased", lifetimeDollarsPurchased, 0...7), ("userStatus", userStatus, 0...4),
            ("refundPreference", refundPreference, 0...3),
        ]
        if !customerConsented { return "customerConsented" }
        return ranges.first { !$0.2.contains($0.1) }?.0
    }
}
