public import Foundation
public import IAPCatalog
import IAPCore
public import IAPEntitlements
import IAPSignedData
public import Logging

/// An app's in-app purchases from launch: products, one purchase at a time with a clear state, transaction updates
/// listened to from the first moment, every transaction verified before anything unlocks and finished only after,
/// restore, consumable counts, subscription and purchase info, and an offline start from a fallback cache.
///
/// The Store is an actor rather than a main-actor `@Observable` model: it has to run where there is no main run loop
/// (servers, command-line tools, tests on Linux), and it must serialize the purchase flow and the updates listener
/// against each other, which an actor does by construction. A SwiftUI app mirrors it on the main actor by listening
/// to ``events()`` and reading the answers it needs.
///
/// Every answer about what the customer owns comes from the entitlement engine (``entitlements``), fed only with
/// verified data, in one of three ways (``ValidationMode``).
///
/// ```swift
/// let store = await Store(catalog: catalog, backend: backend, validation: .signedTransactions(verifier))
/// await store.start()
/// let state = try await store.purchase("com.example.florist.flowers")
/// let owned = await store.isPurchased("com.example.florist.flowers")
/// ```
public actor Store {
    /// The app's product configuration, completed with what the store says of each product where the configuration
    /// is silent (a flat `Products.plist` lists ids only).
    public private(set) var catalog: Catalog
    public let backend: any StoreBackend
    public let validationMode: ValidationMode
    private var validation: Validation
    private var engine: EntitlementEngine
    private let persistence: any StorePersistence
    private let logger: Logger
    /// The app's identifier for this customer, written into every purchase.
    public private(set) var appAccountToken: UUID?

    /// The products the store sells among the configuration's, in configuration order (the cached list when the store
    /// could not be asked).
    public private(set) var products: [StoreProduct] = []
    /// What the customer owns, as of the last verified change (``refresh()`` recomputes it at the store's moment).
    public private(set) var entitlements: EntitlementSnapshot
    /// Where ``entitlements`` comes from.
    public private(set) var origin: EntitlementOrigin = .none
    /// The last purchase state of each product asked for.
    public private(set) var purchaseStates: [String: PurchaseState] = [:]

    private var state = VerifiedState()
    /// Changes accepted while each reconciliation under way rebuilds the state, by reconciliation.
    private var openJournals: [Int: [StateChange]] = [:]
    private var nextJournal = 0
    private var productInPurchase: String?
    private var seenDocuments: Set<String> = []
    private var listeners: [UUID: AsyncStream<StoreEvent>.Continuation] = [:]
    private var updates: AsyncStream<String>?
    /// The store's other streams, made with the Store too (Apple asks that purchase intents be listened to as early as
    /// possible at launch): their elements wait until ``start()`` handles them.
    private var storefronts: AsyncStream<String>?
    private var intents: AsyncStream<StorePurchaseIntent>?
    private var listenerTask: Task<Void, Never>?
    private var storeListeners: [Task<Void, Never>] = []
    /// Calls to the validation server under way (reconciliations among them), whether two overlapped since the last
    /// catch-up, whether its read failed, and the purchases waiting for a call to end (``catchUpWithTheServer()``).
    private var serverCallsInFlight = 0
    private var reconcileCallsInFlight = 0
    private var serverAnswersOverlapped = false
    private var catchingUp: Task<Void, Never>?
    private var catchUpFailed = false
    private var callEndWaiters: [CheckedContinuation<Void, Never>] = []
    /// Counts logins and logouts: an answer asked for before one is not this customer's.
    private var identity = 0
    /// The revoked transactions announced so far (an answer can take one away that a later one brings back).
    private var announcedRevocations: Set<String> = []
    /// The offer-code purchases announced (a refund or a redelivery re-signs the same transaction).
    var announcedOfferCodes: Set<String> = []

    /// A store for the products of `catalog` (a `Products.plist` or `.storekit` file's), subscribed to transaction
    /// updates, storefront changes and purchase intents at once: nothing the store sends from now on is missed, and
    /// ``start()`` handles what it buffered. Make one Store and start it: a Store dropped unstarted takes what it
    /// buffered with it.
    public init(
        catalog: Catalog, backend: any StoreBackend, validation: ValidationMode,
        persistence: any StorePersistence = MemoryStorePersistence(), appAccountToken: UUID? = nil,
        policy: EntitlementPolicy = EntitlementPolicy(), logger: Logger = Logger(label: "iapkit.store")
    ) {
        updates = backend.transactionUpdates()
        storefronts = backend.storefrontChanges()
        intents = backend.purchaseIntents()
        self.catalog = catalog
        self.backend = backend
        self.validationMode = validation
        self.engine = EntitlementEngine(catalog: catalog, policy: policy)
        self.validation = Validation(mode: validation, backend: backend, engine: engine)
        self.persistence = persistence
        self.appAccountToken = appAccountToken
        self.logger = logger
        entitlements = EntitlementSnapshot(moment: Date(timeIntervalSince1970: 0))
    }

    deinit {
        listenerTask?.cancel()
        for task in storeListeners { task.cancel() }
    }

    // MARK: - Launch

    /// Launch: answers from the fallback cache first, loads products, reconciles the cache with verified data from the
    /// store, then handles the transaction updates (those sent since the Store was made waited for it). Safe to call
    /// more than once (later calls reload and reconcile).
    public func start() async {
        let launching = updates != nil
        if let updates {
            self.updates = nil
            await loadCache()
            await backend.updatesSubscribed()
            await loadProducts()
            await reconcile()
            // What the store sent since the Store was made waited in the stream; handling it after the first
            // reconciliation means a validation server already knows this device's customer when it hears of it.
            listenerTask = Task { [weak self] in
                for await document in updates {
                    guard let self else { return }
                    await self.receiveUpdate(document)
                }
            }
            listenToTheStore()
        }
        guard !launching else { return }
        await loadProducts()
        await reconcile()
    }

    /// Reloads the products when the storefront changes; completes purchases started on the App Store.
    private func listenToTheStore() {
        guard let storefronts, let intents else { return }
        (self.storefronts, self.intents) = (nil, nil)
        storeListeners = [
            Task { [weak self] in
                for await storefront in storefronts {
                    guard let self else { return }
                    await self.storefrontChanged(to: storefront)
                }
            },
            Task { [weak self] in
                for await intent in intents {
                    guard let self else { return }
                    await self.complete(intent)
                }
            },
        ]
    }

    private func storefrontChanged(to storefront: String) async {
        emit(StoreEvent(.storefrontChanged, detail: storefront))
        await loadProducts()
    }

    /// A purchase the customer started on the App Store, completed as one started in the app.
    private func complete(_ intent: StorePurchaseIntent) async {
        emit(StoreEvent(.purchaseIntentReceived, productID: intent.productID, detail: intent.winBackOfferID))
        // The purchase reports its own outcome through events and purchase states.
        _ = try? await purchase(intent.productID, offer: intent.winBackOfferID.map { .winBack(offerID: $0) })
    }

    private func loadCache() async {
        let cache: StoreCache?
        do { cache = try await persistence.load() } catch {
            emit(StoreEvent(.reconcileFailed, detail: error.reason))
            return
        }
        guard let cache else { return }
        state = VerifiedState(
            history: cache.history, serverSnapshot: cache.serverSnapshot, serverCustomerID: cache.serverCustomerID,
            ledger: cache.ledger ?? ConsumableLedger())
        products = cache.products
        complete()
        origin = .cache(savedAt: cache.savedAt)
        await recompute()
        emit(StoreEvent(.cacheLoaded, detail: "saved \(cache.savedAt)"))
    }

    /// Asks the store for the configuration's products; keeps the cached list when it cannot.
    public func loadProducts() async {
        do {
            let loaded = try await backend.products(for: catalog.products.map(\.id))
            let order = Dictionary(catalog.products.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { a, _ in a })
            products = loaded.sorted { (order[$0.id] ?? .max) < (order[$1.id] ?? .max) }
            if complete() { await recompute() }
            emit(StoreEvent(.productsLoaded, detail: "\(products.count) products"))
            await save()
        } catch {
            emit(StoreEvent(.productsUnavailable, detail: error.reason))
        }
    }

    /// Completes the catalog with what the store said of the products; returns whether that changed it (the engine
    /// then classifies with the completed one).
    @discardableResult
    private func complete() -> Bool {
        let completed = catalog.completed(with: products)
        guard completed != catalog else { return false }
        catalog = completed
        engine = EntitlementEngine(catalog: completed, policy: engine.policy)
        validation = Validation(mode: validationMode, backend: backend, engine: engine)
        return true
    }

    /// Rebuilds the verified state from what the store holds on this device; on failure the current answers (the
    /// cache) stay. Nothing is asked of the customer: the App Store is never synced here (a sign-in prompt on a
    /// device), ``restore()`` does that.
    public func reconcile() async {
        // The rebuilt state replaces the current one, then gets what was accepted while it was being rebuilt.
        let journal = nextJournal
        nextJournal += 1
        openJournals[journal] = []
        defer { openJournals[journal] = nil }
        do {
            let (current, token, validation) = (state, appAccountToken, validation)
            var (next, failures) = try await askingTheServer(reconciling: true) { () async throws(StoreError) in
                try await validation.reconcile(state: current, appAccountToken: token)
            }
            for failure in failures { emit(StoreEvent(.verificationFailed, detail: failure.reason)) }
            for change in openJournals[journal] ?? [] { change.apply(to: &next) }
            let before = entitlements
            state = next
            origin = .verified
            await recompute()
            announceRevocations(since: before)
            emit(StoreEvent(.reconciled, detail: "\(entitlements.entitledProductIDs.count) products owned"))
            await save()
            catchUpWithTheServer()
        } catch {
            emit(StoreEvent(.reconcileFailed, detail: error.reason))
        }
    }

    /// Recomputes ``entitlements`` at the store's current moment (subscriptions expire as time passes).
    public func refresh() async { await recompute() }

    // MARK: - Identity

    /// The customer logged in to the app: purchases from now on carry `user` as their app account token. With a
    /// validation server, the customer this device was until now (an anonymous install, who never logged in) is merged
    /// into `user` there: their purchases become `user`'s, and the server's answer is the device's from now on. A
    /// customer who logged in before switches to `user` instead (nothing moves). Pass the same token as
    /// `appAccountToken` when the app starts with the user logged in.
    public func logIn(_ user: UUID) async throws(StoreError) {
        identity += 1
        announcedRevocations = []
        if case .server(let server) = validationMode {
            let state = state
            let answer = try await askingTheServer { () async throws(StoreError) in
                try await server.logIn(user, state: state)
            }
            await accept(StateChange.server(answer), verified: false)
        }
        appAccountToken = user
        emit(StoreEvent(.loggedIn, detail: user.uuidString.lowercased()))
        await reconcile()
    }

    /// The user logged out: the device becomes a new anonymous customer. What the store still holds (purchases of the
    /// Apple ID on this device) is claimed for the new customer at the next reconcile, and the server's transfer
    /// policy decides whether it moves from the user who logged out.
    public func logOut() async {
        identity += 1
        announcedRevocations = []
        appAccountToken = nil
        // What was verified was the user's; the device keeps only its own consumable ledger.
        state = state.rebuilt(history: PurchaseHistory())
        // A new customer of its own: the device must not adopt the owner of the purchases it still holds.
        state.serverCustomerID = if case .server = validationMode { UUID().uuidString.lowercased() } else { nil }
        emit(StoreEvent(.loggedOut))
        await recompute()
        await save()
        await reconcile()
    }

    // MARK: - Purchase

    /// Buys a product: one purchase at a time (another one in progress throws ``StoreError/Code/purchaseInProgress``).
    /// Returns `.purchased` with the transaction (verified, unlocked, finished or being finished, in the answers as of
    /// after the server calls that overlapped it), `.pending` (resolved later through updates) or `.cancelled`; throws when the store
    /// fails (`.failed`) or what it handed out does not verify (`.failedVerification`: nothing unlocked or finished).
    @discardableResult
    public func purchase(
        _ productID: String, quantity: Int = 1, offer: PurchaseOffer? = nil,
        introductoryOfferEligibility: String? = nil
    ) async throws(StoreError) -> StorePurchaseResult {
        guard catalog.product(productID) != nil else {
            throw StoreError(.unknownProduct, "\(productID) is not in the product configuration")
        }
        if let productInPurchase {
            throw StoreError(.purchaseInProgress, "the purchase of \(productInPurchase) has not finished yet")
        }
        productInPurchase = productID
        defer { productInPurchase = nil }
        purchaseStates[productID] = .inProgress
        emit(StoreEvent(.purchaseStarted, productID: productID))

        let result: BackendPurchaseResult
        do {
            result = try await backend.purchase(
                PurchaseRequest(
                    productID: productID, quantity: quantity, appAccountToken: appAccountToken,
                    offer: offer, introductoryOfferEligibility: introductoryOfferEligibility))
        } catch {
            purchaseStates[productID] = .failed(error)
            emit(StoreEvent(.purchaseFailed, productID: productID, detail: "\(error.code): \(error.reason)"))
            throw error
        }
        switch result {
        case .userCancelled:
            purchaseStates[productID] = .cancelled
            emit(StoreEvent(.purchaseCancelled, productID: productID))
            return StorePurchaseResult(state: .cancelled)
        case .pending:
            purchaseStates[productID] = .pending
            emit(StoreEvent(.purchasePending, productID: productID))
            return StorePurchaseResult(state: .pending)
        case .success(let document):
            seenDocuments.insert(document)
            let checked = await check(document)
            switch checked.result {
            case .failure(let error):
                purchaseStates[productID] = .failedVerification(error)
                emit(
                    StoreEvent(
                        .verificationFailed, productID: productID, transactionID: checked.transactionID,
                        detail: error.reason))
                throw error
            case .success(let change):
                await accept(change)
                await finish(checked)
                catchUpWithTheServer()
                await answersCaughtUp()
                purchaseStates[productID] = .purchased
                emit(StoreEvent(.purchaseSucceeded, productID: productID, transactionID: checked.transactionID))
                return StorePurchaseResult(state: .purchased, transaction: checked.transaction)
            }
        }
    }

    /// One document from the updates stream: verified, unlocked, then finished; a failure leaves it unfinished.
    private func receiveUpdate(_ document: String) async {
        guard seenDocuments.insert(document).inserted else { return }
        let checked = await check(document)
        switch checked.result {
        case .failure(let error):
            emit(
                StoreEvent(
                    .verificationFailed, productID: checked.productID, transactionID: checked.transactionID,
                    detail: error.reason))
        case .success(let change):
            let before = entitlements
            await accept(change)
            await finish(checked)
            if let productID = checked.productID, purchaseStates[productID] == .pending {
                purchaseStates[productID] = .purchased
                emit(StoreEvent(.purchaseSucceeded, productID: productID, transactionID: checked.transactionID))
            } else if !announceRevocations(since: before) {
                emit(
                    StoreEvent(.transactionUpdated, productID: checked.productID, transactionID: checked.transactionID))
            }
            announceOfferCode(checked.transaction)
            catchUpWithTheServer()
        }
    }

    /// Applies a verified change to the current state (and to every reconciliation under way), then answers from it.
    private func accept(_ change: StateChange, verified: Bool = true) async {
        change.apply(to: &state)
        for journal in openJournals.keys { openJournals[journal]?.append(change) }
        if verified { origin = .verified }
        await recompute()
        await save()
    }

    /// One document from the store, checked in the validation mode.
    private func check(_ document: String) async -> CheckedTransaction {
        let (state, token, validation) = (state, appAccountToken, validation)
        return await askingTheServer { () async throws(Never) in
            await validation.check(document, appAccountToken: token, state: state)
        }
    }

    // MARK: - Server answers in order

    /// Runs `call`, one of the validation server's, counting it among those under way. Nothing is counted in the
    /// other modes (the device's own records merge in any order).
    private func askingTheServer<T: Sendable, E: Error>(
        reconciling: Bool = false, _ call: () async throws(E) -> T
    ) async throws(E) -> T {
        guard case .server = validationMode else { return try await call() }
        if serverCallsInFlight > 0 { serverAnswersOverlapped = true }
        let reconciles = reconciling ? 1 : 0
        serverCallsInFlight += 1
        reconcileCallsInFlight += reconciles
        defer {
            serverCallsInFlight -= 1
            reconcileCallsInFlight -= reconciles
            for waiter in callEndWaiters { waiter.resume() }
            callEndWaiters = []
        }
        return try await call()
    }

    /// Waits until overlapping calls' answers are caught up, so a purchase returns with the state after its write and
    /// theirs. Bounded: a few single calls (each has the server's timeout); never a reconciliation (the App Store's
    /// sync, then a post of each transaction: it catches up when it ends), nor after a catch-up that could not read.
    private func answersCaughtUp() async {
        guard case .server = validationMode else { return }
        for _ in 0..<5 {
            if let catchingUp {
                await catchingUp.value
                continue
            }
            let onlyReconciling = serverCallsInFlight > 0 && serverCallsInFlight == reconcileCallsInFlight
            guard serverAnswersOverlapped, !catchUpFailed, !onlyReconciling else { return }
            if serverCallsInFlight > 0 { await withCheckedContinuation { callEndWaiters.append($0) } }
            catchUpWithTheServer()
        }
    }

    /// A validation server answers with the customer's snapshot as of that answer, and overlapping calls can answer in
    /// either order: the one applied last may predate the other's write (an upgrade's purchase and the update to the
    /// subscription it replaces). Once they have all answered, one more read brings the state after all of them; a read
    /// another call overlapped is read again (three at most), a failed one leaves the next call to catch up, and an
    /// answer is dropped when the customer logged in or out meanwhile. Only a purchase waits for it.
    private func catchUpWithTheServer() {
        guard case .server(let server) = validationMode, catchingUp == nil, serverCallsInFlight == 0,
            serverAnswersOverlapped
        else { return }
        catchUpFailed = false
        catchingUp = Task {
            defer { catchingUp = nil }
            for _ in 0..<3 where serverCallsInFlight == 0 && serverAnswersOverlapped {
                serverAnswersOverlapped = false
                let (state, token, customer) = (state, appAccountToken, identity)
                let answer: VerifiedState?
                do {
                    answer = try await askingTheServer { () async throws(StoreError) in
                        try await server.current(appAccountToken: token, state: state)
                    }
                } catch {
                    (serverAnswersOverlapped, catchUpFailed) = (true, true)
                    return
                }
                // A call that started meanwhile may have written after this read: read again once it has answered.
                guard !serverAnswersOverlapped else { continue }
                guard let answer, customer == identity else { return }
                let before = entitlements
                await accept(.server(answer), verified: false)
                announceRevocations(since: before)
            }
        }
    }

    /// Finishes a transaction after it was unlocked. A finish the store could not be reached for is tried again (a
    /// finish repeated changes nothing) in a task of its own, so neither the purchase (made already) nor the updates
    /// wait for it: three tries in all. One that still fails leaves the transaction unfinished, and it comes back
    /// through updates at the next launch.
    private func finish(_ checked: CheckedTransaction) async {
        guard let id = checked.transactionID else { return }
        do {
            try await backend.finish(transactionID: id)
            emit(StoreEvent(.transactionFinished, productID: checked.productID, transactionID: id))
        } catch  where error.code == .networkError {
            Task { await finishAgain(checked, id: id) }
        } catch {
            emit(StoreEvent(.finishFailed, productID: checked.productID, transactionID: id, detail: error.reason))
        }
    }

    /// The second and later tries of ``finish(_:)``, a quarter second apart and more.
    private func finishAgain(_ checked: CheckedTransaction, id: String) async {
        for attempt in 2...Self.finishAttempts {
            try? await Task.sleep(for: .milliseconds(250 * (attempt - 1)))
            do {
                try await backend.finish(transactionID: id)
                emit(StoreEvent(.transactionFinished, productID: checked.productID, transactionID: id))
                return
            } catch {
                guard error.code == .networkError, attempt < Self.finishAttempts else {
                    emit(
                        StoreEvent(.finishFailed, productID: checked.productID, transactionID: id, detail: error.reason)
                    )
                    return
                }
            }
        }
    }

    /// How many times a finish is tried when the store cannot be reached.
    static let finishAttempts = 3

    // MARK: - Consumption

    /// Uses up `quantity` units of a consumable: recorded in the cache on the device, or on the validation server
    /// (where the balance lives in server validation).
    public func consume(_ productID: String, quantity: Int = 1) async throws(StoreError) {
        guard catalog.product(productID)?.kind == .consumable else {
            throw StoreError(.notConsumable, "\(productID) is not a consumable")
        }
        guard quantity > 0, consumableCount(productID) >= quantity else {
            throw StoreError(
                .insufficientBalance, "\(productID) has \(consumableCount(productID)) left; cannot use \(quantity)")
        }
        let id = UUID().uuidString
        if case .server(let server) = validationMode {
            let moment = try await backend.now()
            let state = state
            let answer = try await askingTheServer { () async throws(StoreError) in
                try await server.consume(productID, quantity: quantity, idempotencyKey: id, at: moment, state: state)
            }
            // The device keeps the use in its own history too, so the count survives a change of mode.
            let record = ConsumptionRecord(productID: productID, quantity: quantity, date: moment, id: id)
            await accept(
                StateChange { state in
                    StateChange.server(answer).apply(to: &state)
                    if !state.history.consumptions.contains(where: { $0.id == id }) {
                        state.history.consumptions.append(record)
                    }
                    state.ledger.consumptionsOnServer.insert(id)
                }, verified: false)
        } else {
            let date = try await backend.now()
            // Checked again after the await: another consumption may have been recorded meanwhile.
            guard consumableCount(productID) >= quantity else {
                throw StoreError(
                    .insufficientBalance, "\(productID) has \(consumableCount(productID)) left; cannot use \(quantity)")
            }
            let record = ConsumptionRecord(productID: productID, quantity: quantity, date: date, id: id)
            await accept(StateChange { $0.history.consumptions.append(record) }, verified: false)
        }
        emit(
            StoreEvent(.consumed, productID: productID, detail: "\(quantity) used, \(consumableCount(productID)) left"))
        catchUpWithTheServer()
    }

    // MARK: - Events

    /// Every event from now on, in order. Each call is one listener; drop the stream to stop.
    public func events() -> AsyncStream<StoreEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: StoreEvent.self)
        let key = UUID()
        listeners[key] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeListener(key) }
        }
        return stream
    }

    private func removeListener(_ key: UUID) { listeners[key] = nil }

    func emit(_ event: StoreEvent) {
        var metadata: Logger.Metadata = ["event": .string(event.kind.rawValue)]
        if let product = event.productID { metadata["product"] = .string(product) }
        if let transaction = event.transactionID { metadata["transaction"] = .string(transaction) }
        logger.log(
            level: event.kind.logLevel, "\(event.kind.rawValue)\(event.detail.map { ": \($0)" } ?? "")",
            metadata: metadata)
        for continuation in listeners.values { continuation.yield(event) }
    }

    // MARK: - State

    private func recompute() async {
        if let snapshot = state.serverSnapshot {
            entitlements = snapshot
            return
        }
        let moment = (try? await backend.now()) ?? entitlements.moment
        entitlements = engine.snapshot(of: state.history, at: moment)
    }

    /// Announces each transaction that became revoked since `before`; returns whether there was one.
    @discardableResult
    private func announceRevocations(since before: EntitlementSnapshot) -> Bool {
        let known = Set(before.revokedTransactions.map(\.transactionID)).union(announcedRevocations)
        let new = entitlements.revokedTransactions.filter { !known.contains($0.transactionID) }
        for revoked in new {
            announcedRevocations.insert(revoked.transactionID)
            emit(StoreEvent(.refunded, productID: revoked.productID, transactionID: revoked.transactionID))
        }
        return !new.isEmpty
    }

    private func save() async {
        let cache = StoreCache(
            history: state.history, serverSnapshot: state.serverSnapshot, serverCustomerID: state.serverCustomerID,
            products: products, savedAt: entitlements.moment, ledger: state.ledger)
        do { try await persistence.save(cache) } catch {
            logger.warning("cannot save the store cache: \(error.reason)", metadata: ["event": "persistenceFailed"])
        }
    }
}
