/// A simulator's state as rows a database keeps: one state document, one row per transaction and one per notification
/// (with its send attempts). Together they are enough to continue the same store after a restart; the catalog,
/// configuration and PKI come from the settings again, and signatures, receipts and the renewal queue are rebuilt.
///
/// `AppStoreSimulator.changedRows()` (IAPSimulator) answers the rows changed since it was last called, so a save writes
/// what changed and not the whole history; `AppStoreSimulator(restoring:...)` takes every stored row.
///
/// It lives here, below both, so the validation server's storage keeps these rows without linking the simulator.
public struct SimulatorStateRows: Hashable, Sendable {
    /// One transaction or notification.
    public struct Row: Hashable, Sendable {
        /// The transaction id or notification UUID.
        public var key: String
        /// Notifications: their place in the order the store sent them. Transactions: their id.
        public var order: Int64
        /// The row's JSON; nil when the row is gone (a deleted account's transactions).
        public var json: String?

        public init(key: String, order: Int64, json: String?) {
            self.key = key
            self.order = order
            self.json = json
        }
    }

    /// Everything else: accounts, devices, subscriptions, the clock, pending purchases, id counters (JSON).
    public var state: String
    public var transactions: [Row]
    public var notifications: [Row]

    public init(state: String, transactions: [Row], notifications: [Row]) {
        self.state = state
        self.transactions = transactions
        self.notifications = notifications
    }
}
