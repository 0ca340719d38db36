public import Foundation
import IAPCatalog
import IAPCore
import IAPSignedData
import IAPStoreClient

/// StoreKit's `Product`: an in-app purchase as the store sells it to this customer.
public struct Product: Identifiable, Hashable, Sendable {
    public let id: String
    public let type: Product.ProductType
    public let displayName: String
    public let description: String
    public let price: Decimal
    public let displayPrice: String
    public let isFamilyShareable: Bool
    /// Subscription details, for auto-renewable subscriptions.
    public let subscription: Product.SubscriptionInfo?

    /// The product's JSON, as a client sees it.
    public var jsonRepresentation: Data {
        let object: [String: Any] = [
            "id": id, "type": type.rawValue, "displayName": displayName, "description": description,
            "price": "\(price)", "displayPrice": displayPrice, "isFamilyShareable": isFamilyShareable,
        ]
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    }

    init(_ product: StoreProduct) {
        id = product.id
        type = ProductType(product.kind)
        displayName = product.displayName
        description = product.description
        price = product.price
        displayPrice = product.displayPrice
        isFamilyShareable = product.isFamilyShareable
        subscription = product.kind == .autoRenewable ? SubscriptionInfo(product) : nil
    }

    /// The products among `identifiers` the store sells (unknown ones are left out, duplicates ignored).
    public static func products<Identifiers: Collection>(for identifiers: Identifiers) async throws -> [Product]
    where Identifiers.Element == String {
        let session = try StoreKitSession.current()
        var seen: Set<String> = []
        let ids = identifiers.filter { seen.insert($0).inserted }
        do {
            return try await session.backend.products(for: ids).map { Product($0) }
        } catch {
            throw StoreKitError(error)
        }
    }

    /// Buys the product: `.success` with the verified transaction (which the app must finish after delivering it),
    /// `.pending` (ask to buy, or the customer must act), or `.userCancelled`. Throws `PurchaseError` or
    /// `StoreKitError`.
    @MainActor public func purchase(options: Set<Product.PurchaseOption> = []) async throws -> Product.PurchaseResult {
        let session = try StoreKitSession.current()
        var request = PurchaseRequest(productID: id)
        for option in options {
            switch option.kind {
            case .appAccountToken(let token): request.appAccountToken = token
            case .quantity(let quantity): request.quantity = quantity
            case .promotionalOffer(let offer): request.offer = .promotional(offer)
            case .promotionalOfferJWS(let id, let jws): request.offer = .promotionalJWS(offerID: id, compactJWS: jws)
            case .winBackOffer(let id): request.offer = .winBack(offerID: id)
            case .introductoryOfferEligibility(let jws): request.introductoryOfferEligibility = jws
            case .simulatesAskToBuy, .onStorefrontChange, .custom: break
            }
        }
        let result: BackendPurchaseResult
        do { result = try await session.backend.purchase(request) } catch { throw Product.PurchaseError.from(error) }
        switch result {
        case .success(let jws):
            guard let verified = await session.verifiedTransaction(jws) else { throw StoreKitError.unknown }
            return .success(verified)
        case .pending: return .pending
        case .userCancelled: return .userCancelled
        }
    }

    /// StoreKit's `Product.PurchaseResult`.
    public enum PurchaseResult: Sendable {
        case success(VerificationResult<Transaction>)
        case userCancelled
        case pending
    }

    /// StoreKit's `Product.PurchaseError`.
    public enum PurchaseError: Error, Sendable, Hashable {
        case invalidQuantity
        case productUnavailable
        case purchaseNotAllowed
        case ineligibleForOffer
        case invalidOfferIdentifier
        case invalidOfferPrice
        case invalidOfferSignature
        case missingOfferParameters

        /// The store's refusal as StoreKit reports it: a purchase error when it is one, else a `StoreKitError`.
        static func from(_ error: StoreError) -> any Error {
            switch error.code.rawValue {
            case "invalidQuantity": Product.PurchaseError.invalidQuantity
            case "productUnavailable", "unknownProduct": Product.PurchaseError.productUnavailable
            case "purchaseNotAllowed": Product.PurchaseError.purchaseNotAllowed
            case "ineligibleForOffer": Product.PurchaseError.ineligibleForOffer
            case "invalidOfferIdentifier": Product.PurchaseError.invalidOfferIdentifier
            case "invalidOfferPrice": Product.PurchaseError.invalidOfferPrice
            case "invalidOfferSignature": Product.PurchaseError.invalidOfferSignature
            case "missingOfferParameters": Product.PurchaseError.missingOfferParameters
            default: StoreKitError(error)
            }
        }
    }

    /// What kind of product: a struct of static values, as StoreKit's (a `switch` needs a `default`).
    public struct ProductType: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let consumable = ProductType(rawValue: "Consumable")
        public static let nonConsumable = ProductType(rawValue: "Non-Consumable")
        public static let nonRenewable = ProductType(rawValue: "Non-Renewing Subscription")
        public static let autoRenewable = ProductType(rawValue: "Auto-Renewable Subscription")

        init(_ kind: ProductKind) {
            switch kind {
            case .consumable: self = .consumable
            case .nonConsumable: self = .nonConsumable
            case .nonRenewable: self = .nonRenewable
            case .autoRenewable: self = .autoRenewable
            }
        }

        public var localizedDescription: String {
            switch self {
            case .consumable: "Consumable"
            case .nonConsumable: "Non-Consumable"
            case .nonRenewable: "Non-Renewing Subscription"
            case .autoRenewable: "Auto-Renewable Subscription"
            default: rawValue
            }
        }
    }

    /// StoreKit's `Product.PurchaseOption`: made only through its static functions.
    public struct PurchaseOption: Hashable, Sendable {
        enum Kind: Hashable, Sendable {
            case appAccountToken(UUID)
            case quantity(Int)
            case promotionalOffer(PromotionalOffer)
            case promotionalOfferJWS(offerID: String, compactJWS: String)
            case introductoryOfferEligibility(String)
            case winBackOffer(String)
            case simulatesAskToBuy(Bool)
            case onStorefrontChange
            case custom(String, String)
        }

        let kind: Kind

        /// The token the transaction carries (the app's id for the customer).
        public static func appAccountToken(_ token: UUID) -> PurchaseOption {
            PurchaseOption(kind: .appAccountToken(token))
        }

        /// How many to buy (consumables).
        public static func quantity(_ quantity: Int) -> PurchaseOption { PurchaseOption(kind: .quantity(quantity)) }

        /// A promotional offer signed by the developer's server (signature: the DER ECDSA bytes; timestamp in ms).
        public static func promotionalOffer(
            offerID: String, keyID: String, nonce: UUID, signature: Data, timestamp: Int
        ) -> PurchaseOption {
            PurchaseOption(
                kind: .promotionalOffer(
                    PromotionalOffer(
                        offerID: offerID, keyID: keyID, nonce: nonce, timestamp: Int64(timestamp),
                        signature: signature.base64EncodedString())))
        }

        /// A promotional offer signed by the developer's server (a `Product.SubscriptionOffer.Signature`).
        public static func promotionalOffer(offerID: String, signature: Product.SubscriptionOffer.Signature)
            -> PurchaseOption
        {
            promotionalOffer(
                offerID: offerID, keyID: signature.keyID, nonce: signature.nonce, signature: signature.signature,
                timestamp: signature.timestamp)
        }

        /// A promotional offer signed by the developer's server as a compact JWS (`aud` "promotional-offer"). As
        /// StoreKit's, it returns the options to pass (one here).
        public static func promotionalOffer(_ offerID: String, compactJWS: String) -> [PurchaseOption] {
            [PurchaseOption(kind: .promotionalOfferJWS(offerID: offerID, compactJWS: compactJWS))]
        }

        /// The developer's signed word on whether the customer may take the introductory offer (a compact JWS, `aud`
        /// "introductory-offer-eligibility"); the store applies the offer or not as it says.
        public static func introductoryOfferEligibility(compactJWS: String) -> PurchaseOption {
            PurchaseOption(kind: .introductoryOfferEligibility(compactJWS))
        }

        /// One of the product's win-back offers (`SubscriptionInfo.winBackOffers`), for a customer whose subscription
        /// lapsed.
        public static func winBackOffer(_ offer: Product.SubscriptionOffer) -> PurchaseOption {
            PurchaseOption(kind: .winBackOffer(offer.id ?? ""))
        }

        /// Whether to go on when the storefront changes during the purchase. The local App Store never changes a
        /// storefront in the middle of a purchase, so the closure is never called (the purchase goes on).
        public static func onStorefrontChange(shouldContinuePurchase: @escaping @Sendable (Storefront) -> Bool)
            -> PurchaseOption
        {
            PurchaseOption(kind: .onStorefrontChange)
        }

        /// Ask to buy in the sandbox: a no-op here (the session's account settings decide; see `StoreKitSession`).
        public static func simulatesAskToBuyInSandbox(_ simulateAskToBuy: Bool) -> PurchaseOption {
            PurchaseOption(kind: .simulatesAskToBuy(simulateAskToBuy))
        }

        /// A custom option; carried, not interpreted.
        public static func custom(key: String, value: String) -> PurchaseOption {
            PurchaseOption(kind: .custom(key, value))
        }
        public static func custom(key: String, value: Double) -> PurchaseOption {
            PurchaseOption(kind: .custom(key, "\(value)"))
        }
        public static func custom(key: String, value: Data) -> PurchaseOption {
            PurchaseOption(kind: .custom(key, value.base64EncodedString()))
        }
    }

    /// A subscription period: a number of days, weeks, months or years.
    public struct SubscriptionPeriod: Hashable, Sendable {
        public let value: Int
        public let unit: Product.SubscriptionPeriod.Unit

        public enum Unit: Hashable, Sendable {
            case day, week, month, year
        }

        init(_ period: IAPCatalog.SubscriptionPeriod) {
            value = period.value
            unit =
                switch period.unit {
                case .day: .day
                case .week: .week
                case .month: .month
                case .year: .year
                }
        }

        init?(iso8601 text: String) {
            guard let period = IAPCatalog.SubscriptionPeriod(iso8601: text) else { return nil }
            self.init(period)
        }
    }

    /// A subscription offer: introductory, promotional or win-back.
    public struct SubscriptionOffer: Hashable, Sendable {
        public let id: String?
        public let type: Product.SubscriptionOffer.OfferType
        public let price: Decimal
        public let displayPrice: String
        public let period: Product.SubscriptionPeriod
        public let periodCount: Int
        public let paymentMode: Product.SubscriptionOffer.PaymentMode

        /// Introductory, promotional or win-back.
        public struct OfferType: RawRepresentable, Hashable, Sendable {
            public let rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            public static let introductory = OfferType(rawValue: "introductory")
            public static let promotional = OfferType(rawValue: "promotional")
            public static let winBack = OfferType(rawValue: "winBack")
        }

        /// A promotional offer's signature from the developer's server (`timestamp` in milliseconds).
        public struct Signature: Hashable, Sendable {
            public var keyID: String
            public var nonce: UUID
            public var timestamp: Int
            public var signature: Data

            public init(keyID: String, nonce: UUID, timestamp: Int, signature: Data) {
                self.keyID = keyID
                self.nonce = nonce
                self.timestamp = timestamp
                self.signature = signature
            }
        }

        /// Free trial, pay as you go or pay up front.
        public struct PaymentMode: RawRepresentable, Hashable, Sendable {
            public let rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            public static let freeTrial = PaymentMode(rawValue: "freeTrial")
            public static let payAsYouGo = PaymentMode(rawValue: "payAsYouGo")
            public static let payUpFront = PaymentMode(rawValue: "payUpFront")
        }

        init(_ offer: IAPCatalog.SubscriptionOffer, type: OfferType) {
            id = offer.id
            self.type = type
            price = offer.price ?? 0
            displayPrice = offer.price.map { "\($0)" } ?? "0"
            period = Product.SubscriptionPeriod(offer.period)
            periodCount = offer.numberOfPeriods
            paymentMode = PaymentMode(rawValue: offer.paymentMode.rawValue)
        }
    }

    /// An auto-renewable subscription's group, period and offers.
    public struct SubscriptionInfo: Hashable, Sendable {
        public let subscriptionGroupID: String
        public let subscriptionPeriod: Product.SubscriptionPeriod
        public let introductoryOffer: Product.SubscriptionOffer?
        public let promotionalOffers: [Product.SubscriptionOffer]
        public let winBackOffers: [Product.SubscriptionOffer]
        public let groupDisplayName: String
        /// 1 is the highest level of service in the group.
        public let groupLevel: Int
        /// The store's word when the product was loaded.
        let eligibleForIntroOffer: Bool

        init?(_ product: StoreProduct) {
            guard let group = product.subscriptionGroupID else { return nil }
            subscriptionGroupID = group
            subscriptionPeriod = Product.SubscriptionPeriod(
                product.subscriptionPeriod ?? IAPCatalog.SubscriptionPeriod(value: 1, unit: .month))
            introductoryOffer = product.introductoryOffer.map { SubscriptionOffer($0, type: .introductory) }
            promotionalOffers = product.promotionalOffers.map { SubscriptionOffer($0, type: .promotional) }
            winBackOffers = product.winBackOffers.map { SubscriptionOffer($0, type: .winBack) }
            groupDisplayName = product.subscriptionGroupName ?? group
            groupLevel = product.subscriptionLevel ?? 1
            eligibleForIntroOffer = product.storeSaysEligibleForIntroductoryOffer
        }

        /// Whether the customer may still take the group's introductory offer.
        public var isEligibleForIntroOffer: Bool {
            get async { await Self.isEligibleForIntroOffer(for: subscriptionGroupID) }
        }

        /// Whether the customer may still take an introductory offer in `groupID`: nobody who subscribed to the group
        /// before may.
        public static func isEligibleForIntroOffer(for groupID: String) async -> Bool {
            for await result in Transaction.all where result.unsafePayloadValue.subscriptionGroupID == groupID {
                return false
            }
            return true
        }
    }
}
