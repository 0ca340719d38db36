public import Foundation
import IAPCatalog
import IAPCore
import IAPSignedData
public import IAPStoreClient

#if canImport(StoreKit)
    public import StoreKit
#elseif canImport(IAPStoreKit)
    public import IAPStoreKit
#else
    #error("StoreKitBackend needs StoreKit (Apple platforms) or IAPKit's stand-in (IAPStoreKit)")
#endif
#if canImport(UIKit) && !os(watchOS)
    public import UIKit
#endif
#if os(macOS)
    public import AppKit
#endif

/// The `Store`'s backend over StoreKit 2: what a shipped app sells with.
///
/// It hands the Store the documents StoreKit signed (each transaction's, renewal info's and the app transaction's
/// `jwsRepresentation`, and the app receipt for the receipt mode) and lets the Store's verifiers decide; it listens to
/// `Transaction.updates` from the Store's creation, lists `Transaction.unfinished`, finishes what the Store unlocked,
/// syncs, tells the Store when the storefront changes and when the customer starts a purchase on the App Store
/// (`PurchaseIntent`), and asks for refunds and shows subscription management where a window scene exists.
///
/// The same source compiles with `import StoreKit` on Apple platforms and with IAPKit's stand-in (`IAPStoreKit`)
/// elsewhere, where ``init(session:)`` puts it on a `StoreKitSession` over the local App Store.
///
/// ```swift
/// let backend = StoreKitBackend(deviceIdentifier: UIDevice.current.identifierForVendor ?? UUID())
/// let store = Store(catalog: catalog, backend: backend, validation: .signedTransactions(verifier))
/// await store.start()
/// ```
public struct StoreKitBackend: StoreBackend {
    public let deviceIdentifier: UUID
    private let clock: @Sendable () async throws(StoreError) -> Date
    private let receipt: @Sendable () async throws(StoreError) -> [UInt8]?
    private let products = Locked<[String: Product]>([:])
    private let subscribed = Latch()
    #if canImport(UIKit) && !os(watchOS) && !os(tvOS)
        private let scene: @MainActor @Sendable () -> UIWindowScene?
    #elseif os(macOS)
        private let viewController: @MainActor @Sendable () -> NSViewController?
    #endif
    #if !canImport(StoreKit)
        /// The stand-in's session every call of this backend reaches.
        public let session: StoreKitSession
    #endif

    #if canImport(StoreKit)
        #if canImport(UIKit) && !os(watchOS) && !os(tvOS)
            /// A backend over StoreKit. `deviceIdentifier` is what the app receipt's device hash is made of
            /// (`UIDevice.current.identifierForVendor`); `scene` is where refund and subscription sheets appear (none:
            /// refunds throw `unsupported`, subscriptions are managed at the App Store's page).
            public init(
                deviceIdentifier: UUID, scene: @escaping @MainActor @Sendable () -> UIWindowScene? = { nil }
            ) {
                self.deviceIdentifier = deviceIdentifier
                self.scene = scene
                clock = { Date() }
                receipt = Self.receiptOnDisk
            }
        #elseif os(macOS)
            /// A backend over StoreKit. `deviceIdentifier` stands for the Mac's device identifier in the receipt's
            /// device hash (use the signed-transactions mode on macOS: the receipt's hash there is made of the network
            /// interface's address); `viewController` is where the refund sheet appears.
            public init(
                deviceIdentifier: UUID,
                viewController: @escaping @MainActor @Sendable () -> NSViewController? = { nil }
            ) {
                self.deviceIdentifier = deviceIdentifier
                self.viewController = viewController
                clock = { Date() }
                receipt = Self.receiptOnDisk
            }
        #else
            /// A backend over StoreKit. `deviceIdentifier` is what the app receipt's device hash is made of.
            public init(deviceIdentifier: UUID) {
                self.deviceIdentifier = deviceIdentifier
                clock = { Date() }
                receipt = Self.receiptOnDisk
            }
        #endif

        /// The app receipt on disk (`Bundle.main.appStoreReceiptURL`), nil when there is none yet.
        private static func receiptOnDisk() async throws(StoreError) -> [UInt8]? {
            guard let url = Bundle.main.appStoreReceiptURL, let data = try? Data(contentsOf: url) else { return nil }
            return [UInt8](data)
        }
    #else
        /// A backend over the stand-in: every call reaches `session`'s local App Store as the session's device, on
        /// the store's clock; the app receipt is the one the store signs for the device (none while offline).
        public init(session: StoreKitSession) {
            self.session = session
            deviceIdentifier = session.deviceIdentifier
            clock = { () async throws(StoreError) -> Date in
                do { return try await session.now() } catch { throw StoreError(storeKit: error) }
            }
            receipt = { () async throws(StoreError) -> [UInt8]? in
                do { return try await session.appReceipt() } catch { throw StoreError(storeKit: error) }
            }
        }
    #endif

    /// Runs `body` where StoreKit's static API reaches this backend's store.
    private func scoped<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        #if canImport(StoreKit)
            try await body()
        #else
            try await session.run(body)
        #endif
    }

    /// Runs a StoreKit call, its errors as the Store's.
    private func call<T: Sendable>(_ body: () async throws -> T) async throws(StoreError) -> T {
        do { return try await scoped(body) } catch { throw StoreError(storeKit: error) }
    }

    // MARK: - StoreBackend

    public func now() async throws(StoreError) -> Date { try await clock() }

    public func products(for ids: [String]) async throws(StoreError) -> [StoreProduct] {
        let loaded = try await call { try await Product.products(for: ids) }
        var answer: [StoreProduct] = []
        for product in loaded {
            products.withLock { $0[product.id] = product }
            answer.append(await StoreProduct(product))
        }
        return answer
    }

    public func purchase(_ request: PurchaseRequest) async throws(StoreError) -> BackendPurchaseResult {
        guard let product = try await product(request.productID) else {
            throw StoreError(.productUnavailable, "the store does not sell \(request.productID)")
        }
        let options = try options(for: request, product: product)
        return try await call { try await purchase(product, options: options) }
    }

    #if os(visionOS)
        @MainActor private func purchase(_ product: Product, options: Set<Product.PurchaseOption>) async throws
            -> BackendPurchaseResult
        {
            guard let scene = scene() else { throw StoreError(.unsupported, "a purchase on visionOS needs a scene") }
            return try Self.result(await product.purchase(confirmIn: scene, options: options))
        }
    #else
        @MainActor private func purchase(_ product: Product, options: Set<Product.PurchaseOption>) async throws
            -> BackendPurchaseResult
        {
            try Self.result(await product.purchase(options: options))
        }
    #endif

    /// StoreKit's answer to a purchase as the Store's, made where StoreKit answered (only the Store's own types cross
    /// from the main actor).
    private static func result(_ result: Product.PurchaseResult) throws(StoreError) -> BackendPurchaseResult {
        switch result {
        case .success(let verification): return .success(signedTransaction: verification.jwsRepresentation)
        case .pending: return .pending
        case .userCancelled: return .userCancelled
        #if canImport(StoreKit)
            @unknown default:
                throw StoreError(.unknown, "StoreKit answered a purchase in a way this version does not know")
        #endif
        }
    }

    /// StoreKit's purchase options for a request.
    private func options(for request: PurchaseRequest, product: Product) throws(StoreError)
        -> Set<Product.PurchaseOption>
    {
        var options: Set<Product.PurchaseOption> = [.quantity(request.quantity)]
        if let token = request.appAccountToken { options.insert(.appAccountToken(token)) }
        if let jws = request.introductoryOfferEligibility {
            options.insert(.introductoryOfferEligibility(compactJWS: jws))
        }
        switch request.offer {
        case .promotional(let offer):
            guard let signature = Data(base64Encoded: offer.signature) else {
                throw StoreError(.invalidOfferSignature, "the promotional offer's signature is not base64")
            }
            options.insert(
                .promotionalOffer(
                    offerID: offer.offerID, keyID: offer.keyID, nonce: offer.nonce, signature: signature,
                    timestamp: Int(offer.timestamp)))
        case .promotionalJWS(let offerID, let jws):
            options.formUnion(Product.PurchaseOption.promotionalOffer(offerID, compactJWS: jws))
        case .winBack(let offerID):
            guard #available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else {
                throw StoreError(.unsupported, "win-back offers need iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2")
            }
            guard let offer = product.subscription?.winBackOffers.first(where: { $0.id == offerID }) else {
                throw StoreError(.invalidOfferIdentifier, "\(product.id) has no win-back offer \(offerID)")
            }
            options.insert(.winBackOffer(offer))
        case nil: break
        }
        return options
    }

    public func transactionUpdates() -> AsyncStream<String> {
        let (stream, sink) = AsyncStream.makeStream(of: String.self)
        let subscribed = subscribed
        let listener = Task {
            await scoped {
                var updates = Transaction.updates.makeAsyncIterator()
                subscribed.open()
                while let update = await updates.next() { sink.yield(update.jwsRepresentation) }
            }
            sink.finish()
        }
        sink.onTermination = { _ in listener.cancel() }
        return stream
    }

    public func updatesSubscribed() async { await subscribed.wait() }

    public func allTransactions() async throws(StoreError) -> [String] {
        try await call { await Self.documents(Transaction.all) }
    }

    public func currentEntitlements() async throws(StoreError) -> [String] {
        try await call { await Self.documents(Transaction.currentEntitlements) }
    }

    public func unfinishedTransactions() async throws(StoreError) -> [String] {
        try await call { await Self.documents(Transaction.unfinished) }
    }

    public func latestTransaction(for productID: String) async throws(StoreError) -> String? {
        try await call { await Transaction.latest(for: productID)?.jwsRepresentation }
    }

    public func finish(transactionID: String) async throws(StoreError) {
        guard let id = UInt64(transactionID) else {
            throw StoreError(.unknownTransaction, "\(transactionID) is not a StoreKit transaction id")
        }
        // StoreKit finishes a transaction it was handed; the unfinished list has the ones this device holds.
        let unfinished = await scoped { await Self.transactions(Transaction.unfinished) }
        guard let transaction = unfinished.first(where: { $0.id == id }) else { return }
        await scoped { await transaction.finish() }
    }

    /// `AppStore.sync()`: a sign-in prompt on a device, made only from ``Store/restore()``.
    public func sync() async throws(StoreError) {
        try await call { try await AppStore.sync() }
    }

    public func subscriptionRenewalInfos() async throws(StoreError) -> [String] {
        // Each group the customer ever subscribed to, asked by its identifier (a group whose products are no longer
        // sold still has a status).
        let all = await scoped { await Self.transactions(Transaction.all) }
        let groups = Set(all.compactMap(\.subscriptionGroupID)).sorted()
        var infos: [String] = []
        for group in groups {
            let statuses = try await call { try await Product.SubscriptionInfo.status(for: group) }
            infos += statuses.map(\.renewalInfo.jwsRepresentation)
        }
        return infos
    }

    public func appTransaction() async throws(StoreError) -> String {
        try await call { try await AppTransaction.shared.jwsRepresentation }
    }

    public func appReceipt() async throws(StoreError) -> [UInt8]? { try await receipt() }

    /// StoreKit's offer-code sheet, where the customer types the code (StoreKit takes none from the app, and says
    /// nothing of what the customer did: a code it accepts grants a transaction through `Transaction.updates`). Over
    /// the stand-in, `code` is what the session's customer types.
    public func redeemOfferCode(_ code: String?) async throws(StoreError) {
        #if canImport(StoreKit)
            #if os(iOS) || os(visionOS)
                try await call { @MainActor in
                    guard let scene = scene() else {
                        throw StoreError(.unsupported, "offer codes are redeemed in a sheet, and there is no scene")
                    }
                    try await AppStore.presentOfferCodeRedeemSheet(in: scene)
                }
            #elseif os(macOS)
                guard #available(macOS 15.0, *) else {
                    throw StoreError(.unsupported, "the offer-code sheet needs macOS 15")
                }
                try await call { @MainActor in
                    guard let controller = viewController() else {
                        throw StoreError(
                            .unsupported, "offer codes are redeemed in a sheet, and there is no view controller")
                    }
                    try await AppStore.presentOfferCodeRedeemSheet(from: controller)
                }
            #else
                throw StoreError(.unsupported, "offer codes are redeemed on the App Store on this platform")
            #endif
        #else
            if let code { session.customerWillEnterOfferCode(code) }
            try await call { try await AppStore.presentOfferCodeRedeemSheet() }
        #endif
    }

    public func requestRefund(transactionID: String) async throws(StoreError) -> RefundRequestStatus {
        guard let id = UInt64(transactionID) else {
            throw StoreError(.unknownTransaction, "\(transactionID) is not a StoreKit transaction id")
        }
        #if canImport(StoreKit) && (os(tvOS) || os(watchOS))
            // No refund sheet here (and its answer's types are tvOS 17 and watchOS 10 ones).
            throw StoreError(.unsupported, "refunds are requested on the App Store on this platform")
        #else
            return try await call { () async throws -> RefundRequestStatus in
                #if canImport(StoreKit) && os(macOS)
                    try await Self.refund(id, from: viewController)
                #elseif canImport(StoreKit)
                    try await Self.refund(id, in: scene)
                #else
                    try Self.status(await Transaction.beginRefundRequest(for: id))
                #endif
            }
        #endif
    }

    #if canImport(StoreKit) && (os(iOS) || os(visionOS))
        @MainActor private static func refund(
            _ id: UInt64, in scene: @MainActor () -> UIWindowScene?
        ) async throws -> RefundRequestStatus {
            guard let scene = scene() else { throw StoreError(.unsupported, "a refund request needs a window scene") }
            return try status(await Transaction.beginRefundRequest(for: id, in: scene))
        }
    #elseif canImport(StoreKit) && os(macOS)
        @MainActor private static func refund(
            _ id: UInt64, from viewController: @MainActor () -> NSViewController?
        ) async throws -> RefundRequestStatus {
            guard let controller = viewController() else {
                throw StoreError(.unsupported, "a refund request needs a view controller")
            }
            return try status(await Transaction.beginRefundRequest(for: id, in: controller))
        }
    #endif

    #if !(canImport(StoreKit) && (os(tvOS) || os(watchOS)))
        /// StoreKit's answer to a refund request as the Store's. A status this version does not know is not taken
        /// for a request made.
        private static func status(_ status: Transaction.RefundRequestStatus) throws(StoreError) -> RefundRequestStatus
        {
            switch status {
            case .success: return .success
            case .userCancelled: return .userCancelled
            #if canImport(StoreKit)
                @unknown default:
                    throw StoreError(.unknown, "StoreKit answered a refund request in a way this version does not know")
            #endif
            }
        }
    #endif

    /// Shows StoreKit's subscription sheet where there is a window scene; answers the App Store's page either way.
    public func manageSubscriptions() async throws(StoreError) -> URL {
        #if canImport(StoreKit) && (os(iOS) || os(visionOS))
            try await call { @MainActor in
                if let scene = scene() { try await AppStore.showManageSubscriptions(in: scene) }
            }
        #endif
        return URL(string: "https://apps.apple.com/account/subscriptions")!
    }

    public func storefrontChanges() -> AsyncStream<String> {
        let (stream, sink) = AsyncStream.makeStream(of: String.self)
        #if canImport(StoreKit)
            let listener = Task {
                for await storefront in Storefront.updates { sink.yield(storefront.countryCode) }
                sink.finish()
            }
        #else
            // The stand-in's sequence listens from the moment it is made: made here, nothing slips past.
            let storefronts = session.bind { Storefront.updates }
            let listener = Task {
                for await storefront in storefronts { sink.yield(storefront.countryCode) }
                sink.finish()
            }
        #endif
        sink.onTermination = { _ in listener.cancel() }
        return stream
    }

    public func purchaseIntents() -> AsyncStream<StorePurchaseIntent> {
        let (stream, sink) = AsyncStream.makeStream(of: StorePurchaseIntent.self)
        #if os(tvOS) || os(watchOS) || os(visionOS)
            sink.finish()
        #else
            guard #available(iOS 16.4, macOS 14.4, *) else {
                sink.finish()
                return stream
            }
            let products = products
            let listener = Task {
                await scoped {
                    for await intent in PurchaseIntent.intents {
                        products.withLock { $0[intent.product.id] = intent.product }
                        var offerID: String?
                        if #available(iOS 18.0, macOS 15.0, *) { offerID = intent.offer?.id }
                        sink.yield(StorePurchaseIntent(productID: intent.product.id, winBackOfferID: offerID))
                    }
                }
                sink.finish()
            }
            sink.onTermination = { _ in listener.cancel() }
        #endif
        return stream
    }

    // MARK: - Pieces

    /// The product, from the products loaded so far or asked for now; nil when the store does not sell it.
    private func product(_ id: String) async throws(StoreError) -> Product? {
        if let product = products.withLock({ $0[id] }) { return product }
        _ = try await products(for: [id])
        return products.withLock { $0[id] }
    }

    private static func results(_ sequence: Transaction.Transactions) async -> [VerificationResult<Transaction>] {
        var results: [VerificationResult<Transaction>] = []
        for await result in sequence { results.append(result) }
        return results
    }

    private static func documents(_ sequence: Transaction.Transactions) async -> [String] {
        await results(sequence).map(\.jwsRepresentation)
    }

    private static func transactions(_ sequence: Transaction.Transactions) async -> [Transaction] {
        await results(sequence).map(\.unsafePayloadValue)
    }
}

extension StoreProduct {
    /// A StoreKit product as the Store describes it.
    init(_ product: Product) async {
        let kind: ProductKind =
            switch product.type {
            case .consumable: .consumable
            case .nonConsumable: .nonConsumable
            case .autoRenewable: .autoRenewable
            default: .nonRenewable
            }
        let subscription = product.subscription
        var eligible = false
        var level: Int?
        var groupName: String?
        var winBackOffers: [IAPCatalog.SubscriptionOffer] = []
        if let subscription {
            eligible = await subscription.isEligibleForIntroOffer
            if #available(iOS 16.4, macOS 13.3, tvOS 16.4, watchOS 9.4, visionOS 1.0, *) {
                level = subscription.groupLevel
                groupName = subscription.groupDisplayName.isEmpty ? nil : subscription.groupDisplayName
            }
            if #available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
                winBackOffers = subscription.winBackOffers.compactMap(IAPCatalog.SubscriptionOffer.init)
            }
        }
        self.init(
            id: product.id, kind: kind, displayName: product.displayName, description: product.description,
            price: product.price, displayPrice: product.displayPrice,
            subscriptionGroupID: subscription?.subscriptionGroupID, subscriptionGroupName: groupName,
            subscriptionLevel: level,
            subscriptionPeriod: subscription.map { IAPCatalog.SubscriptionPeriod($0.subscriptionPeriod) },
            isFamilyShareable: product.isFamilyShareable, storeSaysEligibleForIntroductoryOffer: eligible,
            introductoryOffer: subscription?.introductoryOffer.flatMap(IAPCatalog.SubscriptionOffer.init),
            promotionalOffers: subscription?.promotionalOffers.compactMap(IAPCatalog.SubscriptionOffer.init) ?? [],
            winBackOffers: winBackOffers)
    }
}

extension IAPCatalog.SubscriptionOffer {
    /// A StoreKit offer as the catalog describes it; nil for a payment mode the catalog does not know.
    init?(_ offer: Product.SubscriptionOffer) {
        let mode: PaymentMode
        if offer.paymentMode == .freeTrial {
            mode = .freeTrial
        } else if offer.paymentMode == .payAsYouGo {
            mode = .payAsYouGo
        } else if offer.paymentMode == .payUpFront {
            mode = .payUpFront
        } else {
            return nil
        }
        self.init(
            id: offer.id, paymentMode: mode, period: IAPCatalog.SubscriptionPeriod(offer.period),
            numberOfPeriods: offer.periodCount, price: mode == .freeTrial ? nil : offer.price)
    }
}

extension IAPCatalog.SubscriptionPeriod {
    init(_ period: Product.SubscriptionPeriod) {
        let unit: SubscriptionPeriod.Unit =
            switch period.unit {
            case .day: .day
            case .week: .week
            case .month: .month
            case .year: .year
            #if canImport(StoreKit)
                @unknown default: .month
            #endif
            }
        self.init(value: period.value, unit: unit)
    }
}

extension StoreError {
    /// A StoreKit error under the code the Store (and the local App Store) uses for it.
    init(storeKit error: any Error) {
        if let error = error as? StoreError {
            self = error
            return
        }
        let code: String
        if let error = error as? Product.PurchaseError {
            code =
                switch error {
                case .invalidQuantity: "invalidQuantity"
                case .productUnavailable: "productUnavailable"
                case .purchaseNotAllowed: "purchaseNotAllowed"
                case .ineligibleForOffer: "ineligibleForOffer"
                case .invalidOfferIdentifier: "invalidOfferIdentifier"
                case .invalidOfferPrice: "invalidOfferPrice"
                case .invalidOfferSignature: "invalidOfferSignature"
                case .missingOfferParameters: "missingOfferParameters"
                #if canImport(StoreKit)
                    @unknown default: "unknown"
                #endif
                }
        } else if let error = error as? StoreKitError {
            code =
                switch error {
                case .networkError: "networkError"
                case .systemError: "systemError"
                case .userCancelled: "userCancelled"
                case .notAvailableInStorefront: "notAvailableInStorefront"
                case .notEntitled: "notEntitled"
                #if canImport(StoreKit)
                    default: "unknown"
                #else
                    case .unknown, .unsupported: "unknown"
                #endif
                }
        } else {
            code = Self.refundRequestCode(of: error) ?? "unknown"
        }
        self.init(.init(rawValue: code), "StoreKit: \(error)")
    }
}

extension StoreError {
    /// The code of a refund request's error, nil for another error.
    fileprivate static func refundRequestCode(of error: any Error) -> String? {
        #if canImport(StoreKit) && (os(tvOS) || os(watchOS))
            return nil  // no refund requests here; their error type is a tvOS 17 and watchOS 10 one
        #else
            guard let error = error as? Transaction.RefundRequestError else { return nil }
            switch error {
            case .duplicateRequest: return "duplicateRefundRequest"
            case .failed: return "refundRequestFailed"
            #if canImport(StoreKit)
                @unknown default: return "refundRequestFailed"
            #endif
            }
        #endif
    }
}

/// Opens once; waiters return when it is open.
final class Latch: @unchecked Sendable {
    private let lock = NSLock()
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func open() {
        let waiting = lock.withLock {
            isOpen = true
            defer { waiters = [] }
            return waiters
        }
        for waiter in waiting { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let openNow = lock.withLock {
                if !isOpen { waiters.append(continuation) }
                return isOpen
            }
            if openNow { continuation.resume() }
        }
    }
}
