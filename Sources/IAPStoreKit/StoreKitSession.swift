public import Foundation
public import IAPCatalog
import IAPCore
import IAPSignedData
public import IAPSimulator
import IAPStoreClient
public import IAPStoreClientTesting
import Synchronization

/// The App Store that StoreKit's API (`Product`, `Transaction`, `AppStore`, `Storefront`) talks to where StoreKit
/// itself is not there: the local App Store, as one device of one account sees it, with every signed document
/// verified against the store's own roots. In the spirit of Xcode's `SKTestSession`: the test owns the store, its
/// clock, its accounts and what the customer does at the purchase sheet.
///
/// ```swift
/// let session = try StoreKitSession(simulator: simulator, account: "ana")
/// try await session.run {
///     let products = try await Product.products(for: ["com.example.florist.flowers"])
///     let result = try await products[0].purchase()
/// }
/// ```
///
/// StoreKit's API is static, so the session it talks to is found at each call: the one `run(_:)` bound to the
/// current task (tests run in parallel, each with its own), or else the process's default (`makeDefault()`), which a
/// detached task sees too. With neither, calls fail as a store that cannot be reached (`StoreKitError.networkError`)
/// and the sequences are empty.
public final class StoreKitSession: Sendable {
    /// The local App Store behind the session.
    public let simulator: AppStoreSimulator
    /// The account signed in on the device.
    public let account: String
    /// The person and network around the device: sheet choices, offline, held purchases.
    public let customer: SimulatedCustomer
    let backend: any StoreBackend
    let verifier: SignedDataVerifier
    /// The storefront each time the account moves (`Storefront.updates`).
    let storefrontChanges = Broadcast<Storefront>()
    /// Purchases the customer starts on the App Store (`PurchaseIntent.intents`).
    let purchaseIntents = Broadcast<PurchaseIntent>(holdsUntilHeard: true)
    private let offerCodes = Mutex<[String]>([])
    private let storefrontWatch = Mutex<Int?>(nil)
    private let deviceLists = Mutex<[DeviceList: [String]]>([:])
    private let deviceTransactions = Mutex<[UInt64: Transaction]>([:])

    /// The transaction lists a device keeps for when the store cannot be reached.
    enum DeviceList: Hashable, Sendable { case all, currentEntitlements, unfinished }

    /// The store's answer for `list`; when the store cannot be reached, what the device kept: every transaction it
    /// was handed (for `all`), or the store's last answer (the others).
    func onDevice(_ list: DeviceList, fetch: () async throws -> [String]) async -> [String] {
        do {
            let answer = try await fetch()
            deviceLists.withLock { $0[list] = answer }
            return answer
        } catch {
            guard list == .all else { return deviceLists.withLock { $0[list] } ?? [] }
            return deviceTransactions.withLock { $0.values.sorted { $0.purchaseDate < $1.purchaseDate }.map(\.jws) }
        }
    }

    /// Keeps the latest statement of a transaction the store handed this device.
    private func keepOnDevice(_ transaction: Transaction) {
        deviceTransactions.withLock { kept in
            if let known = kept[transaction.id], known.signedDate > transaction.signedDate { return }
            kept[transaction.id] = transaction
        }
    }

    /// The store's clock now (the device's clock, in StoreKit's terms).
    public var now: Date { (try? simulator.now) ?? simulator.configuration.start }

    /// The device's identifier (`identifierForVendor`): what the app receipt's device hash is made of.
    public var deviceIdentifier: UUID { backend.deviceIdentifier }

    /// The app receipt on the device (what `Bundle.main.appStoreReceiptURL` holds on an Apple device): the one the
    /// store signs for the device now; offline, the last one it gave (nil when it never gave one).
    public func appReceipt() async throws -> [UInt8]? { try await backend.appReceipt() }

    /// The products the store sells, with their groups and offers.
    public var catalog: Catalog? { simulator.catalog }

    /// A device of `account` (opened, with one device, when the store does not know it yet) on `simulator`.
    public init(
        simulator: AppStoreSimulator, account: String = "customer", device: UUID? = nil,
        customer: SimulatedCustomer = SimulatedCustomer()
    ) throws {
        if !simulator.accountIDs.contains(account) { try simulator.createAccount(account) }
        self.simulator = simulator
        self.account = account
        self.customer = customer
        backend = try SimulatorBackend(simulator, account: account, device: device, customer: customer)
        verifier = try SignedDataVerifier(
            trustStore: simulator.pki.trustStore,
            configuration: .init(
                bundleID: simulator.configuration.bundleID, appAppleID: simulator.configuration.appAppleID,
                environments: [simulator.configuration.environment]))
        watchStorefront()
    }

    deinit { if let id = storefrontWatch.withLock({ $0 }) { simulator.removeChangeObserver(id) } }

    /// Sends the storefront to `Storefront.updates` whenever the store's state changes it; the session stops watching
    /// when it goes away.
    private func watchStorefront() {
        let last = Mutex(storefront())
        let id = simulator.onChange { [weak self] in
            guard let self, let now = self.storefront() else { return }
            let changed = last.withLock { last in
                defer { last = now }
                return last != now
            }
            if changed { self.storefrontChanges.send(now) }
        }
        storefrontWatch.withLock { $0 = id }
    }

    // MARK: - Which session StoreKit's calls reach

    @TaskLocal static var bound: StoreKitSession?
    private static let processDefault = Mutex<StoreKitSession?>(nil)

    /// Runs `body` with StoreKit's calls (and the tasks it starts, not detached ones) reaching this session.
    public func run<T>(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T) async rethrows -> T
    {
        try await Self.$bound.withValue(self, operation: body, isolation: isolation)
    }

    /// Runs synchronous `body` with StoreKit's calls reaching this session: to make a sequence (`Transaction.updates`,
    /// `Storefront.updates`) that a task started elsewhere then iterates.
    public func bind<T>(_ body: () throws -> T) rethrows -> T { try Self.$bound.withValue(self, operation: body) }

    /// Makes this the session every StoreKit call reaches when no `run(_:)` is in effect (detached tasks included).
    public func makeDefault() { Self.processDefault.withLock { $0 = self } }

    /// No process default any more.
    public static func clearDefault() { processDefault.withLock { $0 = nil } }

    /// The session a StoreKit call reaches now.
    static func current() throws(StoreKitError) -> StoreKitSession {
        if let session = bound ?? processDefault.withLock({ $0 }) { return session }
        throw StoreKitError.networkError(URLError(.notConnectedToInternet))
    }

    // MARK: - What the test does to the store (as SKTestSession)

    /// Whether purchases wait for a parent's approval (ask to buy): they answer `.pending`, and the transaction
    /// arrives through `Transaction.updates` after ``approveAskToBuy()``.
    public var askToBuyEnabled: Bool {
        get { (try? simulator.settings(account: account).askToBuy) ?? false }
        set { try? simulator.updateAccount(account, askToBuy: newValue) }
    }

    /// Moves the account to another storefront (ISO 3166-1 alpha-3): prices change, and `Storefront.updates` tells.
    public func setStorefront(_ countryCode: String) throws {
        try simulator.updateAccount(account, storefront: countryCode)
    }

    /// A parent approves every purchase waiting for approval.
    public func approveAskToBuy() throws { try settle(.askToBuy, approve: true) }

    /// A parent declines every purchase waiting for approval.
    public func declineAskToBuy() throws { try settle(.askToBuy, approve: false) }

    /// The next purchase is interrupted (the customer must act outside the app): it answers `.pending` until
    /// ``resolveInterruptedPurchases()``.
    public func interruptNextPurchase() { customer.willAct(.interrupt) }

    /// The customer completes every interrupted purchase outside the app; the transactions arrive through
    /// `Transaction.updates`.
    public func resolveInterruptedPurchases() throws { try settle(.interrupted, approve: true) }

    private func settle(_ reason: PendingPurchase.Reason, approve: Bool) throws {
        for pending in simulator.pendingPurchases where pending.accountID == account && pending.reason == reason {
            if approve { _ = try simulator.approve(pending.id) } else { try simulator.decline(pending.id) }
        }
    }

    /// Whether the device is offline: every call to the store fails as unreachable, and the transaction lists answer
    /// from what the device kept.
    public var isOffline: Bool {
        get { customer.isOffline }
        set { customer.isOffline = newValue }
    }

    /// The customer dismisses the next sheet (purchase or refund request).
    public func cancelNextSheet() { customer.willAct(.cancel) }

    /// Every later call of `operation` fails with `code` (nil: it works again), as StoreKit testing's failure settings.
    public func failOperation(_ operation: SimulatorOperation, with code: SimulatorError.Code?) {
        simulator.injectFailure(operation, code)
    }

    /// Moves the store's clock forward: subscriptions renew, expire, retry billing as they would.
    public func advanceClock(by seconds: TimeInterval) throws { try simulator.advance(by: seconds) }

    /// Apple refunds a transaction: it is revoked, and the revocation arrives through `Transaction.updates`.
    public func refundTransaction(_ id: UInt64) throws { try simulator.refund(String(id)) }

    /// The customer buys a product on another device of the account: it arrives here through `Transaction.updates`.
    @discardableResult
    public func buyOnAnotherDevice(_ productID: String) throws -> UInt64 {
        let other = try simulator.addDevice(account: account)
        guard case .purchased(let transaction) = try simulator.purchase(productID, account: account, device: other)
        else { throw StoreKitError.unknown }
        return UInt64(transaction.transactionID) ?? 0
    }

    /// The customer starts buying a product on the App Store (a promoted purchase, or a win-back offer by id): the
    /// app hears of it through `PurchaseIntent.intents` and completes it with `purchase(options:)`.
    public func customerStartsPurchaseOnAppStore(_ productID: String, offerID: String? = nil) async throws {
        let products = try await run { try await Product.products(for: [productID]) }
        guard let product = products.first else { throw StoreKitError.notAvailableInStorefront }
        let offer = offerID.flatMap { id in product.subscription?.winBackOffers.first { $0.id == id } }
        purchaseIntents.send(PurchaseIntent(product: product, offer: offer))
    }

    /// At the next offer-code sheet, the customer enters `code`.
    public func customerWillEnterOfferCode(_ code: String) { offerCodes.withLock { $0.append(code) } }

    func takeOfferCode() -> String? {
        offerCodes.withLock { $0.isEmpty ? nil : $0.removeFirst() }
    }

    private let refusedCodes = Mutex<[(code: String, reason: String)]>([])

    /// The offer codes the sheet refused (the code entered, the store's reason code), oldest first: StoreKit shows
    /// them to the customer and tells the app nothing.
    public var offerCodeRefusals: [(code: String, reason: String)] { refusedCodes.withLock { $0 } }

    func offerCodeRefused(_ code: String, _ reason: String) { refusedCodes.withLock { $0.append((code, reason)) } }

    // MARK: - Reading what the store signs

    /// A signed transaction, verified: nil only when it is not a transaction at all.
    func verifiedTransaction(_ jws: String, fromStore: Bool = true) async -> VerificationResult<Transaction>? {
        guard let verdict = try? await verifier.verifyTransaction(jws), let payload = verdict.payload,
            let transaction = Transaction(payload, jws: jws, session: self)
        else { return nil }
        if fromStore { keepOnDevice(transaction) }
        return verdict.isValid
            ? .verified(transaction) : .unverified(transaction, .init(verdict.failures))
    }

    /// Verifies a signed transaction as the device does (for tests: what the device makes of a document it did not
    /// get from this store).
    public func verify(_ jws: String) async -> VerificationResult<Transaction>? {
        await verifiedTransaction(jws, fromStore: false)
    }

    /// The account's storefront.
    func storefront() -> Storefront? {
        guard let countryCode = simulator.storefront(ofAccount: account) else { return nil }
        return Storefront(id: AppStoreSimulator.storefrontID(of: countryCode), countryCode: countryCode)
    }
}
