public import Foundation
import IAPCore
import IAPSignedData
import IAPStoreClient

/// StoreKit's `Transaction`: one purchase as the App Store signed it, with the static sequences an app listens to.
/// Every value is read from the signed document (the JWS is kept as the `jwsRepresentation` of its verification result).
public struct Transaction: Identifiable, Hashable, Sendable {
    public let id: UInt64
    public let originalID: UInt64
    public let webOrderLineItemID: String?
    public let productID: String
    public let subscriptionGroupID: String?
    public let appBundleID: String
    public let purchaseDate: Date
    public let originalPurchaseDate: Date
    public let expirationDate: Date?
    public let purchasedQuantity: Int
    public let isUpgraded: Bool
    public let ownershipType: Transaction.OwnershipType
    public let signedDate: Date
    public let revocationDate: Date?
    public let revocationReason: Transaction.RevocationReason?
    public let productType: Product.ProductType
    public let appAccountToken: UUID?
    public let environment: AppStore.Environment
    public let reason: Transaction.Reason
    public let storefront: Storefront
    public let offer: Transaction.Offer?
    /// The price paid, in the storefront's currency.
    public let price: Decimal?
    public let currencyCode: String?
    public let deviceVerification: Data
    public let deviceVerificationNonce: UUID
    public let appTransactionID: String
    /// The payload's JSON, as signed.
    public let jsonRepresentation: Data

    /// The document this was read from.
    let jws: String
    /// The session that issued it, to finish it with.
    private let session: StoreKitSession?

    public var currency: Locale.Currency? { currencyCode.map { Locale.Currency($0) } }
    public var storefrontCountryCode: String { storefront.countryCode }
    public var environmentStringRepresentation: String { environment.rawValue }
    public var reasonStringRepresentation: String { reason.rawValue }
    public var offerID: String? { offer?.id }
    public var offerType: Transaction.OfferType? { offer?.type }

    /// The transaction read from a document whose payload parsed; nil when it lacks what every transaction has.
    init?(_ payload: TransactionPayload, jws: String, session: StoreKitSession?) {
        guard let id = payload.transactionID.flatMap(UInt64.init), let productID = payload.productID,
            let purchased = payload.purchaseDate?.date
        else { return nil }
        self.id = id
        originalID = payload.originalTransactionID.flatMap(UInt64.init) ?? id
        webOrderLineItemID = payload.webOrderLineItemID
        self.productID = productID
        subscriptionGroupID = payload.subscriptionGroupIdentifier
        appBundleID = payload.bundleID ?? ""
        purchaseDate = purchased
        originalPurchaseDate = payload.originalPurchaseDate?.date ?? purchased
        expirationDate = payload.expiresDate?.date
        purchasedQuantity = payload.quantity ?? 1
        isUpgraded = payload.isUpgraded ?? false
        ownershipType = OwnershipType(rawValue: payload.inAppOwnershipType?.rawValue ?? "PURCHASED")
        signedDate = payload.signedDate?.date ?? purchased
        revocationDate = payload.revocationDate?.date
        revocationReason = payload.revocationReason.map { RevocationReason(rawValue: Int($0.rawValue)) }
        productType = Product.ProductType(rawValue: payload.type?.rawValue ?? "")
        appAccountToken = payload.appAccountToken.flatMap(UUID.init(uuidString:))
        environment = AppStore.Environment(rawValue: payload.environment?.rawValue ?? "Production")
        reason = Reason(rawValue: payload.transactionReason?.rawValue ?? "PURCHASE")
        storefront = Storefront(id: payload.storefrontID ?? "", countryCode: payload.storefront ?? "")
        offer = payload.offerType.map { type in
            Offer(
                id: payload.offerIdentifier, type: OfferType(rawValue: Int(type.rawValue)),
                paymentMode: payload.offerDiscountType.map { Offer.PaymentMode(rawValue: $0.rawValue) },
                period: payload.offerPeriod.flatMap(Product.SubscriptionPeriod.init(iso8601:)))
        }
        price = payload.price.map { Decimal($0) / 1000 }
        currencyCode = payload.currency
        deviceVerification = payload.deviceVerification.flatMap { Data(base64Encoded: $0) } ?? Data()
        deviceVerificationNonce =
            payload.deviceVerificationNonce.flatMap(UUID.init(uuidString:)) ?? UUID(
                uuidString: "00000000-0000-0000-0000-000000000000")!
        appTransactionID = payload.appTransactionID ?? ""
        jsonRepresentation = JWSParts.part(1, of: jws)
        self.jws = jws
        self.session = session
    }

    public static func == (lhs: Transaction, rhs: Transaction) -> Bool { lhs.jws == rhs.jws }
    public func hash(into hasher: inout Hasher) { hasher.combine(jws) }

    /// Tells the App Store the app delivered the purchase: it leaves ``unfinished`` and is not redelivered.
    public func finish() async {
        guard let session = session ?? (try? StoreKitSession.current()) else { return }
        try? await session.backend.finish(transactionID: String(id))
    }

    // MARK: - The sequences

    /// Every transaction issued or changed from now on (renewals, approvals, refunds, purchases on other devices),
    /// after the unfinished ones once at launch; not the purchases this device makes through `purchase(options:)`.
    public static var updates: Transactions {
        Transactions(stream: { session in
            AsyncStream { continuation in
                // Subscribed now, not when the task first runs: nothing the store sends after this call is missed.
                let documents = session.backend.transactionUpdates()
                let listener = Task {
                    for await jws in documents {
                        if let result = await session.verifiedTransaction(jws) { continuation.yield(result) }
                    }
                    continuation.finish()
                }
                continuation.onTermination = { _ in listener.cancel() }
            }
        })
    }

    /// The transactions the app has not finished.
    public static var unfinished: Transactions {
        Transactions(.unfinished) { try await $0.backend.unfinishedTransactions() }
    }

    /// Every transaction of the customer.
    public static var all: Transactions { Transactions(.all) { try await $0.backend.allTransactions() } }

    /// Every transaction of the customer for one product.
    public static func all(for productID: String) -> Transactions {
        all.filtered {
            $0.unsafePayloadValue.productID == productID
        }
    }

    /// The latest transaction of each product the customer is entitled to now.
    public static var currentEntitlements: Transactions {
        Transactions(.currentEntitlements) { try await $0.backend.currentEntitlements() }
    }

    /// The customer's entitling transactions for one product.
    public static func currentEntitlements(for productID: String) -> Transactions {
        currentEntitlements.filtered { $0.unsafePayloadValue.productID == productID }
    }

    /// The latest entitling transaction for a product, or nil.
    @available(*, deprecated, message: "use currentEntitlements(for:)")
    public static func currentEntitlement(for productID: String) async -> VerificationResult<Transaction>? {
        for await result in currentEntitlements(for: productID) { return result }
        return nil
    }

    /// The customer's latest transaction for a product, or nil when there is none.
    public static func latest(for productID: String) async -> VerificationResult<Transaction>? {
        guard let session = try? StoreKitSession.current(),
            let jws = try? await session.backend.latestTransaction(for: productID)
        else { return nil }
        return await session.verifiedTransaction(jws)
    }

    /// `Transaction.Transactions`: an asynchronous sequence of verification results.
    public struct Transactions: AsyncSequence, Sendable {
        public typealias Element = VerificationResult<Transaction>

        let make: @Sendable () -> AsyncStream<Element>

        /// A sequence that, when iterated, opens `stream` on the session current at that moment (none: empty).
        init(stream: @escaping @Sendable (StoreKitSession) -> AsyncStream<Element>) {
            let session = try? StoreKitSession.current()
            make = {
                guard let session else { return AsyncStream { $0.finish() } }
                return stream(session)
            }
        }

        /// A sequence of the documents `list` answers, verified, in order. When the store cannot be reached, the
        /// device's last answer for the same list stands in (as StoreKit answers these offline from the device).
        init(
            _ list: StoreKitSession.DeviceList, _ fetch: @escaping @Sendable (StoreKitSession) async throws -> [String]
        ) {
            self.init(stream: { session in
                AsyncStream { continuation in
                    let task = Task {
                        for jws in await session.onDevice(list, fetch: { try await fetch(session) }) {
                            if let result = await session.verifiedTransaction(jws) { continuation.yield(result) }
                        }
                        continuation.finish()
                    }
                    continuation.onTermination = { _ in task.cancel() }
                }
            })
        }

        private init(make: @escaping @Sendable () -> AsyncStream<Element>) { self.make = make }

        /// The elements `isIncluded` keeps.
        func filtered(_ isIncluded: @escaping @Sendable (Element) -> Bool) -> Transactions {
            let make = self.make
            return Transactions(make: {
                AsyncStream { continuation in
                    let elements = make()
                    let task = Task {
                        for await element in elements where isIncluded(element) { continuation.yield(element) }
                        continuation.finish()
                    }
                    continuation.onTermination = { _ in task.cancel() }
                }
            })
        }

        public struct AsyncIterator: AsyncIteratorProtocol {
            var base: AsyncStream<Element>.AsyncIterator
            public mutating func next() async -> Element? { await base.next() }
        }

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: make().makeAsyncIterator()) }
    }
}

extension Transaction {
    /// Bought by the customer, or shared by a family member.
    public struct OwnershipType: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let purchased = OwnershipType(rawValue: "PURCHASED")
        public static let familyShared = OwnershipType(rawValue: "FAMILY_SHARED")
    }

    /// Why the App Store refunded or revoked a transaction.
    public struct RevocationReason: RawRepresentable, Hashable, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let other = RevocationReason(rawValue: 0)
        public static let developerIssue = RevocationReason(rawValue: 1)
    }

    /// A purchase or a renewal.
    public struct Reason: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let purchase = Reason(rawValue: "PURCHASE")
        public static let renewal = Reason(rawValue: "RENEWAL")
    }

    /// The kind of offer a transaction was bought with.
    public struct OfferType: RawRepresentable, Hashable, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let introductory = OfferType(rawValue: 1)
        public static let promotional = OfferType(rawValue: 2)
        public static let code = OfferType(rawValue: 3)
        public static let winBack = OfferType(rawValue: 4)
    }

    /// The offer a transaction was bought with.
    public struct Offer: Hashable, Sendable {
        public let id: String?
        public let type: Transaction.OfferType
        public let paymentMode: Transaction.Offer.PaymentMode?
        public let period: Product.SubscriptionPeriod?

        /// How the offer is paid.
        public struct PaymentMode: RawRepresentable, Hashable, Sendable {
            public let rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            public static let freeTrial = PaymentMode(rawValue: "FREE_TRIAL")
            public static let payAsYouGo = PaymentMode(rawValue: "PAY_AS_YOU_GO")
            public static let payUpFront = PaymentMode(rawValue: "PAY_UP_FRONT")
        }
    }
}
