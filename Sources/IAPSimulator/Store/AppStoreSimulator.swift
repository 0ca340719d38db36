public import Foundation
public import IAPCatalog
import IAPCore
import IAPReceipts
public import IAPSignedData
import Synchronization

/// A local App Store: accounts, devices and families buying from a catalog on a virtual clock, every artifact signed
/// with the simulator's own PKI in Apple's formats.
///
/// Instances share nothing; each is safe to use from any task. Time moves only when you say so (a frozen clock that
/// ``advance(by:)`` and ``advance(to:)`` move, running every renewal, retry and expiry in between in order), or with
/// a wall clock you pass in (``Clock/running(wallClock:)``), which each call catches up with first.
///
/// ```swift
/// let store = try AppStoreSimulator(catalog: catalog, pki: try SimulatorPKI(keys: .generate()))
/// try store.createAccount("ana")
/// let device = try store.addDevice(account: "ana")
/// let outcome = try store.purchase("com.example.gold", account: "ana")
/// try store.advance(by: .init(value: 1, unit: .year))
/// let receipt = try store.receipt(account: "ana", device: device)
/// ```
public final class AppStoreSimulator: Sendable {
    /// Where the simulator's time comes from.
    public enum Clock: Sendable {
        /// Time stands still at the configured start until advanced.
        case frozen
        /// Time runs with the given wall clock from the configured start (jumps add to it); it can be paused and
        /// sped up (``setClock(paused:speed:)``).
        case running(wallClock: @Sendable () -> Date)
    }

    /// How a running clock goes: paused or not, and how many simulated seconds pass per wall-clock second.
    public struct ClockSetting: Hashable, Sendable {
        public var paused: Bool
        public var speed: Double

        public init(paused: Bool, speed: Double) {
            self.paused = paused
            self.speed = speed
        }
    }

    /// The running clock's dial: simulated time from an anchor on the wall clock, at a speed, unless paused.
    struct ClockDial: Sendable, Codable {
        var wallAnchor: Date
        var simulatedAnchor: Date
        var speed: Double = 1
        var paused = false

        func simulated(at wall: Date) -> Date {
            paused ? simulatedAnchor : simulatedAnchor + wall.timeIntervalSince(wallAnchor) * speed
        }
    }

    /// How many `Transaction.updates` listeners the simulator keeps, and how far one may fall behind.
    public struct UpdateLimits: Hashable, Sendable {
        /// Listeners per account; a new one ends the oldest.
        public var perAccount: Int
        /// Listeners in all; past it a new one is refused.
        public var total: Int
        /// Transactions a listener may have waiting; one further behind is ended.
        public var buffer: Int

        public init(perAccount: Int = 8, total: Int = 512, buffer: Int = 64) {
            self.perAccount = perAccount
            self.total = total
            self.buffer = buffer
        }
    }

    /// The fastest a running clock may go: a simulated year in about half a minute.
    public static let maximumClockSpeed: Double = 1_000_000

    /// The PKI every artifact is signed with; give its roots (``SimulatorPKI/trustStore``) to a verifier.
    public let pki: SimulatorPKI
    public let catalog: Catalog
    public let configuration: SimulatorConfiguration
    /// How many update listeners are kept and how far each may fall behind.
    public let updateLimits: UpdateLimits
    /// A verifier configured as a server of this app would be, with the simulator's roots (its chain cache is kept).
    let signedDataVerifier: SignedDataVerifier
    private let clock: Clock
    let state: Mutex<(core: SimulatorCore, dial: ClockDial)>
    /// The clock as the last call left it, for ``currentTime`` (its own lock, so reading it never waits on a move).
    private let reading: Mutex<ClockReading>
    /// Called after every call that may have changed the state (see ``onChange(_:)``).
    private let changeObservers = Mutex<(next: Int, observers: [Int: @Sendable () -> Void])>((0, [:]))
    /// The state document last handed out by ``changedRows()``, so an unchanged one is not saved again.
    let savedState = Mutex<String?>(nil)
    /// Each account's JSON as ``changedRows()`` last encoded it, by id: a save encodes the accounts that changed, not
    /// every account (which made each change cost more as the store grew).
    let encodedAccounts = Mutex<[String: String]>([:])

    struct ClockReading: Sendable {
        var now: Date
        var dial: ClockDial
    }

    /// A simulator selling `catalog`, signing with `pki`. `keepsRecords` keeps every event, artifact and notification
    /// in memory for ``events``, ``artifacts`` and ``notifications`` (turn it off for very long simulations; sinks and
    /// statistics still see everything); `keepsNotifications` (by default as `keepsRecords`) keeps the notifications
    /// alone, as a server does for the notification history.
    public init(
        catalog: Catalog, configuration: SimulatorConfiguration = SimulatorConfiguration(), pki: SimulatorPKI,
        clock: Clock = .frozen, keepsRecords: Bool = true, keepsNotifications: Bool? = nil,
        updateLimits: UpdateLimits = UpdateLimits()
    ) throws {
        self.pki = pki
        self.catalog = catalog
        self.configuration = configuration
        self.clock = clock
        self.updateLimits = updateLimits
        self.signedDataVerifier = try SignedDataVerifier(
            trustStore: pki.trustStore,
            configuration: .init(
                bundleID: configuration.bundleID, appAppleID: configuration.appAppleID,
                environments: [configuration.environment]))
        let wallStart = if case .running(let wall) = clock { wall() } else { configuration.start }
        let core = try SimulatorCore(
            catalog: catalog, configuration: configuration, pki: pki, keepsRecords: keepsRecords,
            keepsNotifications: keepsNotifications ?? keepsRecords)
        let dial = ClockDial(wallAnchor: wallStart, simulatedAnchor: configuration.start)
        state = Mutex((core, dial))
        reading = Mutex(ClockReading(now: configuration.start, dial: dial))
    }

    /// A simulator selling the products of a `.storekit` file or `Products.plist`.
    public convenience init(
        catalogFile path: String, configuration: SimulatorConfiguration = SimulatorConfiguration(), pki: SimulatorPKI,
        clock: Clock = .frozen, keepsRecords: Bool = true
    ) throws {
        try self.init(
            catalog: try Catalog.load(contentsOfFile: path), configuration: configuration, pki: pki, clock: clock,
            keepsRecords: keepsRecords)
    }

    /// Runs `body` on the state after catching the clock up with the wall clock (when running), then delivers what
    /// it queued for sinks and update streams once the lock is released (even when `body` throws: what happened before
    /// the error happened).
    func withCore<T: Sendable>(
        catchingUp: Bool = true, _ body: (inout SimulatorCore, inout ClockDial) throws(SimulatorError) -> T
    ) throws(SimulatorError) -> T {
        let (result, batch) = state.withLock { state -> (Result<T, SimulatorError>, [Outbox.Delivery]) in
            let result = Result { () throws(SimulatorError) -> T in
                if catchingUp, case .running(let wall) = clock {
                    // A fast clock left running reaches the simulator's last date and stays there.
                    let target = min(state.dial.simulated(at: wall()), SimulatorConfiguration.latestDate)
                    if target > state.core.now { try state.core.advance(to: target) }
                }
                return try body(&state.core, &state.dial)
            }
            let reading = ClockReading(now: state.core.now, dial: state.dial)
            self.reading.withLock { $0 = reading }
            return (result, state.core.outbox.takeFirstBatch())
        }
        // The observers first: a server's saver counts the change before a sink sees what it made, so a notification
        // is never applied before the save that holds it is asked for.
        for observer in changeObservers.withLock({ $0.observers.values }) { observer() }
        deliver(batch)
        return try result.get()
    }

    /// Calls `observer` after every call that may have changed the simulator (outside its lock): a server saves
    /// ``changedRows()`` then. Reads call it too; ``changedRows()`` answers nil when nothing changed.
    /// Returns the observer's id, for ``removeChangeObserver(_:)``.
    @discardableResult
    public func onChange(_ observer: @escaping @Sendable () -> Void) -> Int {
        changeObservers.withLock { state in
            defer { state.next += 1 }
            state.observers[state.next] = observer
            return state.next
        }
    }

    /// Stops calling the observer `onChange(_:)` returned `id` for.
    public func removeChangeObserver(_ id: Int) {
        changeObservers.withLock { _ = $0.observers.removeValue(forKey: id) }
    }

    /// Runs `body` on the state and the clock's dial under the lock, without catching up or delivering anything.
    func withState<T: Sendable>(_ body: (inout SimulatorCore, inout ClockDial) throws(SimulatorError) -> T)
        throws(SimulatorError) -> T
    {
        let result = state.withLock { state in
            Result { () throws(SimulatorError) -> T in try body(&state.core, &state.dial) }
        }
        let now = state.withLock { ClockReading(now: $0.core.now, dial: $0.dial) }
        reading.withLock { $0 = now }
        return try result.get()
    }

    /// Runs `body` on the state (see ``withCore(catchingUp:_:)``).
    func withCore<T: Sendable>(_ body: (inout SimulatorCore) throws(SimulatorError) -> T) throws(SimulatorError)
        -> T
    {
        try withCore { (core, _) throws(SimulatorError) -> T in try body(&core) }
    }

    /// Delivers batches, outside the lock, until the outbox is empty.
    private func deliver(_ first: [Outbox.Delivery]) {
        var batch = first
        while !batch.isEmpty {
            for delivery in batch { delivery.deliver() }
            batch = state.withLock { $0.core.outbox.takeNextBatch() }
        }
    }

    // MARK: - Clock

    /// The simulated moment as last known, read without waiting for the simulator: what a running clock shows now
    /// (without running what is due), or where a frozen clock stood when the last call ended. Servers that take
    /// the simulator's time for their own checks read this, so they never wait on a clock move in progress.
    public var currentTime: Date {
        let reading = reading.withLock { $0 }
        guard case .running(let wall) = clock else { return reading.now }
        return max(reading.now, min(reading.dial.simulated(at: wall()), SimulatorConfiguration.latestDate))
    }

    /// The simulated moment. Throws when a running clock cannot catch up (it would pass
    /// ``SimulatorConfiguration/latestDate`` or run more than ``SimulatorConfiguration/maximumEventsPerAdvance`` events).
    public var now: Date {
        get throws(SimulatorError) { try withCore { $0.now } }
    }

    /// Moves the clock forward by `seconds`, running everything due on the way.
    public func advance(by seconds: TimeInterval) throws(SimulatorError) {
        guard seconds >= 0 else { throw SimulatorError(.timeGoesForward, "the clock cannot go back") }
        try withCore(catchingUp: false) { (core, dial) throws(SimulatorError) in
            try core.advance(to: core.now + seconds)
            dial.simulatedAnchor += seconds
        }
        try withCore { _ in }
    }

    /// The running clock's dial: the simulated moment at a wall-clock anchor, the speed and whether it is paused; nil
    /// for a frozen clock. Another process reading the same wall clock shows the same moment from it.
    public var clockDial: (wallAnchor: Date, simulatedAnchor: Date, speed: Double, paused: Bool)? {
        guard case .running = clock else { return nil }
        let dial = reading.withLock { $0.dial }
        return (dial.wallAnchor, dial.simulatedAnchor, dial.speed, dial.paused)
    }

    /// How the running clock goes now; nil for a frozen clock (it moves only when advanced).
    public var clockSetting: ClockSetting? {
        guard case .running = clock else { return nil }
        return state.withLock { ClockSetting(paused: $0.dial.paused, speed: $0.dial.speed) }
    }

    /// Pauses or resumes the running clock, or changes its speed (simulated seconds per wall-clock second, above 0 and
    /// at most ``maximumClockSpeed``). Time due until now runs first, at the old setting, as far as it can in one move
    /// (``SimulatorConfiguration/maximumEventsPerAdvance``); the clock goes on from where that stopped.
    public func setClock(paused: Bool? = nil, speed: Double? = nil) throws(SimulatorError) {
        guard case .running(let wall) = clock else {
            throw SimulatorError(.invalidArgument, "this simulator's clock is frozen: it moves only when advanced")
        }
        if let speed, !(speed > 0 && speed <= Self.maximumClockSpeed) {
            throw SimulatorError(
                .invalidArgument, "the clock's speed must be above 0 and at most \(Int(Self.maximumClockSpeed))")
        }
        try withCore(catchingUp: false) { (core, dial) throws(SimulatorError) in
            let moment = wall()
            let target = min(dial.simulated(at: moment), SimulatorConfiguration.latestDate)
            // Catch up as far as the clock can; when it cannot go all the way (too many events due at once), it stops
            // where it got to, so a pause or a slower speed always takes hold.
            if target > core.now { try? core.advance(to: target) }
            dial = ClockDial(
                wallAnchor: moment, simulatedAnchor: core.now, speed: speed ?? dial.speed, paused: paused ?? dial.paused
            )
        }
    }

    /// Moves the clock forward by calendar periods (real-time calendar arithmetic, whatever the time rate).
    public func advance(by period: SubscriptionPeriod, count: Int = 1) throws(SimulatorError) {
        let start = try now
        try advance(by: period.advance(start, by: count).timeIntervalSince(start))
    }

    /// Moves the clock to `date`, running everything due on the way.
    public func advance(to date: Date) throws(SimulatorError) {
        let start = try now
        guard date >= start else {
            throw SimulatorError(.timeGoesForward, "the clock cannot go back from \(start) to \(date)")
        }
        try advance(by: date.timeIntervalSince(start))
    }

    // MARK: - Accounts

    /// Opens an account in a storefront (`USA`, `FRA`, ...), optionally with an app account token that its purchases
    /// carry and with ask-to-buy on (a child in a family).
    public func createAccount(
        _ id: String, storefront: String = "USA", appAccountToken: UUID? = nil, askToBuy: Bool = false
    ) throws(SimulatorError) {
        try withCore { (core) throws(SimulatorError) in
            try core.createAccount(id, storefront: storefront, appAccountToken: appAccountToken, askToBuy: askToBuy)
        }
    }

    /// Signs an account in on a device; returns the device id (receipts hash it). A fresh seeded id when nil.
    @discardableResult
    public func addDevice(account: String, deviceID: UUID? = nil) throws(SimulatorError) -> UUID {
        try withCore { (core) throws(SimulatorError) in try core.addDevice(account: account, deviceID: deviceID) }
    }

    /// Turns ask-to-buy on or off, or moves the account to another storefront.
    public func updateAccount(_ id: String, askToBuy: Bool? = nil, storefront: String? = nil) throws(SimulatorError) {
        try withCore { (core) throws(SimulatorError) in
            try core.setAccount(id, askToBuy: askToBuy, storefront: storefront)
        }
    }

    /// Adds an account to a family group (created on first use); shareable purchases flow both ways at once.
    public func joinFamily(_ family: String, account: String) throws(SimulatorError) {
        try withCore { (core) throws(SimulatorError) in try core.join(family: family, account: account) }
    }

    /// Takes an account out of its family; shared purchases are revoked (REVOKE notifications).
    public func leaveFamily(account: String) throws(SimulatorError) {
        try withCore { (core) throws(SimulatorError) in try core.leaveFamily(account: account) }
    }

    /// Makes the account's renewals fail (`failing: true`) or fixes its payment method, which recovers subscriptions
    /// in billing retry at once.
    public func setBillingIssue(account: String, failing: Bool) throws(SimulatorError) {
        try withCore { (core) throws(SimulatorError) in try core.setBillingIssue(account: account, failing: failing) }
    }

    // MARK: - Store operations

    /// Makes every later call of an operation fail with `code` (nil stops it), as StoreKit testing's error settings do.
    public func injectFailure(_ operation: SimulatorOperation, _ code: SimulatorError.Code?) {
        state.withLock { $0.core.failures[operation] = code }
    }

    /// The failures ``injectFailure(_:_:)`` set, by operation.
    public var injectedFailures: [SimulatorOperation: SimulatorError.Code] { state.withLock { $0.core.failures } }

    /// A product request: the products of the catalog among `ids`, localized for the account's storefront.
    public func products(_ ids: [String], account: String) throws(SimulatorError) -> [SimulatorProduct] {
        try withCore { (core) throws(SimulatorError) in try core.products(ids, account: account) }
    }

    /// Buys a product. Ask-to-buy accounts and interrupted purchases answer `.pending`; see ``approve(_:)``,
    /// ``decline(_:)``.
    public func purchase(
        _ productID: String, account: String, device: UUID? = nil, options: PurchaseOptions = PurchaseOptions()
    ) throws(SimulatorError) -> PurchaseOutcome {
        try withCore { (core) throws(SimulatorError) in
            try core.purchase(productID, account: account, device: device, options: options)
        }
    }

    /// Approves an ask-to-buy request or completes an interrupted purchase: the purchase happens now.
    public func approve(_ pendingID: String) throws(SimulatorError) -> PurchaseOutcome {
        try withCore { (core) throws(SimulatorError) in try core.resolvePending(pendingID, approve: true) }
    }

    /// Declines an ask-to-buy request or abandons an interrupted purchase: no transaction.
    public func decline(_ pendingID: String) throws(SimulatorError) {
        _ = try withCore { (core) throws(SimulatorError) in try core.resolvePending(pendingID, approve: false) }
    }

    /// Purchases waiting for approval or the customer, oldest first.
    public var pendingPurchases: [PendingPurchase] {
        state.withLock { state in state.core.pendingOrder.compactMap { state.core.pending[$0]?.pending } }
    }

    /// Redeems an offer code configured in ``SimulatorConfiguration/offerCodes``.
    public func redeemOfferCode(_ code: String, account: String) throws(SimulatorError) -> SimulatorTransaction {
        try withCore { (core) throws(SimulatorError) in try core.redeemOfferCode(code, account: account) }
    }

    /// Finishes a transaction: it stops being redelivered, and a consumable leaves the receipt.
    public func finish(_ transactionID: String) throws(SimulatorError) {
        try withCore { (core) throws(SimulatorError) in try core.finish(transactionID) }
    }

    /// The account's unfinished transactions, signed: what StoreKit redelivers at every launch until finished.
    public func unfinishedTransactions(account: String) throws(SimulatorError) -> [SimulatorTransaction] {
        try withCore { (core) throws(SimulatorError) in
            _ = try core.account(account)
            var result: [SimulatorTransaction] = []
            for id in core.unfinished(account: account) { result.append(try core.signedTransaction(id)) }
            return result
        }
    }

    /// What `Transaction.all` lists on the account's devices, signed, in issue order: every transaction except
    /// finished consumables that were not refunded or revoked (StoreKit's default, without the app's
    /// `SKIncludeConsumableInAppPurchaseHistory`). ``transactions(account:)`` is the store's whole record.
    public func transactionsOnDevice(account: String) throws(SimulatorError) -> [SimulatorTransaction] {
        try withCore { (core) throws(SimulatorError) in
            var result: [SimulatorTransaction] = []
            for id in try core.account(account).transactionIDs {
                guard let t = core.transactions[id], !(t.kind == .consumable && t.finished && t.revocation == nil)
                else { continue }
                result.append(try core.signedTransaction(id))
            }
            return result
        }
    }

    /// Restores purchases (`AppStore.sync()`): the latest transaction of everything the account has.
    public func sync(account: String) throws(SimulatorError) -> [SimulatorTransaction] {
        try withCore { (core) throws(SimulatorError) in try core.sync(account: account) }
    }

    /// Every transaction of the account, signed, in issue order.
    public func transactions(account: String) throws(SimulatorError) -> [SimulatorTransaction] {
        try withCore { (core) throws(SimulatorError) in
            var result: [SimulatorTransaction] = []
            for id in try core.account(account).transactionIDs { result.append(try core.signedTransaction(id)) }
            return result
        }
    }

    /// The account a transaction belongs to.
    public func account(owning transactionID: String) throws(SimulatorError) -> String {
        try withCore { (core) throws(SimulatorError) in try core.transaction(transactionID).accountID }
    }

    /// One transaction by id, signed, whoever's it is (the App Store Server API's transaction lookup).
    public func transaction(_ transactionID: String) throws(SimulatorError) -> SimulatorTransaction {
        try withCore { (core) throws(SimulatorError) in
            try core.signedTransaction(try core.transaction(transactionID).id)
        }
    }

    /// `Transaction.currentEntitlements`: for each product the account has access to now (non-consumables, active
    /// and non-renewing subscriptions, family-shared ones), its latest transaction, signed, in issue order.
    public func currentEntitlements(account: String) throws(SimulatorError) -> [SimulatorTransaction] {
        let entitled = try view(account: account).entitledProductIDs
        return Self.latestPerProduct(try transactions(account: account)).filter {
            $0.payload.productID.map(entitled.contains) == true && $0.payload.revocationDate == nil
        }
    }

    /// `Transaction.latest(for:)`: the account's latest transaction for the product, signed, if it has one.
    public func latestTransaction(account: String, productID: String) throws(SimulatorError) -> SimulatorTransaction? {
        try transactionsOnDevice(account: account).last { $0.payload.productID == productID }
    }

    private static func latestPerProduct(_ transactions: [SimulatorTransaction]) -> [SimulatorTransaction] {
        var latest: [String: Int] = [:]
        for (index, transaction) in transactions.enumerated() {
            if let product = transaction.payload.productID { latest[product] = index }
        }
        return latest.values.sorted().map { transactions[$0] }
    }

    /// Turns a subscription's auto-renew off (it expires at the end of the period) or on.
    public func setAutoRenew(account: String, group: String, enabled: Bool) throws(SimulatorError) {
        try withCore { (core) throws(SimulatorError) in
            try core.setAutoRenew(account: account, group: group, enabled: enabled)
        }
    }

    /// Changes a product's price; see ``consentToPriceIncrease(account:group:)``.
    public func changePrice(_ productID: String, to price: Decimal, requiresConsent: Bool = true) throws(SimulatorError)
    {
        try withCore { (core) throws(SimulatorError) in
            try core.changePrice(productID, to: price, requiresConsent: requiresConsent)
        }
    }

    /// The customer accepts a price increase that needs consent.
    public func consentToPriceIncrease(account: String, group: String) throws(SimulatorError) {
        try withCore { (core) throws(SimulatorError) in try core.consentToPriceIncrease(account: account, group: group)
        }
    }

    /// Refunds a purchase in full, or in part with `percentage` in milli-percent (50000 = half).
    public func refund(_ transactionID: String, percentage: Int? = nil, reason: RevocationReason = .other)
        throws(SimulatorError)
    {
        try withCore { (core) throws(SimulatorError) in
            try core.refund(transactionID, percentage: percentage, reason: reason)
        }
    }

    /// Apple reverses a refund it granted (after a dispute): the purchase grants again, with REFUND_REVERSED.
    public func reverseRefund(_ transactionID: String) throws(SimulatorError) {
        try withCore { (core) throws(SimulatorError) in try core.reverseRefund(transactionID) }
    }

    /// A customer asks for a refund; the developer gets a CONSUMPTION_REQUEST.
    public func requestRefund(_ transactionID: String, reason: ConsumptionRequestReason = .unintendedPurchase)
        throws(SimulatorError)
    {
        try withCore { (core) throws(SimulatorError) in try core.requestRefund(transactionID, reason: reason) }
    }

    /// The developer's answer to a consumption request (the App Store Server API's "send consumption information").
    public func reportConsumption(_ transactionID: String, _ report: ConsumptionReport) throws(SimulatorError) {
        try withCore { (core) throws(SimulatorError) in try core.reportConsumption(transactionID, report) }
    }

    /// Apple's decision on a refund request: REFUND (full or prorated) or REFUND_DECLINED.
    public func decideRefund(_ transactionID: String, grant: Bool, percentage: Int? = nil) throws(SimulatorError) {
        try withCore { (core) throws(SimulatorError) in
            try core.decideRefund(transactionID, grant: grant, percentage: percentage)
        }
    }

    /// The consumption information reported for a transaction's refund request, if any.
    public func consumptionReport(for transactionID: String) -> ConsumptionReport? {
        state.withLock { state in UInt64(transactionID).flatMap { state.core.refundRequests[$0]?.report } }
    }

    /// Deletes a transaction from history (Xcode's "Delete Transaction").
    public func deleteTransaction(_ transactionID: String) throws(SimulatorError) {
        try withCore { (core) throws(SimulatorError) in try core.deleteTransaction(transactionID) }
    }

    /// Clears every transaction of one account, or of every account.
    public func clearTransactions(account: String? = nil) throws(SimulatorError) {
        try withCore { (core) throws(SimulatorError) in try core.clearTransactions(account: account) }
    }

}
