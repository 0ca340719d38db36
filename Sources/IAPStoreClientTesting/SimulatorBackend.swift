public import Foundation
import IAPCatalog
public import IAPSimulator
public import IAPStoreClient

/// The local App Store in process, as one device of one account sees it.
///
/// ```swift
/// let simulator = try AppStoreSimulator(catalog: catalog, pki: pki)
/// try simulator.createAccount("ana")
/// let backend = try SimulatorBackend(simulator, account: "ana")
/// ```
public struct SimulatorBackend: StoreBackend {
    public let simulator: AppStoreSimulator
    public let account: String
    public let deviceIdentifier: UUID
    /// The person and network around this device.
    public let customer: SimulatedCustomer

    /// The account's device `device`, or its first device (added when it has none).
    public init(
        _ simulator: AppStoreSimulator, account: String, device: UUID? = nil,
        customer: SimulatedCustomer = SimulatedCustomer()
    ) throws(StoreError) {
        self.simulator = simulator
        self.account = account
        self.customer = customer
        deviceIdentifier = try Self.call { () throws(SimulatorError) -> UUID in
            let devices = try simulator.devices(account: account)
            if let device {
                guard devices.contains(device) else {
                    throw SimulatorError(.unknownDevice, "\(device) is not a device of \(account)")
                }
                return device
            }
            if let first = devices.first { return first }
            return try simulator.addDevice(account: account)
        }
    }

    public func now() async throws(StoreError) -> Date {
        try Self.call { () throws(SimulatorError) in try simulator.now }
    }

    public func products(for ids: [String]) async throws(StoreError) -> [StoreProduct] {
        let catalog = simulator.catalog
        return try call { () throws(SimulatorError) in try simulator.products(ids, account: account) }.map {
            StoreProduct($0, catalog: catalog)
        }
    }

    public func purchase(_ request: PurchaseRequest) async throws(StoreError) -> BackendPurchaseResult {
        let sheet = await customer.nextSheet()
        try customer.checkOnline()
        var options = PurchaseOptions(
            quantity: request.quantity, appAccountToken: request.appAccountToken,
            offer: request.offer.map(OfferChoice.init),
            interrupted: sheet == .interrupt, userCancels: sheet == .cancel)
        options.introductoryOfferEligibility = request.introductoryOfferEligibility
        let outcome = try call { () throws(SimulatorError) in
            try simulator.purchase(request.productID, account: account, device: deviceIdentifier, options: options)
        }
        // A purchase leaves the new receipt on the device, as StoreKit does.
        if case .purchased = outcome, customer.receiptOnlyFromRefresh { _ = try signedReceipt() }
        return BackendPurchaseResult(outcome)
    }

    public func transactionUpdates() -> AsyncStream<String> {
        guard let source = try? simulator.transactionUpdates(account: account, device: deviceIdentifier) else {
            return AsyncStream { $0.finish() }
        }
        return AsyncStream { continuation in
            let task = Task {
                for await transaction in source { continuation.yield(transaction.jws) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    public func allTransactions() async throws(StoreError) -> [String] {
        try call { () throws(SimulatorError) in try simulator.transactionsOnDevice(account: account) }.map(\.jws)
    }

    public func unfinishedTransactions() async throws(StoreError) -> [String] {
        try call { () throws(SimulatorError) in try simulator.unfinishedTransactions(account: account) }.map(\.jws)
    }

    public func currentEntitlements() async throws(StoreError) -> [String] {
        try call { () throws(SimulatorError) in try simulator.currentEntitlements(account: account) }.map(\.jws)
    }

    public func latestTransaction(for productID: String) async throws(StoreError) -> String? {
        try call { () throws(SimulatorError) in
            try simulator.latestTransaction(account: account, productID: productID)
        }?.jws
    }

    public func redeemOfferCode(_ code: String?) async throws(StoreError) {
        try customer.checkOnline()
        guard let code else { return }  // the customer closed the sheet
        _ = try call { () throws(SimulatorError) in try simulator.redeemOfferCode(code, account: account) }
    }

    public func finish(transactionID: String) async throws(StoreError) {
        try call { () throws(SimulatorError) in try simulator.finish(transactionID) }
    }

    /// The customer signs in (counted: ``SimulatedCustomer/signIns``); the device gets a new receipt.
    public func sync() async throws(StoreError) {
        customer.countSignIn()
        _ = try call { () throws(SimulatorError) in try simulator.sync(account: account) }
        _ = try signedReceipt()
    }

    public func subscriptionRenewalInfos() async throws(StoreError) -> [String] {
        try call { () throws(SimulatorError) in try simulator.renewalInfos(account: account) }
    }

    public func appTransaction() async throws(StoreError) -> String {
        try call { () throws(SimulatorError) in
            try simulator.appTransaction(account: account, device: deviceIdentifier)
        }
    }

    /// The receipt on the device's disk: offline, the last one the store gave; online, the simulator signs the
    /// current one for every device (it never lacks one).
    public func appReceipt() async throws(StoreError) -> [UInt8]? {
        if customer.isOffline || customer.receiptOnlyFromRefresh { return customer.receiptOnDisk }
        return try signedReceipt()
    }

    /// The receipt the simulator signs for the device now, kept on its disk.
    private func signedReceipt() throws(StoreError) -> [UInt8] {
        let bytes = try call { () throws(SimulatorError) in
            try simulator.receipt(account: account, device: deviceIdentifier)
        }.bytes
        customer.receiptOnDisk = bytes
        return bytes
    }

    public func requestRefund(transactionID: String) async throws(StoreError) -> RefundRequestStatus {
        try call { () throws(SimulatorError) in try simulator.requestRefund(transactionID) }
        return .success
    }

    public func manageSubscriptions() async throws(StoreError) -> URL {
        try customer.checkOnline()
        return URL(string: "https://apps.apple.com/account/subscriptions")!
    }

    /// The account's storefront each time it changes (none for an account the store does not know).
    public func storefrontChanges() -> AsyncStream<String> {
        guard let storefronts = try? simulator.storefrontUpdates(account: account) else {
            return AsyncStream { $0.finish() }
        }
        return storefronts.changes()
    }

    /// Runs a simulator call, carrying its error code over unchanged.
    func call<T>(_ body: () throws(SimulatorError) -> T) throws(StoreError) -> T {
        try customer.checkOnline()
        return try Self.call(body)
    }

    static func call<T>(_ body: () throws(SimulatorError) -> T) throws(StoreError) -> T {
        do { return try body() } catch { throw StoreError(.init(rawValue: error.code.rawValue), error.reason) }
    }
}

extension StoreProduct {
    /// A product as the simulator sells it, with its group's name, its level and its offers from the store's own
    /// catalog.
    init(_ product: SimulatorProduct, catalog: Catalog?) {
        let subscription = catalog?.product(product.id)?.subscription
        self.init(
            id: product.id, kind: product.kind, displayName: product.displayName, description: product.description,
            price: product.price, displayPrice: product.displayPrice, subscriptionGroupID: product.subscriptionGroupID,
            subscriptionGroupName: product.subscriptionGroupID.flatMap { catalog?.group($0)?.name },
            subscriptionLevel: subscription?.level,
            subscriptionPeriod: product.subscriptionPeriod, isFamilyShareable: product.isFamilyShareable,
            storeSaysEligibleForIntroductoryOffer: product.isEligibleForIntroductoryOffer,
            introductoryOffer: subscription?.introductoryOffer,
            promotionalOffers: subscription?.promotionalOffers ?? [],
            winBackOffers: subscription?.winBackOffers ?? [])
    }
}

extension OfferChoice {
    init(_ offer: PurchaseOffer) {
        switch offer {
        case .promotional(let signed): self = .promotional(signed)
        case .promotionalJWS(_, let jws): self = .promotionalV2(jws)
        case .winBack(let id): self = .winBack(offerID: id)
        }
    }
}

extension BackendPurchaseResult {
    init(_ outcome: PurchaseOutcome) {
        switch outcome {
        case .purchased(let transaction): self = .success(signedTransaction: transaction.jws)
        case .pending: self = .pending
        case .userCancelled: self = .userCancelled
        }
    }
}
