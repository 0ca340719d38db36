import Foundation
public import IAPCatalog
public import IAPCore
import Synchronization

extension AppStoreSimulator {
    /// A simulator that continues a stored store: its accounts, devices, transactions, subscriptions, clock, pending
    /// purchases, notifications with their send attempts, and id counters, as ``changedRows()`` handed them out.
    /// Transaction ids continue past both the stored counter and `configuration.firstTransactionID`; UUIDs continue
    /// the stored seed's sequence. A running clock goes on from its stored setting, so time that passed while the
    /// store was stopped runs (its renewals and expiries) on the first call.
    public convenience init(
        restoring rows: SimulatorStateRows, catalog: Catalog, configuration: SimulatorConfiguration = .init(),
        pki: SimulatorPKI, clock: Clock = .frozen, keepsRecords: Bool = true, keepsNotifications: Bool? = nil,
        updateLimits: UpdateLimits = UpdateLimits()
    ) throws {
        try self.init(
            catalog: catalog, configuration: configuration, pki: pki, clock: clock, keepsRecords: keepsRecords,
            keepsNotifications: keepsNotifications, updateLimits: updateLimits)
        let restored = try Self.decoded(rows)
        try withState { (core, dial) throws(SimulatorError) in
            try core.restore(restored.state, transactions: restored.transactions, notifications: restored.notifications)
            dial = restored.state.dial
        }
        savedState.withLock { $0 = nil }
    }

    /// Replaces this store's whole state with a stored one (nil: a new store's, when nothing was saved), as
    /// ``init(restoring:catalog:configuration:pki:clock:keepsRecords:keepsNotifications:updateLimits:)`` would
    /// restore it: what a server does when it takes over the store another server sold (its own copy was made at its
    /// start, or has changes that were never saved). Transaction ids continue past both the stored counter and
    /// `transactionsAfter` (the largest id the database holds, which a server that stopped selling may have written
    /// after its last save). The catalog, the authority, the clock's source, the notification sinks and the open update
    /// streams stay this store's.
    public func reload(restoring rows: SimulatorStateRows?, transactionsAfter largest: UInt64?) throws(SimulatorError) {
        let restored = try rows.map { (rows) throws(SimulatorError) in try Self.decoded(rows) }
        var configuration = self.configuration
        if let largest { configuration.firstTransactionID = max(configuration.firstTransactionID, largest + 1) }
        try withState { (core, dial) throws(SimulatorError) in
            var fresh: SimulatorCore
            do {
                fresh = try SimulatorCore(
                    catalog: catalog, configuration: configuration, pki: pki, keepsRecords: core.keepsRecords,
                    keepsNotifications: core.keepsNotifications)
            } catch {
                throw SimulatorError(.unreadableState, "the store could not be set up again: \(error)")
            }
            if let restored {
                try fresh.restore(
                    restored.state, transactions: restored.transactions, notifications: restored.notifications)
                dial = restored.state.dial
            } else {
                fresh.now = core.now
            }
            fresh.notificationSinks = core.notificationSinks
            fresh.updateStreams = core.updateStreams
            fresh.updateStreamsOpened = core.updateStreamsOpened
            core = fresh
        }
        encodedAccounts.withLock { $0 = [:] }
        savedState.withLock { $0 = nil }
    }

    /// The stored rows decoded: the state document (of this version's format), the transactions and the notifications
    /// in their order.
    private static func decoded(_ rows: SimulatorStateRows) throws(SimulatorError) -> (
        state: PersistedCore, transactions: [TransactionState],
        notifications: [(order: Int64, notification: PersistedNotification)]
    ) {
        let decoder = JSONDecoder()
        func decode<T: Decodable>(_ type: T.Type, _ json: String, _ what: String) throws(SimulatorError) -> T {
            do { return try decoder.decode(type, from: Data(json.utf8)) } catch {
                throw SimulatorError(.unreadableState, "the stored \(what) cannot be read: \(error)")
            }
        }
        let document = try decode(PersistedCore.self, rows.state, "state")
        guard document.format == PersistedCore.currentFormat else {
            throw SimulatorError(
                .unreadableState,
                "the stored state has format \(document.format); this version reads \(PersistedCore.currentFormat)")
        }
        var transactions: [TransactionState] = []
        for row in rows.transactions {
            if let json = row.json {
                transactions.append(try decode(TransactionState.self, json, "transaction \(row.key)"))
            }
        }
        var notifications: [(order: Int64, notification: PersistedNotification)] = []
        for row in rows.notifications.sorted(by: { $0.order < $1.order }) {
            if let json = row.json {
                notifications.append(
                    (row.order, try decode(PersistedNotification.self, json, "notification \(row.key)")))
            }
        }
        return (document, transactions, notifications)
    }

    /// The rows changed since the last call (everything the first time something changed), or nil when nothing
    /// did. Hand them to the database in this order; if saving fails, call ``saveFailed()`` so the next call answers
    /// every row again.
    public func changedRows() -> SimulatorStateRows? {
        let (document, accounts, changes) = state(forSaving: ())
        let encoder = Self.sortedKeysEncoder()
        func json(_ value: some Encodable) -> String { Self.rowJSON(value, with: encoder) }
        let stateJSON = encodedAccounts.withLock { encoded in
            for (id, account) in accounts.changed { encoded[id] = account.map(json) }
            return json(document).withAccounts(accounts.order.compactMap { encoded[$0] })
        }
        let unchanged = savedState.withLock { saved in
            defer { saved = stateJSON }
            return saved == stateJSON
        }
        if unchanged && changes.transactions.isEmpty && changes.notifications.isEmpty { return nil }
        return SimulatorStateRows(
            state: stateJSON,
            transactions: changes.transactions.map {
                .init(key: String($0.id), order: Int64(bitPattern: $0.id), json: $0.transaction.map(json))
            },
            notifications: changes.notifications.map {
                .init(key: $0.uuid, order: $0.order, json: $0.notification.map(json))
            })
    }

    /// The state document encoded whole, its accounts with it: what ``changedRows()`` answers as the state, built
    /// without its kept accounts (for tests).
    func encodedStateInFull() -> String {
        Self.rowJSON((try? withState { (core, dial) in core.persisted(dial: dial) })!, with: Self.sortedKeysEncoder())
    }

    /// Rows are encoded with sorted keys, so equal states encode to equal text.
    private static func sortedKeysEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }

    /// A row's JSON. The stored types are plain values: encoding them cannot fail.
    private static func rowJSON(_ value: some Encodable, with encoder: JSONEncoder) -> String {
        (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }

    /// Marks everything as changed, so the next ``changedRows()`` answers every row (after a save that failed).
    public func saveFailed() {
        try? withState { (core, _) in core.markAllChanged() }
        savedState.withLock { $0 = nil }
    }

    private func state(forSaving: Void) -> (
        PersistedCore,
        accounts: (order: [String], changed: [(id: String, account: Account?)]),
        (
            transactions: [(id: UInt64, transaction: TransactionState?)],
            notifications: [(uuid: String, order: Int64, notification: PersistedNotification?)]
        )
    ) {
        // withState's body does not throw here.
        (try? withState { (core, dial) in
            let changedAccounts = core.accounts.takeChanged().map { ($0, core.accounts[$0]) }
            return (
                core.persisted(dial: dial, withAccounts: false), (core.accountOrder, changedAccounts),
                core.takeChangedRows()
            )
        })!
    }
}

extension String {
    /// This state document (encoded with sorted keys and no accounts, so it begins `{"accounts":[]`) with `accounts`
    /// (each one's JSON) in place of the empty list.
    fileprivate func withAccounts(_ accounts: [String]) -> String {
        let empty = #"{"accounts":[]"#
        precondition(hasPrefix(empty), "a state document with sorted keys begins with its accounts")
        return #"{"accounts":["# + accounts.joined(separator: ",") + "]" + dropFirst(empty.count)
    }
}
