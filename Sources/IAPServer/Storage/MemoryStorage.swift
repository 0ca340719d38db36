public import Foundation
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
    private var leases: [String: SimulatorLease] = [:]
    private var simulators:
        [String: (state: String, rows: [String: SimulatorStateRows.Row], notes: [String: SimulatorStateRows.Row])] = [:]

    /// The outbox: events by id with their sequence, deliveries by event id and endpoint.
    private var events: [String: (sequence: Int64, event: OutboxEvent)] = [:]
    private struct Delivery {
        var sequence: Int64
        var event: OutboxEvent
        var endpoint: String
        var state: DeliveryState
        var attempts: [DeliveryAttempt]
        var nextAttempt: Date
        var leaseUntil: Date
        var deliveredAt: Date?
    }
    private var outbox: [String: Delivery] = [:]
    private var nextSequence: Int64 = 1

    /// Aliases by bundle id: an anonymous customer's id -> the customer they logged in as.
    private var aliases: [String: [String: String]] = [:]
    /// Customers who logged in, as bundle id NUL customer id.
    private var identified: Set<String> = []

    public init() {}

    public func logIn(_ source: CustomerKey, as target: String, announcing announcer: EventAnnouncer?)
        throws(StorageError) -> LoginOutcome
    {
        let bundleID = source.bundleID
        let wasIdentified = identified.contains("\(bundleID)\u{0}\(source.id)")
        identified.insert("\(bundleID)\u{0}\(target)")
        guard source.id != target, !wasIdentified else { return LoginOutcome(merged: false, moved: []) }
        var moved: [String] = []
        for (original, owner) in owners[bundleID] ?? [:] where owner.customerID == source.id {
            owners[bundleID]?[original] = Owner(customerID: target, claimed: true)
            moved.append(original)
        }
        moved.sort()
        let targetKey = CustomerKey(bundleID: bundleID, id: target)
        for key in consumptionOrder[source] ?? [] where consumptions[targetKey]?[key] == nil {
            consumptions[targetKey, default: [:]][key] = consumptions[source]?[key]
            consumptionOrder[targetKey, default: []].append(key)
        }
        consumptions[source] = nil
        consumptionOrder[source] = nil
        for (alias, customer) in aliases[bundleID] ?? [:] where customer == source.id {
            aliases[bundleID]?[alias] = target
        }
        aliases[bundleID, default: [:]][source.id] = target
        writes[source, default: 0] += 1
        writes[targetKey, default: 0] += 1
        if let announcer, !announcer.endpoints(bundleID).isEmpty, !moved.isEmpty {
            let transfers = moved.map { original in
                Transfer(
                    originalTransactionID: original,
                    productID: transactions.values.filter {
                        $0.bundleID == bundleID && $0.originalTransactionID == original
                    }.max {
                        ($0.transactionID.utf8.count, $0.transactionID) < (
                            $1.transactionID.utf8.count, $1.transactionID
                        )
                    }?
                    .productID,
                    from: source.id, reason: "login")
            }
            store(
                announcer.events(
                    RecordedChange(
                        customer: targetKey, transactions: [], previousProducts: [:], renewals: [],
                        transfers: transfers)),
                endpoints: announcer.endpoints(bundleID))
        }
        return LoginOutcome(merged: true, moved: moved)
    }

    /// Stores events once each, with a pending delivery per endpoint.
    private func store(_ made: [OutboxEvent], endpoints: [String]) {
        for event in made where events[event.id] == nil {
            events[event.id] = (nextSequence, event)
            for endpoint in endpoints {
                outbox["\(event.id)\u{0}\(endpoint)"] = Delivery(
                    sequence: nextSequence, event: event, endpoint: endpoint, state: .pending, attempts: [],
                    nextAttempt: event.createdAt, leaseUntil: .distantPast, deliveredAt: nil)
            }
            nextSequence += 1
        }
    }

    // MARK: - The outbox

    public func leaseDeliveries(now: Date, leaseUntil: Date, instance: String, limit: Int) throws(StorageError)
        -> [LeasedDelivery]
    {
        let pending = outbox.values.filter { $0.state == .pending }
        var earliest: [String: Int64] = [:]
        for delivery in pending {
            let key = "\(delivery.endpoint)\u{0}\(delivery.event.bundleID)\u{0}\(delivery.event.customerID)"
            earliest[key] = min(earliest[key] ?? .max, delivery.sequence)
        }
        let due = pending.filter {
            $0.nextAttempt <= now && $0.leaseUntil <= now
                && earliest["\($0.endpoint)\u{0}\($0.event.bundleID)\u{0}\($0.event.customerID)"] == $0.sequence
        }
        .sorted { $0.sequence < $1.sequence }
        .prefix(max(1, limit))
        return due.map { delivery in
            outbox["\(delivery.event.id)\u{0}\(delivery.endpoint)"]?.leaseUntil = leaseUntil
            return LeasedDelivery(event: delivery.event, endpoint: delivery.endpoint, attempts: delivery.attempts.count)
        }
    }

    public func finishDeliveries(_ reports: [DeliveryReport]) throws(StorageError) {
        for report in reports {
            let key = "\(report.delivery.event.id)\u{0}\(report.delivery.endpoint)"
            guard var delivery = outbox[key], delivery.state == .pending else { continue }
            if !delivery.attempts.contains(where: { $0.number == report.attempt.number }) {
                delivery.attempts.append(report.attempt)
            }
            delivery.state = report.state
            delivery.leaseUntil = .distantPast
            delivery.nextAttempt = report.nextAttempt ?? report.attempt.startedAt
            if report.state == .delivered {
                delivery.deliveredAt = report.attempt.startedAt.addingTimeInterval(
                    Double(report.attempt.milliseconds) / 1_000)
            }
            outbox[key] = delivery
        }
    }

    public func customers(bundleID: String, after: String?, only: [String]?, limit: Int) -> [CustomerSummary] {
        let table = owners[bundleID] ?? [:]
        let ids =
            only
            ?? Array(Set(table.values.map(\.customerID)).filter { $0 > (after ?? "") }.sorted().prefix(limit))
        var summaries: [String: CustomerSummary] = [:]
        for id in ids {
            summaries[id] = CustomerSummary(
                customerId: id, purchases: 0, spent: [:], storefront: nil, lastPurchase: nil)
        }
        for transaction in transactions.values where transaction.bundleID == bundleID {
            guard let owner = table[transaction.originalTransactionID]?.customerID, var summary = summaries[owner]
            else { continue }
            let record = transaction.record
            summary.purchases += 1
            if record.revocation == nil, let currency = record.currency, let price = record.price, price > 0 {
                summary.spent[currency, default: 0].saturatingAdd(OverviewLine.summed(price))
            }
            if let storefront = record.storefront { summary.storefront = max(summary.storefront ?? "", storefront) }
            summary.lastPurchase = max(summary.lastPurchase ?? record.purchaseDate, record.purchaseDate)
            summaries[owner] = summary
        }
        return summaries.values.filter { $0.purchases > 0 }.sorted { $0.customerId < $1.customerId }
    }

    public func overview(_ query: OverviewQuery) -> Overview {
        let stored = transactions.values.filter { $0.bundleID == query.bundleID }
        var latestExpiry: [String: Date] = [:]
        for transaction in stored {
            guard let expires = transaction.record.expiresDate else { continue }
            latestExpiry[transaction.originalTransactionID] = max(
                latestExpiry[transaction.originalTransactionID] ?? expires, expires)
        }
        func line(_ kind: OverviewLine.Kind, _ transaction: StoredTransaction, at date: Date?) -> OverviewLine {
            let record = transaction.record
            return OverviewLine(
                kind: kind, day: date.map(Overview.day(of:)), productID: transaction.productID,
                storefront: record.storefront ?? "", currency: record.currency ?? "", count: 1,
                amount: OverviewLine.summed(record.price))
        }
        let span = query.from..<query.to
        let moment = query.moment
        var lines: [OverviewLine] = []
        var active: [String: (product: String, storefront: String, trial: Bool)] = [:]
        var paying: Set<String> = []
        for transaction in stored {
            let record = transaction.record
            if span.contains(record.purchaseDate) {
                let first = record.expiresDate != nil && transaction.transactionID == transaction.originalTransactionID
                lines.append(line(.purchase(first: first), transaction, at: record.purchaseDate))
                if (record.price ?? 0) > 0, record.revocation == nil,
                    let owner = owners[query.bundleID]?[transaction.originalTransactionID]
                {
                    paying.insert(owner.customerID)
                }
            }
            if let revocation = record.revocation, span.contains(revocation.date) {
                lines.append(line(.refund, transaction, at: revocation.date))
            }
            guard let expires = record.expiresDate, record.revocation == nil else { continue }
            if expires >= query.from, expires < moment, latestExpiry[transaction.originalTransactionID] == expires {
                var churn = line(.churn, transaction, at: expires)
                churn.currency = ""
                churn.amount = 0
                lines.append(churn)
            }
            if record.purchaseDate <= moment, expires > moment {
                let key =
                    "\(transaction.productID)\u{0}\(record.storefront ?? "")\u{0}\(transaction.originalTransactionID)"
                let trial = (active[key]?.trial ?? false) || record.offer?.isFreeTrial == true
                active[key] = (transaction.productID, record.storefront ?? "", trial)
            }
        }
        var groups: [String: OverviewLine] = [:]
        for (product, storefront, trial) in active.values {
            let key = "\(product)\u{0}\(storefront)"
            var group =
                groups[key]
                ?? OverviewLine(
                    kind: .active(trials: 0), day: nil, productID: product, storefront: storefront, currency: "",
                    count: 0, amount: 0)
            group.count += 1
            if case .active(let trials) = group.kind { group.kind = .active(trials: trials + (trial ? 1 : 0)) }
            groups[key] = group
        }
        return Overview(query, lines: lines + groups.values, payingCustomers: paying.count)
    }

    public func deliveries(_ query: DeliveryQuery) throws(StorageError) -> [DeliveryRecord] {
        outbox.values
            .filter { query.admits($0.event, state: $0.state) }
            .sorted { ($1.sequence, $0.endpoint) < ($0.sequence, $1.endpoint) }
            .prefix(max(1, min(query.limit, 1_000)))
            .map {
                DeliveryRecord(
                    event: $0.event, endpoint: $0.endpoint, state: $0.state,
                    nextAttempt: $0.state == .pending ? $0.nextAttempt : nil, deliveredAt: $0.deliveredAt,
                    attempts: $0.attempts)
            }
    }

    public func retryDelivery(eventID: String, endpoint: String?, now: Date) throws(StorageError) -> Int {
        var count = 0
        for (key, delivery) in outbox
        where delivery.event.id == eventID && (endpoint == nil || delivery.endpoint == endpoint)
            && (delivery.state != .pending || delivery.leaseUntil <= now)
        {
            outbox[key]?.state = .pending
            outbox[key]?.nextAttempt = now
            count += 1
        }
        return count
    }

    public func record(_ batch: PurchaseBatch, announcing announcer: EventAnnouncer?) throws(StorageError)
        -> RecordOutcome
    {
        if let conflict = conflict(in: batch) { return conflict }
        let owners = try apply(batch, announcing: announcer)
        let digest = try owners.first.map { (owner) throws(StorageError) in
            try self.digest(of: CustomerKey(bundleID: batch.transactions.first?.bundleID ?? "", id: owner))
        }
        return .recorded(owners: owners, digest: digest ?? CustomerDigest(history: CompactHistory(), version: 0))
    }

    public func record(
        notification: StoredNotification, applying batch: PurchaseBatch, announcing announcer: EventAnnouncer?,
        queueing queued: [QueuedEvent]
    ) throws(StorageError) -> Bool {
        let key = "\(notification.bundleID)\u{0}\(notification.uuid)"
        guard notifications[key] == nil else {
            notifications[key]?.repeats += 1
            return false
        }
        notifications[key] = notification
        _ = try apply(batch, announcing: announcer)
        for item in queued { store([item.event], endpoints: item.endpoints) }
        return true
    }

    public func notifications(_ query: NotificationQuery) throws(StorageError) -> [NotificationLogEntry] {
        let table = owners[query.bundleID] ?? [:]
        return notifications.values.filter { query.admits($0) }
            .map { notification in
                var listed = notification
                listed.body = ""
                return NotificationLogEntry(
                    notification: listed,
                    customerID: notification.originalTransactionID.flatMap { table[$0]?.customerID })
            }
            .filter { query.customerID == nil || $0.customerID == query.customerID }
            .sorted {
                ($0.notification.receivedAt.millisecondsSince1970, $0.notification.uuid)
                    > ($1.notification.receivedAt.millisecondsSince1970, $1.notification.uuid)
            }
            .prefix(max(1, min(query.limit, 1_000))).map { $0 }
    }

    public func customer(matching id: String, bundleID: String) throws(StorageError) -> CustomerKey? {
        if let customer = aliases[bundleID]?[id] { return CustomerKey(bundleID: bundleID, id: customer) }
        if identified.contains("\(bundleID)\u{0}\(id)") { return CustomerKey(bundleID: bundleID, id: id) }
        let table = owners[bundleID] ?? [:]
        if table.values.contains(where: { $0.customerID == id }) { return CustomerKey(bundleID: bundleID, id: id) }
        if let owner = table[id] { return CustomerKey(bundleID: bundleID, id: owner.customerID) }
        if let transaction = transactions["\(bundleID)\u{0}\(id)"],
            let owner = table[transaction.originalTransactionID]
        {
            return CustomerKey(bundleID: bundleID, id: owner.customerID)
        }
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

    public func saveSimulatorState(_ rows: SimulatorStateRows, bundleID: String, holder: String?)
        throws(StorageError) -> Bool
    {
        if let holder, leases[bundleID]?.holder != holder { return false }
        var saved = simulators[bundleID] ?? (rows.state, [:], [:])
        saved.state = rows.state
        for row in rows.transactions { saved.rows[row.key] = row.json == nil ? nil : row }
        for row in rows.notifications { saved.notes[row.key] = row.json == nil ? nil : row }
        simulators[bundleID] = saved
        return true
    }

    public func takeSimulatorLease(bundleID: String, holder: String, replacing stale: SimulatorLease?)
        throws(StorageError) -> SimulatorLease
    {
        if leases[bundleID] == nil || leases[bundleID] == stale {
            leases[bundleID] = SimulatorLease(holder: holder, beat: 0)
        }
        return leases[bundleID]!
    }

    public func beatSimulatorLease(bundleID: String, holder: String, note: String) throws(StorageError) -> Bool {
        guard leases[bundleID]?.holder == holder else { return false }
        leases[bundleID]?.beat += 1
        leases[bundleID]?.note = note
        return true
    }

    public func simulatorLease(bundleID: String) throws(StorageError) -> SimulatorLease? { leases[bundleID] }

    public func releaseSimulatorLease(bundleID: String, holder: String) throws(StorageError) {
        if leases[bundleID]?.holder == holder { leases[bundleID] = nil }
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

    public func reachable() async -> Bool { true }

    // MARK: - The rules

    private func conflict(in batch: PurchaseBatch) -> RecordOutcome? {
        guard let claimant = batch.claimant, batch.policy == .refuse else { return nil }
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

    /// Applies a batch and stores the events of what it changed; answers the owners.
    private func apply(_ batch: PurchaseBatch, announcing announcer: EventAnnouncer?) throws(StorageError) -> [String] {
        let bundleID = batch.transactions.first?.bundleID ?? batch.renewals.first?.bundleID ?? ""
        let announcing = announcer.map { !$0.endpoints(bundleID).isEmpty } ?? false
        var result: [String] = batch.claimant.map { [$0] } ?? []
        var changes: [String: RecordedChange] = [:]
        func note(_ owner: String, _ edit: (inout RecordedChange) -> Void) {
            guard announcing else { return }
            var change =
                changes[owner]
                ?? RecordedChange(
                    customer: CustomerKey(bundleID: bundleID, id: owner), transactions: [], previousProducts: [:],
                    renewals: [])
            edit(&change)
            changes[owner] = change
        }
        let ordered = batch.transactions.sorted {
            ($0.record.purchaseDate, $0.transactionID) < ($1.record.purchaseDate, $1.transactionID)
        }
        for transaction in ordered {
            var owner = own(transaction, claimant: batch.claimant)
            if let claimant = batch.claimant, owner != claimant, batch.policy == .transfer {
                owners[bundleID]?[transaction.originalTransactionID] = Owner(customerID: claimant, claimed: true)
                writes[CustomerKey(bundleID: bundleID, id: owner), default: 0] += 1
                let moved = Transfer(
                    originalTransactionID: transaction.originalTransactionID, productID: transaction.productID,
                    from: owner, reason: "restore")
                note(claimant) { change in
                    if !change.transfers.contains(where: { $0.originalTransactionID == moved.originalTransactionID }) {
                        change.transfers.append(moved)
                    }
                }
                owner = claimant
            }
            if !result.contains(owner) { result.append(owner) }
            let key = "\(transaction.bundleID)\u{0}\(transaction.transactionID)"
            let current = transactions[key]
            if let current,
                !SignedVersion.replaces(
                    (transaction.signedDate, transaction.document), (current.signedDate, current.document))
            {
                continue
            }
            let previous =
                current == nil && transaction.transactionID != transaction.originalTransactionID
                ? transactions.values
                    .filter {
                        $0.bundleID == transaction.bundleID
                            && $0.originalTransactionID == transaction.originalTransactionID
                            && ($0.transactionID.utf8.count, $0.transactionID)
                                < (transaction.transactionID.utf8.count, transaction.transactionID)
                    }
                    .max {
                        ($0.transactionID.utf8.count, $0.transactionID) < (
                            $1.transactionID.utf8.count, $1.transactionID
                        )
                    }?
                    .productID : nil
            transactions[key] = transaction
            note(owner) {
                $0.transactions.append(Replacement(before: current, after: transaction))
                $0.previousProducts[transaction.transactionID] = previous
            }
        }
        for owner in result {
            writes[CustomerKey(bundleID: batch.transactions.first?.bundleID ?? "", id: owner), default: 0] += 1
        }
        for renewal in batch.renewals {
            let current = renewals[renewal.bundleID]?[renewal.originalTransactionID]
            if let current,
                !SignedVersion.replaces((renewal.signedDate, renewal.document), (current.signedDate, current.document))
            {
                continue
            }
            renewals[renewal.bundleID, default: [:]][renewal.originalTransactionID] = renewal
            if let owner = owners[renewal.bundleID]?[renewal.originalTransactionID]?.customerID {
                note(owner) { $0.renewals.append(Replacement(before: current, after: renewal)) }
            }
        }
        guard let announcer else { return result }
        let endpoints = announcer.endpoints(bundleID)
        for owner in changes.keys.sorted() {
            guard let change = changes[owner] else { continue }
            store(announcer.events(change), endpoints: endpoints)
        }
        return result
    }

    private func own(_ transaction: StoredTransaction, claimant: String?) -> String {
        let current = owners[transaction.bundleID]?[transaction.originalTransactionID]
        if let claimant {
            guard let current, current.claimed else {
                owners[transaction.bundleID, default: [:]][transaction.originalTransactionID] = Owner(
                    customerID: claimant, claimed: true)
                return claimant
            }
            return current.customerID
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
