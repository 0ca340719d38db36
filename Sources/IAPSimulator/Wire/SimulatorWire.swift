public import Foundation
public import IAPCatalog
public import IAPCore
import IAPEntitlements
public import IAPSignedData

/// The JSON of `/simulator`, `iapkit serve`'s control plane for the local App Store: one Codable type per shape, which
/// the server encodes (answers) and decodes (request bodies), and a client (the HTTP store backend, a test) decodes and
/// encodes. Dates are ISO 8601 in UTC with milliseconds.
public enum SimulatorWire {
    // MARK: - Answers

    /// `GET /simulator`: the store at a glance.
    public struct State: Codable, Hashable, Sendable {
        public var bundleId: String
        public var environment: String
        public var now: Date
        public var accounts: [String]
        public var productIds: [String]
        public var pendingPurchases: [Pending]
        public var notifications: Int
        public var transactions: Int
    }

    /// `GET/PUT /simulator/clock`.
    public struct Clock: Codable, Hashable, Sendable {
        public var now: Date
        /// Absent for a clock that moves only when told.
        public var paused: Bool?
        /// Simulated seconds per wall-clock second; absent for a clock that moves only when told.
        public var speed: Double?
    }

    /// `POST /simulator/clock/advance` and `/clock/jump`: the moment after the move.
    public struct Now: Codable, Hashable, Sendable {
        public var now: Date
        public init(now: Date) { self.now = now }
    }

    /// A purchase waiting for a parent's approval or the customer's action.
    public struct Pending: Codable, Hashable, Sendable {
        public var id: String
        /// `askToBuy` or `interrupted`.
        public var reason: String
        public var accountId: String
        public var productId: String
        public var requestedAt: Date
    }

    /// One transaction as the store keeps it, with its signed form.
    public struct Transaction: Codable, Hashable, Sendable {
        public var transactionId: String
        public var originalTransactionId: String?
        public var productId: String?
        public var purchaseDate: Date?
        public var expiresDate: Date?
        public var revocationDate: Date?
        /// The order id the customer's emailed receipt shows (the App Store Server API's order lookup takes it).
        public var orderId: String?
        /// The signed transaction, ready for `POST /v1/transactions`.
        public var signedTransaction: String
    }

    /// `{"transactions": [...]}`: an account's transactions, unfinished ones, current entitlements, a sync.
    public struct Transactions: Codable, Hashable, Sendable {
        public var transactions: [Transaction]
        /// The signed transactions, in order.
        public var signed: [String] { transactions.map(\.signedTransaction) }
    }

    /// `GET /simulator/accounts/{account}`.
    public struct Account: Codable, Hashable, Sendable {
        public var accountId: String
        public var storefront: String
        public var askToBuy: Bool
        /// Renewals fail, as with an expired card.
        public var billingFails: Bool
        public var familyId: String?
        /// The token the account's purchases carry, when it has one: the validation server's customer id.
        public var appAccountToken: String?
        public var deviceIds: [String]
        public var entitledProductIds: [String]
        public var consumablesPurchased: [String: Int]
        /// The account's subscriptions, one per group.
        public var subscriptions: [Subscription]
        public var transactions: [Transaction]
    }

    /// `POST /simulator/accounts` (and `.../devices`, where `accountId` is absent): the device signed in.
    public struct SignedIn: Codable, Hashable, Sendable {
        public var accountId: String?
        public var deviceId: String
        public init(accountId: String? = nil, deviceId: String) {
            self.accountId = accountId
            self.deviceId = deviceId
        }
    }

    /// One subscription group of an account, as the store sees it.
    public struct Subscription: Codable, Hashable, Sendable {
        public var groupId: String
        public var groupName: String?
        /// `subscribed`, `inGracePeriod`, `inBillingRetry`, `expired` or `revoked`.
        public var state: String
        public var productId: String
        public var expiresDate: Date
        public var willAutoRenew: Bool
        /// The product the next renewal brings (another level after an upgrade or a downgrade), while auto-renew is on.
        public var renewsToProductId: String?
        public var gracePeriodExpiresDate: Date?
        public var isFamilyShared: Bool
        public var originalTransactionId: String
    }

    /// One product as an account sees it.
    public struct Product: Codable, Hashable, Sendable {
        public var id: String
        /// A `ProductKind` (IAPCatalog) raw value.
        public var kind: String
        public var displayName: String
        public var description: String
        public var price: Decimal
        public var displayPrice: String
        public var subscriptionGroupId: String?
        public var subscriptionGroupName: String?
        /// The service level in its group: 1 is the highest (upgrades move towards 1).
        public var subscriptionGroupLevel: Int?
        /// ISO 8601 (`P1M`), for subscriptions.
        public var subscriptionPeriod: String?
        public var isFamilyShareable: Bool
        public var isEligibleForIntroductoryOffer: Bool
        /// A subscription's offers, as the catalog has them.
        public var introductoryOffer: SubscriptionOffer?
        public var promotionalOffers: [SubscriptionOffer]?
        public var winBackOffers: [SubscriptionOffer]?
    }

    /// `{"products": [...]}`.
    public struct Products: Codable, Hashable, Sendable {
        public var products: [Product]
    }

    /// `POST .../purchases` and `POST /simulator/pending/{id}/approve`.
    public struct PurchaseResult: Codable, Hashable, Sendable {
        /// `purchased`, `pending` or `userCancelled`.
        public var outcome: String
        public var transaction: Transaction?
        public var pending: Pending?
    }

    /// `GET .../renewal-info`: the signed renewal information of each subscription group.
    public struct RenewalInfos: Codable, Hashable, Sendable {
        public var signedRenewalInfo: [String]
        public init(signedRenewalInfo: [String]) { self.signedRenewalInfo = signedRenewalInfo }
    }

    /// `GET .../app-transaction`.
    public struct AppTransaction: Codable, Hashable, Sendable {
        public var signedAppTransaction: String
        public init(signedAppTransaction: String) { self.signedAppTransaction = signedAppTransaction }
    }

    /// `GET .../receipt`: the device's app receipt, base64.
    public struct Receipt: Codable, Hashable, Sendable {
        public var receiptData: String
        public init(receiptData: String) { self.receiptData = receiptData }
    }

    /// One notification the store sent, with what the server answered it.
    public struct Notification: Codable, Hashable, Sendable {
        public var index: Int
        public var notificationUUID: String
        public var notificationType: String
        public var subtype: String?
        public var signedDate: Date
        /// Absent for notifications about no customer (TEST, a mass extension's SUMMARY).
        public var accountId: String?
        public var transactionId: String?
        /// What this server answered each time the notification reached it (`SUCCESS`, or
        /// `UNSUCCESSFUL_HTTP_RESPONSE_CODE` when it refused it), oldest first.
        public var serverAnswers: [NotificationSendAttempt]
        public var signedPayload: String
    }

    /// `GET /simulator/notifications?since=N`: a page of at most 500.
    public struct Notifications: Codable, Hashable, Sendable {
        public var notifications: [Notification]
        /// The `since` that asks for what comes after this page.
        public var next: Int
    }

    /// What an action on one transaction or pending purchase answers: its id under the action's name
    /// (`{"finished": id}`, `{"refunded": id}`, `{"refundRequested": id}`, `{"declined": id}`).
    public struct Done: Codable, Hashable, Sendable {
        public var finished: String?
        public var refunded: String?
        public var refundRequested: String?
        public var declined: String?

        public init(
            finished: String? = nil, refunded: String? = nil, refundRequested: String? = nil,
            declined: String? = nil
        ) {
            self.finished = finished
            self.refunded = refunded
            self.refundRequested = refundRequested
            self.declined = declined
        }
    }

    // MARK: - Request bodies

    /// `POST /simulator/accounts`.
    public struct OpenAccount: Codable, Hashable, Sendable {
        public enum CodingKeys: String, CodingKey, CaseIterable {
            case accountId, storefront, askToBuy, appAccountToken
        }

        /// 1 to 64 letters, digits, `-` or `_`.
        public var accountId: String
        /// Three letters; `USA` when absent.
        public var storefront: String?
        public var askToBuy: Bool?
        /// A UUID every purchase of the account carries.
        public var appAccountToken: String?

        public init(accountId: String, storefront: String? = nil, askToBuy: Bool? = nil, appAccountToken: String? = nil)
        {
            self.accountId = accountId
            self.storefront = storefront
            self.askToBuy = askToBuy
            self.appAccountToken = appAccountToken
        }
    }

    /// `POST /simulator/accounts/{account}/purchases`: StoreKit's purchase options, and what the customer does at
    /// the sheet. At most one offer.
    public struct Purchase: Codable, Hashable, Sendable {
        public enum CodingKeys: String, CodingKey, CaseIterable {
            case productId, deviceId, quantity, appAccountToken, interrupted, userCancels, promotionalOffer,
                promotionalOfferV2, introductoryOfferEligibility, winBackOfferId
        }

        public var productId: String
        /// A UUID; the account's first device when absent.
        public var deviceId: String?
        /// 1 to 10.
        public var quantity: Int64?
        /// A UUID.
        public var appAccountToken: String?
        /// The customer must act outside the app: the purchase waits.
        public var interrupted: Bool?
        /// The customer dismisses the sheet.
        public var userCancels: Bool?
        public var promotionalOffer: PromotionalOffer?
        /// A promotional offer V2 signature (compact JWS).
        public var promotionalOfferV2: String?
        /// A signed introductory offer eligibility (compact JWS).
        public var introductoryOfferEligibility: String?
        public var winBackOfferId: String?

        public init(
            productId: String, deviceId: String? = nil, quantity: Int64? = nil, appAccountToken: String? = nil,
            interrupted: Bool? = nil, userCancels: Bool? = nil, promotionalOffer: PromotionalOffer? = nil,
            promotionalOfferV2: String? = nil, introductoryOfferEligibility: String? = nil,
            winBackOfferId: String? = nil
        ) {
            self.productId = productId
            self.deviceId = deviceId
            self.quantity = quantity
            self.appAccountToken = appAccountToken
            self.interrupted = interrupted
            self.userCancels = userCancels
            self.promotionalOffer = promotionalOffer
            self.promotionalOfferV2 = promotionalOfferV2
            self.introductoryOfferEligibility = introductoryOfferEligibility
            self.winBackOfferId = winBackOfferId
        }
    }

    /// `POST .../offer-codes`.
    public struct OfferCode: Codable, Hashable, Sendable {
        public enum CodingKeys: String, CodingKey, CaseIterable {
            case code
        }

        public var code: String
        public init(code: String) { self.code = code }
    }

    /// `POST .../auto-renew`.
    public struct AutoRenew: Codable, Hashable, Sendable {
        public enum CodingKeys: String, CodingKey, CaseIterable {
            case groupId, enabled
        }

        public var groupId: String
        public var enabled: Bool
        public init(groupId: String, enabled: Bool) {
            self.groupId = groupId
            self.enabled = enabled
        }
    }

    /// `POST .../billing-issue`.
    public struct BillingIssue: Codable, Hashable, Sendable {
        public enum CodingKeys: String, CodingKey, CaseIterable {
            case failing
        }

        public var failing: Bool
        public init(failing: Bool) { self.failing = failing }
    }

    /// `PUT .../family`.
    public struct Family: Codable, Hashable, Sendable {
        public enum CodingKeys: String, CodingKey, CaseIterable {
            case familyId
        }

        /// At most 64 characters.
        public var familyId: String
        public init(familyId: String) { self.familyId = familyId }
    }

    /// `POST /simulator/transactions/{id}/refund`.
    public struct Refund: Codable, Hashable, Sendable {
        public enum CodingKeys: String, CodingKey, CaseIterable {
            case percentage
        }

        /// 1 to 100; a full refund when absent.
        public var percentage: Int64?
        public init(percentage: Int64? = nil) { self.percentage = percentage }
    }

    /// `POST /simulator/transactions/{id}/refund-request`.
    public struct RefundRequest: Codable, Hashable, Sendable {
        public enum CodingKeys: String, CodingKey, CaseIterable {
            case reason
        }

        /// A consumption request reason; `UNINTENDED_PURCHASE` when absent.
        public var reason: String?
        public init(reason: String? = nil) { self.reason = reason }
    }

    /// `PUT /simulator/clock`: at least one of the two.
    public struct ClockSetting: Codable, Hashable, Sendable {
        public enum CodingKeys: String, CodingKey, CaseIterable {
            case paused, speed
        }

        public var paused: Bool?
        public var speed: Double?
        public init(paused: Bool? = nil, speed: Double? = nil) {
            self.paused = paused
            self.speed = speed
        }
    }

    /// `POST /simulator/clock/advance`.
    public struct Advance: Codable, Hashable, Sendable {
        public enum CodingKeys: String, CodingKey, CaseIterable {
            case seconds
        }

        /// 1 second to 5 years.
        public var seconds: Int64
        public init(seconds: Int64) { self.seconds = seconds }
    }

    /// `POST /simulator/clock/jump`.
    public struct Jump: Codable, Hashable, Sendable {
        public enum CodingKeys: String, CodingKey, CaseIterable {
            case date
        }

        /// ISO 8601, like `2027-01-31T09:00:00Z`.
        public var date: String
        public init(date: String) { self.date = date }
    }

    /// `PUT /simulator/inapps/rate-limit`, and its answer.
    public struct RateLimit: Codable, Hashable, Sendable {
        public enum CodingKeys: String, CodingKey, CaseIterable {
            case requests, windowSeconds
        }

        /// 0 to 1,000,000 calls in each window.
        public var requests: Int64
        /// 1 to 3600.
        public var windowSeconds: Int64
        public init(requests: Int64, windowSeconds: Int64) {
            self.requests = requests
            self.windowSeconds = windowSeconds
        }
    }

    /// A request with nothing to say: `{}`.
    public struct Empty: Codable, Hashable, Sendable {
        public init() {}
    }

    /// `PATCH /simulator/accounts/{account}`: what to change of an account's setup (at least one member).
    public struct AccountSettings: Codable, Hashable, Sendable {
        public enum CodingKeys: String, CodingKey, CaseIterable {
            case askToBuy, storefront
        }

        public var askToBuy: Bool?
        /// ISO 3166-1 alpha-3, like `FRA`.
        public var storefront: String?
        public init(askToBuy: Bool? = nil, storefront: String? = nil) {
            self.askToBuy = askToBuy
            self.storefront = storefront
        }
    }

    /// `PUT /simulator/failures/{operation}`: every later call of the operation fails with this code.
    public struct Failure: Codable, Hashable, Sendable {
        public enum CodingKeys: String, CodingKey, CaseIterable {
            case code
        }

        /// A StoreKit error code, like `networkError` or `systemError`.
        public var code: String
        public init(code: String) { self.code = code }
    }

    /// `GET /simulator/failures`: the failing operations and their codes.
    public struct Failures: Codable, Hashable, Sendable {
        public var failures: [String: String]
        public init(failures: [String: String]) { self.failures = failures }
    }

    /// `GET /simulator/trust`: the app the store sells for and the roots it signs under, what a device verifies
    /// against.
    public struct Trust: Codable, Hashable, Sendable {
        public var bundleId: String
        public var appAppleId: Int64
        /// `Sandbox`, `Production` or `Xcode`.
        public var environment: String
        /// Base64 of each root certificate (DER): the receipts' root, then the signed data's.
        public var rootCertificates: [String]
        public init(bundleId: String, appAppleId: Int64, environment: String, rootCertificates: [String]) {
            self.bundleId = bundleId
            self.appAppleId = appAppleId
            self.environment = environment
            self.rootCertificates = rootCertificates
        }
    }
}

// MARK: - Members a server accepts

extension SimulatorWire.OpenAccount: KnownFields { public typealias Fields = CodingKeys }
extension SimulatorWire.Purchase: KnownFields {
    public typealias Fields = CodingKeys
    public static var objectFields: [String: Set<String>] { ["promotionalOffer": PromotionalOffer.fields] }
}
extension SimulatorWire.OfferCode: KnownFields { public typealias Fields = CodingKeys }
extension SimulatorWire.AutoRenew: KnownFields { public typealias Fields = CodingKeys }
extension SimulatorWire.BillingIssue: KnownFields { public typealias Fields = CodingKeys }
extension SimulatorWire.Family: KnownFields { public typealias Fields = CodingKeys }
extension SimulatorWire.Refund: KnownFields { public typealias Fields = CodingKeys }
extension SimulatorWire.RefundRequest: KnownFields { public typealias Fields = CodingKeys }
extension SimulatorWire.ClockSetting: KnownFields { public typealias Fields = CodingKeys }
extension SimulatorWire.Advance: KnownFields { public typealias Fields = CodingKeys }
extension SimulatorWire.Jump: KnownFields { public typealias Fields = CodingKeys }
extension SimulatorWire.RateLimit: KnownFields { public typealias Fields = CodingKeys }
extension SimulatorWire.AccountSettings: KnownFields { public typealias Fields = CodingKeys }
extension SimulatorWire.Failure: KnownFields { public typealias Fields = CodingKeys }
extension SimulatorWire.Empty: KnownFields {
    /// No members at all.
    public enum Fields: CodingKey, CaseIterable {
        public var stringValue: String { switch self {} }
        public init?(stringValue: String) { nil }
        public var intValue: Int? { nil }
        public init?(intValue: Int) { nil }
    }
}
