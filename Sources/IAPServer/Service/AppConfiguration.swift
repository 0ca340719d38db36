public import Foundation
public import IAPCatalog
public import IAPServerAPI
public import IAPSignedData
public import IAPTrust

/// One app the server validates for.
public struct AppConfiguration: Sendable {
    /// The bundle id every document must name.
    public var bundleID: String
    /// The app's Apple id (required when Production is accepted).
    public var appAppleID: Int64?
    /// The environments documents may come from.
    public var environments: Set<AppStoreEnvironment>
    /// The roots documents must chain to (Apple's, or the simulator's), and any Xcode certificates accepted.
    public var trustStore: TrustStore
    /// The app-specific shared secret `/verifyReceipt` requires as `password`, when set.
    public var sharedSecret: String?
    /// The products, so the entitlement engine knows each one's kind and subscription group.
    public var catalog: Catalog?
    /// Notifications signed longer ago than this are refused (a replay); Apple retries for at most three days.
    public var maximumNotificationAge: TimeInterval
    /// The App Store Server API client `POST /v1/customers/{id}/refresh` catches up with, when configured.
    public var serverAPI: ServerAPIClient?
    /// The app's keys (``AccessKey``): with any, posting a document of this app needs one of them (or a server-wide
    /// key); without, posting is open as Apple's signature is the only credential a document needs.
    public var accessKeys: [AccessKey] = []
    /// Where the app's events go (``Webhooks``), when anywhere: with none, writes announce nothing and cost nothing
    /// for events.
    public var webhooks: Webhooks?
    /// What happens when a customer claims a purchase another customer holds (``TransferPolicy``; refused by default).
    public var transferPolicy: TransferPolicy = .refuse
    /// How the app answers Apple's consumption requests (``ConsumptionAnswers``), when it does: answers need the App
    /// Store Server API key (``serverAPI``) and the customer's consent.
    public var consumptionAnswers: ConsumptionAnswers?

    public init(
        bundleID: String, appAppleID: Int64? = nil, environments: Set<AppStoreEnvironment> = [.production, .sandbox],
        trustStore: TrustStore, sharedSecret: String? = nil, catalog: Catalog? = nil,
        maximumNotificationAge: TimeInterval = 4 * 86_400
    ) {
        self.bundleID = bundleID
        self.appAppleID = appAppleID
        self.environments = environments
        self.trustStore = trustStore
        self.sharedSecret = sharedSecret
        self.catalog = catalog
        self.maximumNotificationAge = maximumNotificationAge
    }
}

/// An app's webhooks: each endpoint receives every event of the app (``OutboundEventType``), at least once and, per
/// customer, in order, each signed with the secret (`WebhookSignature` in IAPSignedData).
public struct Webhooks: Hashable, Sendable {
    /// The endpoints (http or https URLs).
    public var endpoints: [String]
    /// The HMAC key deliveries are signed with; receivers hold the same.
    public var secret: String

    public init(endpoints: [String], secret: String) {
        self.endpoints = endpoints
        self.secret = secret
    }
}

/// What the server tells Apple when a customer asks for a refund (a CONSUMPTION_REQUEST notification): the figures it
/// knows (how much of the purchase was used, that it was delivered) with the app's own settings below, sent through
/// the App Store Server API before Apple's deadline.
public struct ConsumptionAnswers: Hashable, Sendable {
    /// The app's customers agreed to share consumption data with Apple (their terms say so). Apple refuses answers
    /// without it, so none is sent unless it is true.
    public var customerConsented: Bool
    /// What the app would like Apple to decide, if anything.
    public var refundPreference: AppStoreServerAPI.ConsumptionRequest.RefundPreference?
    /// The app gives a free sample or trial of what it sells.
    public var sampleContentProvided: Bool
    /// How long after the request Apple takes an answer (12 hours).
    public var deadline: TimeInterval

    public init(
        customerConsented: Bool, refundPreference: AppStoreServerAPI.ConsumptionRequest.RefundPreference? = nil,
        sampleContentProvided: Bool = false, deadline: TimeInterval = 12 * 3_600
    ) {
        self.customerConsented = customerConsented
        self.refundPreference = refundPreference
        self.sampleContentProvided = sampleContentProvided
        self.deadline = deadline
    }
}
