import Crypto
import Foundation
import Hummingbird
import IAPCatalog
import IAPCore
import IAPEntitlements
import IAPReceipts
import IAPServer
import IAPSignedData
import IAPSimulator
import IAPSimulatorServer
import IAPStoreClient
import IAPStoreKit
import IAPStoreKitBackend
import IAPTestSupport
import Logging
import Synchronization
import Testing

@testable import IAPStoreClientTesting

/// The validation modes a scenario runs in.
enum ModeKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    /// On the device: signed transactions (StoreHelper's way), the app receipt (IAPHelper's way); or the validation
    /// server's verdict on each signed transaction (SwiftyReceiptValidator's way).
    case signedTransactions, appReceipt, server
    var testDescription: String { rawValue }
}

/// How the store reaches the simulator: in process, over `iapkit serve`'s `/simulator` API on a real socket, or
/// through StoreKit 2's API (the StoreKit backend over the stand-in, on a session over the simulator in process, or
/// over `/simulator` on a real socket).
enum Transport: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case inProcess, http, storeKit, storeKitOverHTTP
    var testDescription: String { rawValue }
    /// Whether the store reaches the simulator through StoreKit's API.
    var isStoreKit: Bool { self == .storeKit || self == .storeKitOverHTTP }
    /// Whether the device reaches the simulator over HTTP.
    var isHTTP: Bool { self == .http || self == .storeKitOverHTTP }
}

/// A device's backend with the simulated person and network around it.
protocol SimulatedDevice: StoreBackend {
    var customer: SimulatedCustomer { get }
}

extension SimulatorBackend: SimulatedDevice {}
extension HTTPStoreBackend: SimulatedDevice {}
extension StoreKitBackend: SimulatedDevice {
    var customer: SimulatedCustomer { session.customer }
}

/// A florist simulator on a frozen clock with fixed keys, and stores built over it the way an app builds one.
struct StoreHarness: Sendable {
    static let bundleID = "com.example.florist"
    static let start = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00:00Z

    let simulator: AppStoreSimulator
    let mode: ModeKind
    /// Where the server serving `simulator` listens, when the transport is HTTP.
    private(set) var server: URL?
    /// Whether stores reach the simulator through StoreKit's API.
    private(set) var throughStoreKit = false
    /// Where the validation server listens, in server mode.
    private(set) var validationServer: URL?

    /// Runs `body` with a harness whose stores reach the simulator over `transport`. Over HTTP, a real server (the
    /// validation server's application, with this simulator under `/simulator`) listens on a loopback port for the
    /// length of `body`.
    static func run(
        _ mode: ModeKind, _ transport: Transport, _ body: @Sendable (StoreHarness) async throws -> Void
    ) async throws {
        var harness = try StoreHarness(mode)
        harness.throughStoreKit = transport.isStoreKit
        let world = harness
        guard transport.isHTTP || mode == .server else { return try await body(world) }
        try await serve(world.simulator, apiKeys: [validationKey]) { url in
            var served = world
            served.validationServer = url
            if transport.isHTTP { served.server = url }
            try await body(served)
        }
    }

    /// The API key the harness's server accepts for `/v1`.
    static let validationKey = "store-harness-validation-key"
    /// How long a test's client waits for a loopback answer. Generous: with the whole suite running at once on two
    /// slow cores, in-process servers have been starved for more than 5 s (CI, 2026-11-27). No test waits it out; the
    /// unreachable cases are refused connections.
    static let requestLimit: Duration = .seconds(30)
    /// The key the harness's servers sign their answers with; server validation checks every answer against it.
    static let answerSigner = AnswerSigner(keyID: "answers-2026", key: TestJWS.key("answer signing key"))

    /// Runs `body` while a real server (the validation server's application over an in-memory storage, with
    /// `simulator` under `/simulator`) listens on a loopback port: `port`, or a free one when 0.
    @discardableResult
    static func serve<Value: Sendable>(
        _ simulator: AppStoreSimulator, port: Int = 0, adminToken: String? = nil, apiKeys: [String] = [],
        heartbeat: Duration = .seconds(15), answerSigner: AnswerSigner? = StoreHarness.answerSigner,
        _ body: @Sendable (URL) async throws -> Value
    ) async throws -> Value {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let app = AppConfiguration(
            bundleID: simulator.configuration.bundleID, appAppleID: simulator.configuration.appAppleID,
            environments: [.sandbox], trustStore: SimulatorTestKeys.pki.trustStore, catalog: simulator.catalog)
        let service = try ValidationService(
            apps: [app], storage: MemoryStorage(), clock: { (try? simulator.now) ?? start }, logger: logger)
        var configuration = ServerConfiguration(
            host: "127.0.0.1", port: port, apiKeys: apiKeys, updatesHeartbeat: heartbeat)
        configuration.answerSigner = answerSigner
        // Run as `iapkit serve` runs it (not through the testing framework, which always picks a new port), so a test
        // can stop a server and start another on the same port.
        return try await LoopbackServer.serve({ onRunning in
            buildApplication(
                service: service, configuration: configuration,
                simulator: simulator, operatorAccess: adminToken.map { .token($0) } ?? .open, logger: logger,
                onServerRunning: onRunning)
        }) { bound in try await body(URL(string: "http://127.0.0.1:\(bound)")!) }
    }

    init(_ mode: ModeKind, pki: SimulatorPKI = SimulatorTestKeys.pki, bundleID: String = Self.bundleID) throws {
        self.mode = mode
        simulator = try AppStoreSimulator(
            catalog: Self.catalog,
            configuration: SimulatorConfiguration(
                bundleID: bundleID, start: Self.start, billingGracePeriodEnabled: false,
                offerCodes: [Self.offerCode: OfferCodeGrant(productID: FloristCatalog.gold, offerID: "spring")]),
            pki: pki)
    }

    /// The code that grants gold's "spring" offer (a month free).
    static let offerCode = "SPRING26"

    /// The florist's products, gold with an offer code.
    static let catalog: Catalog = {
        var catalog = FloristCatalog.catalog
        let gold = catalog.products.firstIndex { $0.id == FloristCatalog.gold }!
        catalog.products[gold].subscription?.offerCodes = [
            SubscriptionOffer(
                id: "spring", paymentMode: .freeTrial, period: SubscriptionPeriod(value: 1, unit: .month),
                numberOfPeriods: 1)
        ]
        return catalog
    }()

    /// A verifier of the simulator's signed data, whatever the mode (to read what a backend answers).
    func signedDataVerifier() throws -> SignedDataVerifier {
        try SignedDataVerifier(
            trustStore: SimulatorTestKeys.pki.trustStore,
            configuration: .init(
                bundleID: simulator.configuration.bundleID, appAppleID: simulator.configuration.appAppleID,
                environments: [simulator.configuration.environment]))
    }

    /// The validation mode, trusting the simulator's roots (the fixed test PKI, never another one).
    func validation() throws -> ValidationMode {
        let configuration = simulator.configuration
        switch mode {
        case .signedTransactions:
            return .signedTransactions(
                try SignedDataVerifier(
                    trustStore: SimulatorTestKeys.pki.trustStore,
                    configuration: .init(
                        bundleID: Self.bundleID, appAppleID: configuration.appAppleID,
                        environments: [configuration.environment])))
        case .appReceipt:
            return .appReceipt(
                ReceiptVerifier(
                    trustStore: SimulatorTestKeys.pki.trustStore,
                    configuration: .init(bundleID: Self.bundleID, appVersion: configuration.appVersion)))
        case .server:
            let url = try #require(validationServer, "server mode runs inside StoreHarness.run")
            return .server(
                ValidationServer(
                    url: url, apiKey: Self.validationKey, document: .signedTransaction, timeout: Self.requestLimit,
                    answerVerification: AnswerVerification(
                        keys: [Self.answerSigner.keyID: Self.answerSigner.key.publicKey])))
        }
    }

    /// A customer with one device.
    func customer(_ id: String, askToBuy: Bool = false) throws {
        try simulator.createAccount(id, askToBuy: askToBuy)
        _ = try simulator.addDevice(account: id)
    }

    /// The account's device `device` (its first when nil), in process or over HTTP as the harness runs.
    func backend(_ account: String, device: UUID? = nil) async throws -> any SimulatedDevice {
        if throughStoreKit, let server {
            return StoreKitBackend(
                session: try await StoreKitSession.connect(
                    to: server, account: account, device: device, timeout: Self.requestLimit))
        }
        if throughStoreKit {
            return StoreKitBackend(session: try StoreKitSession(simulator: simulator, account: account, device: device))
        }
        if let server {
            return try await HTTPStoreBackend.connect(
                to: server, account: account, device: device, timeout: Self.requestLimit, updatesIdleLimit: .seconds(5))
        }
        return try SimulatorBackend(simulator, account: account, device: device)
    }

    /// A store over `backend`, started (cache, updates, products, reconciliation), with its events recorded.
    func store(
        _ backend: any StoreBackend, persistence: any StorePersistence = MemoryStorePersistence()
    ) async throws -> (Store, EventLog) {
        let store = Store(
            catalog: FloristCatalog.catalog, backend: backend, validation: try validation(), persistence: persistence)
        let log = EventLog(await store.events())
        await store.start()
        return (store, log)
    }
}

/// The events of one store, recorded as they come, with a bounded wait for one to arrive.
final class EventLog: Sendable {
    private final class Box: Sendable { let events = Mutex<[StoreEvent]>([]) }
    private let box = Box()
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<StoreEvent>) {
        let box = self.box
        task = Task { for await event in stream { box.events.withLock { $0.append(event) } } }
    }

    deinit { task.cancel() }

    var events: [StoreEvent] { box.events.withLock { $0 } }
    var kinds: [StoreEvent.Kind] { events.map(\.kind) }

    func count(_ kind: StoreEvent.Kind, product: String? = nil) -> Int {
        events.filter { $0.kind == kind && (product == nil || $0.productID == product) }.count
    }

    /// Waits until `count` events of `kind` (for `product`, when given) have arrived, for at most 15 s of the
    /// waiter's own running time.
    ///
    /// Not 5 s of the wall clock: on two cores the full parallel run keeps both threads of the cooperative pool
    /// busy with other suites' work for seconds at a time (measured: a waiter went 6.3 s without being scheduled,
    /// and so did the Store's update listener it was waiting for). Time between two polls counts at most 50 ms, so
    /// only time in which the store could have run counts. 5 s of it were not always enough (2026-11-30, CI: a
    /// purchase's finish, an HTTP request of its own, arrived just after them while PostgreSQL suites ran). A
    /// wall-clock ceiling of 120 s still ends a wait for an event that never comes.
    func wait(
        for kind: StoreEvent.Kind, product: String? = nil, count: Int = 1,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let clock = ContinuousClock()
        let ceiling = clock.now + .seconds(120)
        var budget = Duration.seconds(15)
        var last = clock.now
        while self.count(kind, product: product) < count {
            let now = clock.now
            budget -= min(now - last, .milliseconds(50))
            last = now
            guard budget > .zero, now < ceiling else {
                Issue.record(
                    "no \(kind) event for \(product ?? "any product") in 15 s of running time; saw \(kinds)",
                    sourceLocation: sourceLocation)
                return
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }
}

/// A backend that changes one thing about another: it hands out what another store signed (a foreign key, another
/// app), to prove the Store refuses it, or its first finishes fail as when the store cannot be reached.
struct AlteredBackend: StoreBackend {
    let base: any StoreBackend
    /// Where purchases and receipts come from when set: a store with other keys or another bundle id, same catalog.
    var forger: (any StoreBackend)? = nil
    /// How many finishes are still to fail with `networkError` before they reach the base.
    let unreachableFinishes: Countdown

    init(base: any StoreBackend, forger: (any StoreBackend)? = nil, unreachableFinishes: Int = 0) {
        self.base = base
        self.forger = forger
        self.unreachableFinishes = Countdown(unreachableFinishes)
    }

    /// A number taken down by one at each ``take()``, shared by copies of the backend.
    final class Countdown: Sendable {
        let left: Atomic<Int>
        init(_ count: Int) { left = Atomic(count) }
        /// Whether the count was above zero before this one was taken.
        func take() -> Bool { left.wrappingSubtract(1, ordering: .sequentiallyConsistent).oldValue > 0 }
        /// Starts again from `count`.
        func reset(to count: Int) { left.store(count, ordering: .sequentiallyConsistent) }
    }

    var deviceIdentifier: UUID { base.deviceIdentifier }
    func now() async throws(StoreError) -> Date { try await base.now() }
    func products(for ids: [String]) async throws(StoreError) -> [StoreProduct] { try await base.products(for: ids) }
    func purchase(_ request: PurchaseRequest) async throws(StoreError) -> BackendPurchaseResult {
        try await (forger ?? base).purchase(request)
    }
    func transactionUpdates() -> AsyncStream<String> { base.transactionUpdates() }
    func allTransactions() async throws(StoreError) -> [String] { try await base.allTransactions() }
    func unfinishedTransactions() async throws(StoreError) -> [String] { try await base.unfinishedTransactions() }
    func currentEntitlements() async throws(StoreError) -> [String] { try await base.currentEntitlements() }
    func latestTransaction(for productID: String) async throws(StoreError) -> String? {
        try await base.latestTransaction(for: productID)
    }
    func redeemOfferCode(_ code: String?) async throws(StoreError) { try await base.redeemOfferCode(code) }
    func finish(transactionID: String) async throws(StoreError) {
        if unreachableFinishes.take() {
            throw StoreError(.networkError, "the store cannot be reached (AlteredBackend)")
        }
        try await base.finish(transactionID: transactionID)
    }
    func sync() async throws(StoreError) { try await base.sync() }
    func subscriptionRenewalInfos() async throws(StoreError) -> [String] { try await base.subscriptionRenewalInfos() }
    func appTransaction() async throws(StoreError) -> String { try await base.appTransaction() }
    func appReceipt() async throws(StoreError) -> [UInt8]? { try await (forger ?? base).appReceipt() }
    func requestRefund(transactionID: String) async throws(StoreError) -> RefundRequestStatus {
        try await base.requestRefund(transactionID: transactionID)
    }
    func manageSubscriptions() async throws(StoreError) -> URL { try await base.manageSubscriptions() }
}
