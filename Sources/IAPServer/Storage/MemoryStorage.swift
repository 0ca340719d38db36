import Foundation
public import IAPCore
public import IAPEntitlements

/// Storage in memory, for tests and throwaway servers: the same rules as the SQL backends, nothing kept on exit.
public actor MemoryStorage: ServerStorage {
    private struct Owner {
        var customerID: String
        /// True when a customer claimed it; false when the server made the owner up.
        var claimed: Bool
    }

    /// By app and transaction id: two apps' transaction "1" are two transactions.
    private var transactions: [String: StoredTransaction] = [:]
    private var owners: [String: [String: Owner]] = [:]  // bundle id -> original transaction id -> owner
    private var renewals: [String: [String: StoredRenewal]] = [:]
    private var notifications: [String: StoredNotification] = [:]  // by bundle id and UUID
    private var consumptions: [CustomerKey: [String: ConsumptionRecord]] = [:]
    private var consumptionOrder: [CustomerKey: [String]] = [:]
    /// Writes per customer: the version of their digest.
    private var writes: [CustomerKey: Int64] = [:]
    /// Local App Stores' saved rows by bundle id.
    private var simulators:
        [String: (state: String, rows: [String: SimulatorStateRows.Row], notes: [String: SimulatorStateRows.Row])] = [:]

    public init() {}

    public func record(_ batch: PurchaseBatch) throws(StorageError) -> RecordOutcome {
        if let conflict = conflict(in: batch) { return conflict }
        let owners = apply(batch)
        let digest = try owners.first.map { (owner) throws(StorageError) in
            try self.digest(of: CustomerKey(bundleID: batch.transactions.first?.bundleID ?? "", id: owner))
        }
        return .recorded(owners: owners, digest: digest ?? CustomerDigest(history: CompactHistory(), version: 0))
    }

    public func record(notification: StoredNotification, applying batch: PurchaseBatch) throws(StorageError) -> Bool {
        let key = "\(notification.bundleID)\u{0}\(notification.uuid)"
        guard notifications[key] == nil else { return false }
        notifications[key] = notification
        _ = apply(batch)
        return true
    }

    public func customer(matching id: String, bundleID: String) throws(StorageError) -> CustomerKey? {
        let table = owners[bundleID] ?? [:]
        if table.values.contains(where: { $0.customerID == id }) { return CustomerKey(bundleID: bundleID, id: id) }
        if let owner = table[id] { return CustomerKey(bundleID: bundleID, id: owner.customerID) }
        return nil
    }

    public func records(of customer: CustomerKey) throws(StorageError) -> CustomerRecords {
        let owned = Set((owners[customer.bundleID] ?? [:]).filter { $0.value.customerID == customer.id }.keys)
        let bought = transactions.values
            .filter { $0.bundleID == customer.bundleID && owned.contains($0.originalTransactionID) }
            .sorted { $0.transactionID < $1.transactionID }
        let renewing = (renewals[customer.bundleID] ?? [:]).values
            .filter { owned.contains($0.originalTransactionID) }
            .sorted { $0.originalTransactionID < $1.originalTransactionID }
        let used = (consumptionOrder[customer] ?? []).compactMap { consumptions[customer]?[$0] }
        return CustomerRecords(transactions: bought, renewals: renewing, consumptions: used)
    }

    public func transactions(of customer: CustomerKey, after cursor: String?, limit: Int, newestFirst: Bool)
        throws(StorageError) -> [StoredTransaction]
    {
        func key(_ id: String) -> (Int, String) { (id.utf8.count, id) }
        var ordered = try records(of: customer).transactions.sorted { key($0.transactionID) < key($1.transactionID) }
        if newestFirst { ordered.reverse() }
        let remaining = cursor.map { cursor in
            ordered.filter { newestFirst ? key($0.transactionID) < key(cursor) : key($0.transactionID) > key(cursor) }
        }
        return Array((remaining ?? ordered).prefix(max(0, limit)))
    }

    /// Built from every record each time: memory keeps nothing to fold.
    public func digest(of customer: CustomerKey) throws(StorageError) -> CustomerDigest {
        CustomerDigest(history: CompactHistory(try records(of: customer).history), version: writes[customer] ?? 0)
    }

    /// Nothing is kept, so nothing is replaced.
    public func replaceDigest(_ history: CompactHistory, of customer: CustomerKey, version: Int64)
        throws(StorageError) -> Bool
    {
        false
    }

    public func record(consumption: ConsumptionRecord, for customer: CustomerKey) throws(StorageError) -> Bool {
        let key = consumption.id ?? UUID().uuidString
        guard consumptions[customer]?[key] == nil else { return false }
        consumptions[customer, default: [:]][key] = consumption
        consumptionOrder[customer, default: []].append(key)
        writes[customer, default: 0] += 1
        return true
    }

    public func saveSimulatorState(_ rows: SimulatorStateRows, bundleID: String) throws(StorageError) {
        var saved = simulators[bundleID] ?? (rows.state, [:], [:])
        saved.state = rows.state
        for row in rows.transactions { saved.rows[row.key] = row.json == nil ? nil : row }
        for row in rows.notifications { saved.notes[row.key] = row.json == nil ? nil : row }
        simulators[bundleID] = saved
    }

    public func simulatorState(bundleID: String) throws(StorageError) -> SimulatorStateRows? {
        simulators[bundleID].map {
            SimulatorStateRows(
                state: $0.state, transactions: $0.rows.values.sorted { $0.order < $1.order },
                notifications: $0.notes.values.sorted { $0.order < $1.order })
        }
    }

    public func notification(uuid: String, bundleID: String) throws(StorageError) -> StoredNotification? {
        notifications["\(bundleID)\u{0}\(uuid)"]
    }

    public func counts() throws(StorageError) -> StorageCounts {
        let customers = Set(owners.flatMap { bundle, table in table.values.map { "\(bundle)\u{0}\($0.customerID)" } })
        return StorageCounts(
            transactions: transactions.count, notifications: notifications.count, customers: customers.count)
    }

    public func largestTransactionID(bundleID: String) throws(StorageError) -> UInt64? {
        transactions.values.filter { $0.bundleID == bundleID }.compactMap { UInt64($0.transactionID) }.max()
    }

    public func shutdown() throws(StorageError) {}

    // MARK: - The rules

    private func conflict(in batch: PurchaseBatch) -> RecordOutcome? {
        guard let claimant = batch.claimant else { return nil }
        for transaction in batch.transactions {
            if let owner = owners[transaction.bundleID]?[transaction.originalTransactionID], owner.claimed,
                owner.customerID != claimant
            {
                return .claimedByAnother(
                    originalTransactionID: transaction.originalTransactionID, owner: owner.customerID)
            }
        }
        return nil
    }

    private func apply(_ batch: PurchaseBatch) -> [String] {
        var result: [String] = []
        for transaction in batch.transactions {
            let owner = own(transaction, claimant: batch.claimant)
            if !result.contains(owner) { result.append(owner) }
            let key = "\(transaction.bundleID)\u{0}\(transaction.transactionID)"
            if let current = transactions[key],
                !SignedVersion.replaces(
                    (transaction.signedDate, transaction.document), (current.signedDate, current.document))
            {
                continue
            }
            transactions[key] = transaction
        }
        for owner in result {
            writes[CustomerKey(bundleID: batch.transactions.first?.bundleID ?? "", id: owner), default: 0] += 1
        }
        for renewal in batch.renewals {
            if let current = renewals[renewal.bundleID]?[renewal.originalTransactionID],
                !SignedVersion.replaces((renewal.signedDate, renewal.document), (current.signedDate, current.document))
            {
                continue
            }
            renewals[renewal.bundleID, default: [:]][renewal.originalTransactionID] = renewal
        }
        return result
    }

    private func own(_ transaction: StoredTransaction, claimant: String?) -> String {
        let current = owners[transaction.bundleID]?[transaction.originalTransactionID]
        if let claimant {
            if current?.claimed != true {
                owners[transaction.bundleID, default: [:]][transaction.originalTransactionID] = Owner(
                    customerID: claimant, claimed: true)
            }
            return claimant
        }
        if let current { return current.customerID }
        let made = PurchaseBatch.implicitOwner(of: transaction)
        owners[transaction.bundleID, default: [:]][transaction.originalTransactionID] = Owner(
            customerID: made, claimed: false)
        return made
    }
}

/// The order of signed versions of one document: later signed date first, then the greater text, so any arrival
/// order ends in the same state.
enum SignedVersion {
    static func replaces(_ candidate: (Date, String), _ current: (Date, String)) -> Bool {
        let (newDate, newText) = candidate
        let (oldDate, oldText) = current
        let newMillis = newDate.millisecondsSince1970
        let oldMillis = oldDate.millisecondsSince1970
        return newMillis > oldMillis || (newMillis == oldMillis && newText > oldText)
    }
}
