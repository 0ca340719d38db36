public import Foundation
import IAPSignedData
import IAPStoreClient

extension Product.SubscriptionInfo {
    /// Where a subscription stands: a struct of static values, as StoreKit's (a `switch` needs a `default`). The raw
    /// values are the App Store Server API's status numbers.
    public struct RenewalState: RawRepresentable, Hashable, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let subscribed = RenewalState(rawValue: 1)
        public static let expired = RenewalState(rawValue: 2)
        public static let inBillingRetryPeriod = RenewalState(rawValue: 3)
        public static let inGracePeriod = RenewalState(rawValue: 4)
        public static let revoked = RenewalState(rawValue: 5)

        public var localizedDescription: String {
            switch self {
            case .subscribed: "Subscribed"
            case .expired: "Expired"
            case .inBillingRetryPeriod: "In billing retry"
            case .inGracePeriod: "In grace period"
            case .revoked: "Revoked"
            default: "\(rawValue)"
            }
        }
    }

    /// One subscription of the customer in a group: its latest transaction, its renewal info and its state.
    public struct Status: Hashable, Sendable {
        public let state: Product.SubscriptionInfo.RenewalState
        public let transaction: VerificationResult<Transaction>
        public let renewalInfo: VerificationResult<Product.SubscriptionInfo.RenewalInfo>

        public static func == (lhs: Status, rhs: Status) -> Bool {
            lhs.state == rhs.state && lhs.transaction.jwsRepresentation == rhs.transaction.jwsRepresentation
                && lhs.renewalInfo.jwsRepresentation == rhs.renewalInfo.jwsRepresentation
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(state)
            hasher.combine(transaction.jwsRepresentation)
        }

        /// The statuses of a group whenever one of its subscriptions changes (renewal, expiry, refund, upgrade).
        public static var updates: Statuses {
            Statuses(
                base: Transaction.updates.compactMapStatuses { transaction, session in
                    guard let group = transaction.subscriptionGroupID else { return [] }
                    return await session.statuses(group: group)
                })
        }

        /// `Product.SubscriptionInfo.Status.Statuses`: an asynchronous sequence of statuses.
        public struct Statuses: AsyncSequence, Sendable {
            public typealias Element = Product.SubscriptionInfo.Status
            let base: AsyncStream<Element>.Maker

            public struct AsyncIterator: AsyncIteratorProtocol {
                var base: AsyncStream<Element>.AsyncIterator
                public mutating func next() async -> Element? { await base.next() }
            }

            public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.make().makeAsyncIterator()) }
        }
    }

    /// The customer's subscriptions in this product's group.
    public var status: [Product.SubscriptionInfo.Status] {
        get async throws { try await Self.status(for: subscriptionGroupID) }
    }

    /// The customer's subscriptions in a group (one, or more with family sharing).
    public static func status(for groupID: String) async throws -> [Product.SubscriptionInfo.Status] {
        await (try StoreKitSession.current()).statuses(group: groupID)
    }

    /// A subscription's renewal information, as the App Store signed it.
    public struct RenewalInfo: Hashable, Sendable {
        public let originalTransactionID: UInt64
        public let currentProductID: String
        /// The product the subscription renews to (another level after an upgrade or downgrade).
        public let autoRenewPreference: String?
        public let willAutoRenew: Bool
        public let expirationReason: Product.SubscriptionInfo.RenewalInfo.ExpirationReason?
        public let renewalDate: Date?
        public let gracePeriodExpirationDate: Date?
        public let isInBillingRetry: Bool
        public let priceIncreaseStatus: Product.SubscriptionInfo.RenewalInfo.PriceIncreaseStatus
        public let offer: Transaction.Offer?
        public let recentSubscriptionStartDate: Date
        public let currencyCode: String?
        public let renewalPrice: Decimal?
        public let eligibleWinBackOfferIDs: [String]
        public let appAccountToken: UUID?
        public let environment: AppStore.Environment
        public let signedDate: Date
        public let deviceVerification: Data
        public let deviceVerificationNonce: UUID
        /// The payload's JSON, as signed.
        public let jsonRepresentation: Data
        let jws: String

        public var currency: Locale.Currency? { currencyCode.map { Locale.Currency($0) } }

        /// Why a subscription expired.
        public struct ExpirationReason: RawRepresentable, Hashable, Sendable {
            public let rawValue: Int
            public init(rawValue: Int) { self.rawValue = rawValue }
            public static let autoRenewDisabled = ExpirationReason(rawValue: 1)
            public static let billingError = ExpirationReason(rawValue: 2)
            public static let didNotConsentToPriceIncrease = ExpirationReason(rawValue: 3)
            public static let productUnavailable = ExpirationReason(rawValue: 4)
            public static let unknown = ExpirationReason(rawValue: 5)
        }

        /// Whether the customer answered a price increase.
        public enum PriceIncreaseStatus: Hashable, Sendable {
            case noIncreasePending
            case pending
            case agreed
        }

        init?(_ payload: RenewalInfoPayload, jws: String) {
            guard let original = payload.originalTransactionID.flatMap(UInt64.init), let product = payload.productID
            else { return nil }
            originalTransactionID = original
            currentProductID = product
            autoRenewPreference = payload.autoRenewProductID
            willAutoRenew = payload.autoRenewStatus == .on
            expirationReason = payload.expirationIntent.map { ExpirationReason(rawValue: $0.rawValue) }
            renewalDate = payload.renewalDate?.date
            gracePeriodExpirationDate = payload.gracePeriodExpiresDate?.date
            isInBillingRetry = payload.isInBillingRetryPeriod ?? false
            priceIncreaseStatus =
                switch payload.priceIncreaseStatus {
                case nil: .noIncreasePending
                case .consented?: .agreed
                default: .pending
                }
            offer = payload.offerType.map { type in
                Transaction.Offer(
                    id: payload.offerIdentifier, type: Transaction.OfferType(rawValue: Int(type.rawValue)),
                    paymentMode: payload.offerDiscountType.map { Transaction.Offer.PaymentMode(rawValue: $0.rawValue) },
                    period: payload.offerPeriod.flatMap(Product.SubscriptionPeriod.init(iso8601:)))
            }
            let signed = payload.signedDate?.date ?? Date(timeIntervalSince1970: 0)
            recentSubscriptionStartDate = payload.recentSubscriptionStartDate?.date ?? signed
            currencyCode = payload.currency
            renewalPrice = payload.renewalPrice.map { Decimal($0) / 1000 }
            eligibleWinBackOfferIDs = payload.eligibleWinBackOfferIDs ?? []
            appAccountToken = payload.appAccountToken.flatMap(UUID.init(uuidString:))
            environment = AppStore.Environment(rawValue: payload.environment?.rawValue ?? "Production")
            signedDate = signed
            deviceVerification = payload.deviceVerification.flatMap { Data(base64Encoded: $0) } ?? Data()
            deviceVerificationNonce =
                payload.deviceVerificationNonce.flatMap(UUID.init(uuidString:)) ?? JWSParts.nilUUID
            jsonRepresentation = JWSParts.part(1, of: jws)
            self.jws = jws
        }

        public static func == (lhs: RenewalInfo, rhs: RenewalInfo) -> Bool { lhs.jws == rhs.jws }
        public func hash(into hasher: inout Hasher) { hasher.combine(jws) }
    }
}

extension VerificationResult where SignedType == Product.SubscriptionInfo.RenewalInfo {
    /// The signed document, as the App Store sent it.
    public var jwsRepresentation: String { unsafePayloadValue.jws }
    /// When the App Store signed it.
    public var signedDate: Date { unsafePayloadValue.signedDate }
    public var headerData: Data { JWSParts.part(0, of: jwsRepresentation) }
    public var payloadData: Data { JWSParts.part(1, of: jwsRepresentation) }
    public var signatureData: Data { JWSParts.part(2, of: jwsRepresentation) }
}

extension AsyncStream {
    /// Makes the stream when a sequence is iterated, so each iteration gets its own.
    struct Maker: Sendable {
        let make: @Sendable () -> AsyncStream<Element>
    }
}

extension Transaction.Transactions {
    /// The statuses each verified subscription update leads to.
    func compactMapStatuses(
        _ transform: @escaping @Sendable (Transaction, StoreKitSession) async -> [Product.SubscriptionInfo.Status]
    ) -> AsyncStream<Product.SubscriptionInfo.Status>.Maker {
        let updates = self
        return AsyncStream.Maker {
            AsyncStream { continuation in
                // Subscribed now, not when the task first runs.
                guard let session = try? StoreKitSession.current() else { return continuation.finish() }
                let stream = updates.make()
                let task = Task {
                    for await update in stream {
                        for status in await transform(update.unsafePayloadValue, session) { continuation.yield(status) }
                    }
                    continuation.finish()
                }
                continuation.onTermination = { _ in task.cancel() }
            }
        }
    }
}

extension StoreKitSession {
    /// The customer's subscriptions in `group`: each renewal info of the group with its subscription's latest
    /// transaction, the state read from both at the store's moment.
    func statuses(group: String) async -> [Product.SubscriptionInfo.Status] {
        guard let infos = try? await backend.subscriptionRenewalInfos(),
            let all = try? await backend.allTransactions(),
            let now = try? await backend.now()
        else { return [] }
        var transactions: [VerificationResult<Transaction>] = []
        for jws in all {
            if let result = await verifiedTransaction(jws), result.unsafePayloadValue.subscriptionGroupID == group {
                transactions.append(result)
            }
        }
        var statuses: [Product.SubscriptionInfo.Status] = []
        for jws in infos {
            guard let info = await verifiedRenewalInfo(jws) else { continue }
            let original = info.unsafePayloadValue.originalTransactionID
            guard
                let latest = transactions.filter({ $0.unsafePayloadValue.originalID == original })
                    .max(by: { $0.unsafePayloadValue.purchaseDate < $1.unsafePayloadValue.purchaseDate })
            else { continue }
            statuses.append(
                Product.SubscriptionInfo.Status(
                    state: Self.state(latest.unsafePayloadValue, info.unsafePayloadValue, now: now),
                    transaction: latest, renewalInfo: info))
        }
        return statuses
    }

    /// A subscription's state from its latest transaction and renewal info.
    static func state(
        _ transaction: Transaction, _ info: Product.SubscriptionInfo.RenewalInfo, now: Date
    ) -> Product.SubscriptionInfo.RenewalState {
        if transaction.revocationDate != nil { return .revoked }
        if let expires = transaction.expirationDate, expires > now { return .subscribed }
        if info.isInBillingRetry {
            if let grace = info.gracePeriodExpirationDate, grace > now { return .inGracePeriod }
            return .inBillingRetryPeriod
        }
        return .expired
    }

    /// A signed renewal info, verified: nil only when it is not a renewal info at all.
    func verifiedRenewalInfo(_ jws: String) async -> VerificationResult<Product.SubscriptionInfo.RenewalInfo>? {
        guard let verdict = try? await verifier.verifyRenewalInfo(jws), let payload = verdict.payload,
            let info = Product.SubscriptionInfo.RenewalInfo(payload, jws: jws)
        else { return nil }
        return verdict.isValid ? .verified(info) : .unverified(info, .init(verdict.failures))
    }
}
