public import Foundation
public import IAPCatalog
public import IAPSignedData

/// What an app asks of an App Store, shaped like StoreKit 2's API so that a StoreKit backend on Apple platforms is a
/// thin adapter: every transaction comes back as the signed JWS the store issued, never as a decoded claim, so the
/// ``Store`` decides what to believe.
///
/// IAPStoreClientTesting's `SimulatorBackend` drives the local App Store in process, its `HTTPStoreBackend` the one a
/// running `iapkit serve` holds, over its `/simulator` API, with updates streamed as server-sent events.
public protocol StoreBackend: Sendable {
    /// The store's current moment (the device clock for a real store; the simulated clock for the simulator).
    func now() async throws(StoreError) -> Date

    /// `Product.products(for:)`: the products among `ids` the store sells, localized for the customer's storefront.
    func products(for ids: [String]) async throws(StoreError) -> [StoreProduct]

    /// `Product.purchase(options:)`.
    func purchase(_ request: PurchaseRequest) async throws(StoreError) -> BackendPurchaseResult

    /// `Transaction.updates`: first every unfinished transaction (the redelivery at launch), then each transaction
    /// issued or changed from now on (renewals, approvals, refunds, purchases on other devices). One call is one
    /// listener; it ends when the stream is dropped. Elements are signed transactions (JWS).
    func transactionUpdates() -> AsyncStream<String>

    /// Returns once every update stream asked for so far is live or has failed its first attempt. A remote store
    /// subscribes over the network; the ``Store`` waits for this before it reconciles at launch, so nothing that
    /// happens after launch slips between the two. A local store is subscribed at once.
    func updatesSubscribed() async

    /// `Transaction.all`: every transaction of the customer, signed, oldest first.
    func allTransactions() async throws(StoreError) -> [String]

    /// `Transaction.currentEntitlements`: the latest transaction of each product the customer has access to now,
    /// signed.
    func currentEntitlements() async throws(StoreError) -> [String]

    /// `Transaction.latest(for:)`: the latest transaction for the product, signed, or nil when there is none.
    func latestTransaction(for productID: String) async throws(StoreError) -> String?

    /// The offer-code sheet (`AppStore.presentOfferCodeRedeemSheet`). A code the store accepts grants a transaction,
    /// which arrives through ``transactionUpdates()``. On a device the customer types the code and StoreKit tells the
    /// app nothing more (`code` is not used; a refused code is shown in the sheet; whether StoreKit returns when the
    /// sheet is shown or when it closes is not documented). In tests `code` is what the customer types (nil: they
    /// close the sheet); the local App Store's own backends throw for a refused code.
    func redeemOfferCode(_ code: String?) async throws(StoreError)

    /// `Transaction.unfinished`: transactions the app has not finished, signed.
    func unfinishedTransactions() async throws(StoreError) -> [String]

    /// `Transaction.finish()`.
    func finish(transactionID: String) async throws(StoreError)

    /// `AppStore.sync()`: the customer signs in to the App Store (on a device, a system prompt), which sends this
    /// device the customer's transactions and a new app receipt; ``allTransactions()`` and ``appReceipt()`` read them
    /// afterwards. Apple asks that it run only when the customer asks for it: the ``Store`` calls it in
    /// ``Store/restore()`` and nowhere else.
    func sync() async throws(StoreError)

    /// `Product.SubscriptionInfo.status`: the signed renewal info of every subscription the customer sees.
    func subscriptionRenewalInfos() async throws(StoreError) -> [String]

    /// `AppTransaction.shared`: the signed app transaction of this device.
    func appTransaction() async throws(StoreError) -> String

    /// The app receipt on disk (`Bundle.main.appStoreReceiptURL`), nil when the device has none yet.
    func appReceipt() async throws(StoreError) -> [UInt8]?

    /// The identifier the receipt's device hash is made from (`identifierForVendor`).
    var deviceIdentifier: UUID { get }

    /// `Transaction.beginRefundRequest(for:in:)`.
    func requestRefund(transactionID: String) async throws(StoreError) -> RefundRequestStatus

    /// `AppStore.showManageSubscriptions(in:)`: where the customer manages subscriptions.
    func manageSubscriptions() async throws(StoreError) -> URL

    /// `Storefront.updates`: the customer's storefront (its country code) each time it changes; the ``Store``
    /// reloads its products then (prices and availability are per storefront).
    func storefrontChanges() -> AsyncStream<String>

    /// `PurchaseIntent.intents`: purchases the customer started on the App Store, which the ``Store`` completes.
    func purchaseIntents() -> AsyncStream<StorePurchaseIntent>
}

extension StoreBackend {
    /// A store in process is subscribed as soon as it is asked.
    public func updatesSubscribed() async {}

    /// A store whose storefront never changes.
    public func storefrontChanges() -> AsyncStream<String> { AsyncStream { $0.finish() } }

    /// A store where nobody buys from outside the app.
    public func purchaseIntents() -> AsyncStream<StorePurchaseIntent> { AsyncStream { $0.finish() } }
}

/// A purchase the customer started on the App Store (a promoted in-app purchase, or a win-back offer).
public struct StorePurchaseIntent: Hashable, Sendable {
    public var productID: String
    /// The win-back offer the customer chose, if any.
    public var winBackOfferID: String?

    public init(productID: String, winBackOfferID: String? = nil) {
        self.productID = productID
        self.winBackOfferID = winBackOfferID
    }
}

/// A product as the store sells it to this customer.
public struct StoreProduct: Hashable, Sendable, Codable {
    public var id: String
    public var kind: ProductKind
    public var displayName: String
    public var description: String
    public var price: Decimal
    /// The price as the customer's storefront writes it ("$2.99", "2,99 €").
    public var displayPrice: String
    public var subscriptionGroupID: String?
    /// The group's name as the store shows it.
    public var subscriptionGroupName: String?
    /// The service level within the group (1 is the highest), when the store says.
    public var subscriptionLevel: Int?
    public var subscriptionPeriod: SubscriptionPeriod?
    public var isFamilyShareable: Bool
    /// The store's own word on introductory-offer eligibility (the ``Store`` answers from the engine instead).
    public var storeSaysEligibleForIntroductoryOffer: Bool
    /// A subscription's introductory offer, whoever may take it.
    public var introductoryOffer: SubscriptionOffer?
    /// A subscription's promotional offers (signed by the app's key to be taken).
    public var promotionalOffers: [SubscriptionOffer]
    /// A subscription's win-back offers (for customers whose subscription ended).
    public var winBackOffers: [SubscriptionOffer]

    public init(
        id: String, kind: ProductKind, displayName: String, description: String, price: Decimal,
        displayPrice: String, subscriptionGroupID: String? = nil, subscriptionGroupName: String? = nil,
        subscriptionLevel: Int? = nil, subscriptionPeriod: SubscriptionPeriod? = nil, isFamilyShareable: Bool = false,
        storeSaysEligibleForIntroductoryOffer: Bool = false, introductoryOffer: SubscriptionOffer? = nil,
        promotionalOffers: [SubscriptionOffer] = [], winBackOffers: [SubscriptionOffer] = []
    ) {
        self.introductoryOffer = introductoryOffer
        self.promotionalOffers = promotionalOffers
        self.winBackOffers = winBackOffers
        self.id = id
        self.kind = kind
        self.displayName = displayName
        self.description = description
        self.price = price
        self.displayPrice = displayPrice
        self.subscriptionGroupID = subscriptionGroupID
        self.subscriptionGroupName = subscriptionGroupName
        self.subscriptionLevel = subscriptionLevel
        self.subscriptionPeriod = subscriptionPeriod
        self.isFamilyShareable = isFamilyShareable
        self.storeSaysEligibleForIntroductoryOffer = storeSaysEligibleForIntroductoryOffer
    }
}

/// One purchase as the app asks for it (`Product.PurchaseOption`s).
public struct PurchaseRequest: Hashable, Sendable {
    public var productID: String
    public var quantity: Int
    public var appAccountToken: UUID?
    /// The offer the customer takes, at most one.
    public var offer: PurchaseOffer?
    /// The developer's signed word on introductory-offer eligibility (a compact JWS,
    /// `Product.PurchaseOption.introductoryOfferEligibility(compactJWS:)`).
    public var introductoryOfferEligibility: String?

    public init(
        productID: String, quantity: Int = 1, appAccountToken: UUID? = nil, offer: PurchaseOffer? = nil,
        introductoryOfferEligibility: String? = nil
    ) {
        self.productID = productID
        self.quantity = quantity
        self.appAccountToken = appAccountToken
        self.offer = offer
        self.introductoryOfferEligibility = introductoryOfferEligibility
    }
}

/// An offer taken with a purchase: StoreKit's promotional offer (signed by the developer's server, the older
/// signature or a compact JWS) or a win-back offer.
public enum PurchaseOffer: Hashable, Sendable {
    /// `Product.PurchaseOption.promotionalOffer(offerID:keyID:nonce:signature:timestamp:)`.
    case promotional(PromotionalOffer)
    /// `Product.PurchaseOption.promotionalOffer(_:compactJWS:)`: the offer's id and its compact JWS.
    case promotionalJWS(offerID: String, compactJWS: String)
    /// `Product.PurchaseOption.winBackOffer(_:)`: the id of one of the product's win-back offers.
    case winBack(offerID: String)
}

/// What the store answered a purchase with (`Product.PurchaseResult`), before any verification.
public enum BackendPurchaseResult: Hashable, Sendable {
    /// The store issued a transaction: its JWS.
    case success(signedTransaction: String)
    /// Waiting for a parent's approval or the customer's action; the transaction, if any, comes through updates.
    case pending
    /// The customer dismissed the purchase sheet.
    case userCancelled
}

/// What a refund request came to (`Transaction.RefundRequestStatus`).
public enum RefundRequestStatus: String, Hashable, Sendable, Codable {
    /// The request reached Apple; the decision arrives later as a revocation through updates.
    case success
    /// The customer dismissed the sheet.
    case userCancelled
}
