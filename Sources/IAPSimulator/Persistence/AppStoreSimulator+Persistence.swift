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
        let transactions = try rows.transactions.compactMap { (row) throws(SimulatorError) in
            try row.json.map { (json) throws(SimulatorError) in
                try decode(TransactionState.self, json, "transaction \(row.key)")
            }
        }
        let notifications = try rows.notifications.sorted { $0.order < $1.order }.compactMap {
            (row) throws(SimulatorError) in
            try row.json.map { (json) throws(SimulatorError) in
                (row.order, try decode(PersistedNotification.self, json, "notification \(row.key)"))
            }
        }
        try withState { (core, dial) throws(SimulatorError) in
            try core.restore(document, transactions: transactions, notifications: notifications)
            dial = document.dial
        }
        savedState.withLock { $0 = nil }
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
