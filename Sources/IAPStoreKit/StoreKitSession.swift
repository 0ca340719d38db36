public import AsyncHTTPClient
public import Foundation
import IAPCore
import IAPSignedData
public import IAPSimulator
import IAPStoreClient
public import IAPStoreClientTesting
public import IAPTrust
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
/// The store is in this process (``init(simulator:account:device:customer:)``) or is the one a running
/// `iapkit serve` keeps, through its `/simulator` API (``connect(to:account:device:adminToken:roots:customer:timeout:httpClient:)``):
/// the same calls, the same controls, documents signed and verified the same way; over HTTP, several test processes
/// (or a person at the server's pages) can share one store.
///
/// StoreKit's API is static, so the session it talks to is found at each call: the one `run(_:)` bound to the
/// current task (tests run in parallel, each with its own), or else the process's default (`makeDefault()`), which a
/// detached task sees too. With neither, calls fail as a store that cannot be reached (`StoreKitError.networkError`)
/// and the sequences are empty.
public final class StoreKitSession: Sendable {
    /// The local App Store behind the session when it runs in this process; nil for a session over `iapkit serve`.
    public let simulator: AppStoreSimulator?
    /// The account signed in on the device.
    public let account: String
    /// The person and network around the device: sheet choices, offline, held purchases.
    public let customer: SimulatedCustomer
    let backend: any StoreBackend
    let verifier: SignedDataVerifier
    /// What the test does to the store.
    private let store: any SessionStore
    /// The storefront each time the account moves (`Storefront.updates`).
    let storefrontChanges = Broadcast<Storefront>()
    /// Purchases the customer starts on the App Store (`PurchaseIntent.intents`).
    let purchaseIntents = Broadcast<PurchaseIntent>(holdsUntilHeard: true)
    private let offerCodes = Mutex<[String]>([])
    private let deviceLists = Mutex<[DeviceList: [String]]>([:])
    private let deviceTransactions = Mutex<[UInt64: Transaction]>([:])
    /// Passes the store's storefront changes on to `Storefront.updates` while the session lives.
    private let storefrontWatch: Task<Void, Never>

    /// A device of `account` (opened, with one device, when the store does not know it yet) on `simulator`, in this
    /// process.
    public convenience init(
        simulator: AppStoreSimulator, account: String = "customer", device: UUID? = nil,
        customer: SimulatedCustomer = SimulatedCustomer()
    ) throws {
        if !simulator.accountIDs.contains(account) { try simulator.createAccount(account) }
        let configuration = simulator.configuration
        self.init(
            simulator: simulator, account: account, customer: customer,
            backend: try SimulatorBackend(simulator, account: account, device: device, customer: customer),
            verifier: try SignedDataVerifier(
                trustStore: simulator.pki.trustStore,
                configuration: .init(
                    bundleID: configuration.bundleID, appAppleID: configuration.appAppleID,
                    environments: [configuration.environment])),
            store: LocalSessionStore(simulator: simulator, account: account))
    }

    /// A device of `account` on the local App Store of a running `iapkit serve`, through its `/simulator` API: the
    /// account is opened (with one device) when the store does not know it; the device is `device`, or the
    /// account's first.
    ///
    /// - Parameters:
    ///   - server: where `iapkit serve` listens, e.g. `http://127.0.0.1:8080`.
    ///   - adminToken: the server's admin token, when its `/simulator` requires one.
    ///   - roots: the roots the device trusts; nil for those the server reports (`GET /simulator/trust`), which
    ///     suits a server you run. Pass the exported roots (`iapkit serve --pki DIR` writes them) to verify against
    ///     roots you hold yourself.
    ///   - timeout: the limit of each request (the event streams stay open).
    public static func connect(
        to server: URL, account: String = "customer", device: UUID? = nil, adminToken: String? = nil,
        roots: TrustStore? = nil, customer: SimulatedCustomer = SimulatedCustomer(), timeout: Duration = .seconds(10),
        httpClient: HTTPClient = .shared
    ) async throws -> StoreKitSession {
        let backend = try await HTTPStoreBackend.connect(
            to: server, account: account, device: device, adminToken: adminToken, customer: customer,
            createAccount: true, timeout: timeout, httpClient: httpClient)
        let http = JSONHTTPClient(
            baseURL: server, headers: adminToken.map { [("Authorization", "Bearer \($0)")] } ?? [], timeout: timeout,
            unreachable: .networkError, transport: AsyncHTTPClientTransport(client: httpClient))
        let trust = try await http.decode(SimulatorWire.Trust.self, "GET", "/simulator/trust")
        // Apple's own roots are refused under another key; something that is not base64 is no certificate.
        let trustStore =
            try roots
            ?? TrustStore(
                roots: trust.rootCertificates.flatMap { text in
                    try TrustAnchorLoader.certificates(from: Array(Data(base64Encoded: text) ?? Data()))
                })
        let environment = AppStoreEnvironment(rawValue: trust.environment)
        let session = StoreKitSession(
            simulator: nil, account: account, customer: customer, backend: backend,
            verifier: try SignedDataVerifier(
                trustStore: trustStore,
                configuration: .init(
                    bundleID: trust.bundleId, appAppleID: trust.appAppleId, environments: [environment])),
            store: RemoteSessionStore(http: http, account: account))
        // The storefront stream is live before the test can move the account.
        await backend.updatesSubscribed()
        return session
    }

    private init(
        simulator: AppStoreSimulator?, account: String, customer: SimulatedCustomer, backend: any StoreBackend,
        verifier: SignedDataVerifier, store: any SessionStore
    ) {
        self.simulator = simulator
        self.account = account
        self.customer = customer
        self.backend = backend
        self.verifier = verifier
        self.store = store
        let changes = backend.storefrontChanges()
        let broadcast = storefrontChanges
        storefrontWatch = Task {
            for await countryCode in changes { broadcast.send(Storefront(countryCode: countryCode)) }
        }
    }

    deinit { storefrontWatch.cancel() }

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
    public func now() async throws -> Date { try await backend.now() }

    /// The device's identifier (`identifierForVendor`): what the app receipt's device hash is made of.
    public var deviceIdentifier: UUID { backend.deviceIdentifier }

    /// The app receipt on the device (what `Bundle.main.appStoreReceiptURL` holds on an Apple device): the one the
    /// store signs for the device now; offline, the last one it gave (nil when it never gave one).
    public func appReceipt() async throws -> [UInt8]? { try await backend.appReceipt() }

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

    /// Whether purchases wait for a parent's approval (ask to buy).
    public var askToBuyEnabled: Bool {
        get async throws(SimulatorError) { try await control { try await store.askToBuy() } }
    }

    /// Makes purchases wait for a parent's approval (ask to buy), or not: they answer `.pending`, and the transaction
    /// arrives through `Transaction.updates` after ``approveAskToBuy()``.
    public func setAskToBuyEnabled(_ enabled: Bool) async throws(SimulatorError) {
        try await control { try await store.update(askToBuy: enabled, storefront: nil) }
    }

    /// Moves the account to another storefront (ISO 3166-1 alpha-3): prices change, and `Storefront.updates` tells.
    public func setStorefront(_ countryCode: String) async throws(SimulatorError) {
        try await control { try await store.update(askToBuy: nil, storefront: countryCode) }
    }

    /// A parent approves every purchase waiting for approval.
    public func approveAskToBuy() async throws(SimulatorError) { try await settle(.askToBuy, approve: true) }

    /// A parent declines every purchase waiting for approval.
    public func declineAskToBuy() async throws(SimulatorError) { try await settle(.askToBuy, approve: false) }

    /// The next purchase is interrupted (the customer must act outside the app): it answers `.pending` until
    /// ``resolveInterruptedPurchases()``.
    public func interruptNextPurchase() { customer.willAct(.interrupt) }

    /// The customer completes every interrupted purchase outside the app; the transactions arrive through
    /// `Transaction.updates`.
    public func resolveInterruptedPurchases() async throws(SimulatorError) {
        try await settle(.interrupted, approve: true)
    }

    private func settle(_ reason: PendingPurchase.Reason, approve: Bool) async throws(SimulatorError) {
        try await control {
            for id in try await store.pendingPurchases(reason) { try await store.settle(pending: id, approve: approve) }
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

    /// Every later call of `operation` fails with `code` (nil: it works again), as StoreKit testing's failure
    /// settings. Over HTTP the failure is the server's: every device of that store sees it.
    public func failOperation(_ operation: SimulatorOperation, with code: SimulatorError.Code?)
        async throws(SimulatorError)
    {
        try await control { try await store.failOperation(operation, with: code) }
    }

    /// Moves the store's clock forward (over HTTP, by whole seconds): subscriptions renew, expire, retry billing as
    /// they would.
    public func advanceClock(by seconds: TimeInterval) async throws(SimulatorError) {
        try await control { try await store.advanceClock(by: seconds) }
    }

    /// Apple refunds a transaction: it is revoked, and the revocation arrives through `Transaction.updates`.
    public func refundTransaction(_ id: UInt64) async throws(SimulatorError) {
        try await control { try await store.refund(String(id)) }
    }

    /// The customer buys a product on another device of the account: it arrives here through `Transaction.updates`.
    @discardableResult
    public func buyOnAnotherDevice(_ productID: String) async throws(SimulatorError) -> UInt64 {
        let id = try await control { try await store.buyOnAnotherDevice(productID) }
        guard let number = UInt64(id) else {
            throw SimulatorError(.invalidArgument, "the store answered transaction id '\(id)'")
        }
        return number
    }

    /// Runs a control, its failures as the store's: the simulator's own error in process, the server's code (or
    /// `networkError` when it cannot be reached) over HTTP.
    private func control<T>(_ body: () async throws -> T) async throws(SimulatorError) -> T {
        do { return try await body() } catch let error as SimulatorError { throw error } catch let error as StoreError {
            throw SimulatorError(.init(rawValue: error.code.rawValue), error.reason)
        } catch {
            throw SimulatorError(.init(rawValue: "unknown"), "\(error)")
        }
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

    /// The account's storefront, nil when the store cannot say.
    func storefront() async -> Storefront? {
        guard let countryCode = try? await store.storefront() else { return nil }
        return Storefront(countryCode: countryCode)
    }
}

extension Storefront {
    /// The storefront of a country (ISO 3166-1 alpha-3), with the App Store's id for it.
    init(countryCode: String) {
        self.init(id: AppStoreSimulator.storefrontID(of: countryCode), countryCode: countryCode)
    }
}
