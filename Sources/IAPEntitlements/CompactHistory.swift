public import Foundation
import IAPCatalog

/// A customer's history reduced to what decides their entitlements from a moment on, so that the cost of a snapshot
/// does not grow with the length of the history.
///
/// ``EntitlementEngine/compacted(_:at:keeping:)`` folds what can no longer change: a consumable's old purchases,
/// consumptions and refunds into opening totals, the periods of a subscription that ended long ago, the copies of a
/// non-consumable after the one that owns it. The recent records stay as they are. The engine's
/// `snapshot(of:at:)` for a compact history then answers what the whole history would (the lists of a
/// consumable's events and of revocations start with the most recent ones and say how many came before), for any
/// moment from the last fold on. New records are added with ``append(records:renewals:consumptions:)`` as long as
/// they come after what was folded; anything else needs the compact history built again from the whole one.
///
/// ```swift
/// var compact = CompactHistory(history)
/// compact = engine.compacted(compact, at: now)
/// if compact.append(records: [bought]) {
///     let snapshot = engine.snapshot(of: compact, at: now)
/// }
/// ```
public struct CompactHistory: Hashable, Sendable, Codable {
    /// The records kept as they are (renewal information: the latest per original transaction).
    public internal(set) var history: PurchaseHistory
    /// The latest date of a subscription period or non-consumable folded away; nil while none is. (A consumable's
    /// fold point is its opening's ``ConsumableOpening/last``.)
    public internal(set) var foldedThrough: Date?
    /// The moment of the last fold: a snapshot of an earlier moment needs the whole history.
    public internal(set) var foldedAt: Date?
    /// Per consumable product, the totals of its folded events.
    public internal(set) var openings: [String: ConsumableOpening] = [:]
    /// The most recent of the revocations folded away (at most ``keptRevocations``), oldest first.
    public internal(set) var foldedRevocations: [RevokedTransaction] = []
    /// How many revocations were folded away in all.
    public internal(set) var foldedRevocationCount = 0
    /// Upgraded subscription periods folded away, by the group's key.
    public internal(set) var foldedUpgrades: [String: [String]] = [:]

    /// How many folded revocations are listed.
    public static let keptRevocations = 50

    /// A compact history holding all of `history` (nothing folded yet).
    public init(_ history: PurchaseHistory = PurchaseHistory()) {
        self.history = history
        self.history.renewals = Array(EntitlementEngine.latestRenewals(history.renewals).values)
            .sorted { $0.originalTransactionID < $1.originalTransactionID }
    }

    /// Records and consumptions kept as they are: what a snapshot reads.
    public var keptCount: Int { history.records.count + history.consumptions.count }
    /// ``keptCount`` right after the last fold: a history worth folding again has grown well past it.
    public internal(set) var keptAtLastFold = 0

    /// Whether folding now would be worth its cost: the kept records have grown past `minimum` and twice what the
    /// last fold left.
    public func worthFolding(minimum: Int = 64) -> Bool { keptCount >= max(minimum, 2 * keptAtLastFold) }

    /// Adds records of transactions not seen before, renewal information and consumptions. False (and nothing is
    /// added) when one of them reaches back into what was folded (a consumable's event that would count before its
    /// folded ones, another record dated at or before ``foldedThrough``): the compact history must then be built
    /// again from the whole one.
    public mutating func append(
        records: [PurchaseRecord], renewals: [RenewalRecord] = [], consumptions: [ConsumptionRecord] = []
    ) -> Bool {
        for record in records {
            if let last = openings[record.productID]?.last {
                // Revoked or not later: the refund, if any, must come after the fold too.
                let events = EntitlementEngine.consumableEvents(of: record, at: .distantFuture)
                if events.contains(where: { ConsumableEventKey($0) <= last }) { return false }
            } else if let folded = foldedThrough {
                if record.purchaseDate <= folded { return false }
                if let revocation = record.revocation, revocation.date <= folded { return false }
            }
        }
        for consumption in consumptions {
            if let last = openings[consumption.productID]?.last,
                ConsumableEventKey(EntitlementEngine.consumableEvent(of: consumption)) <= last
            {
                return false
            }
        }
        history.records += records
        history.consumptions += consumptions
        if !renewals.isEmpty {
            history.renewals = Array(EntitlementEngine.latestRenewals(history.renewals + renewals).values)
                .sorted { $0.originalTransactionID < $1.originalTransactionID }
        }
        return true
    }

    mutating func noteFolded(_ date: Date) {
        foldedThrough = max(foldedThrough ?? date, date)
    }

    mutating func fold(revoked record: PurchaseRecord) {
        guard let revocation = record.revocation else { return }
        foldedRevocationCount += 1
        foldedRevocations.append(
            RevokedTransaction(
                productID: record.productID, transactionID: record.transactionID, purchaseDate: record.purchaseDate,
                revocation: revocation))
        if foldedRevocations.count > 2 * Self.keptRevocations {
            foldedRevocations.sort { ($0.purchaseDate, $0.transactionID) < ($1.purchaseDate, $1.transactionID) }
            foldedRevocations.removeFirst(foldedRevocations.count - Self.keptRevocations)
        }
    }
}

extension EntitlementEngine {
    /// The snapshot at `moment` from a compact history: what the whole history gives, except that a consumable's
    /// events and the revocations list the most recent ones after a count of the earlier ones. Nil for a moment
    /// before the last fold (use the whole history then).
    public func snapshot(of compact: CompactHistory, at moment: Date) -> EntitlementSnapshot? {
        if let foldedAt = compact.foldedAt, moment < foldedAt { return nil }
        var snapshot = snapshot(
            records: compact.history.records, renewals: compact.history.renewals,
            consumptions: compact.history.consumptions, originalAppVersion: compact.history.originalAppVersion,
            openings: compact.openings, at: moment)
        if compact.foldedRevocationCount > 0 {
            snapshot.revokedTransactions = compact.foldedRevocations + snapshot.revokedTransactions
            let earlier = compact.foldedRevocationCount - compact.foldedRevocations.count
            if earlier > 0 { snapshot.earlierRevocations = earlier }
        }
        for index in snapshot.subscriptionGroups.indices {
            if let upgrades = compact.foldedUpgrades[snapshot.subscriptionGroups[index].key] {
                snapshot.subscriptionGroups[index].upgradedTransactionIDs.insert(contentsOf: upgrades, at: 0)
            }
        }
        return snapshot
    }

    /// Folds what can no longer change at `moment` or later, keeping at least the `recent` latest events of each
    /// consumable and periods of each subscription group as they are.
    public func compacted(_ compact: CompactHistory, at moment: Date, keeping recent: Int = 20) -> CompactHistory {
        var result = compact
        result.foldedAt = max(compact.foldedAt ?? moment, moment)
        let records = Self.merged(compact.history.records)
        var folded = Set<Int>()  // indices into `records`
        func settled(_ record: PurchaseRecord) -> Bool {
            record.purchaseDate <= moment && (record.revocation.map { $0.date <= moment } ?? true)
        }
        var byKind: [ProductKind: [Int]] = [:]
        for index in records.indices {
            if let kind = kind(of: records[index]) { byKind[kind, default: []].append(index) }
        }
        var keptConsumptions = compact.history.consumptions
        foldConsumables(
            records, byKind[.consumable] ?? [], at: moment, keeping: recent, settled: settled, into: &result,
            folded: &folded, consumptions: &keptConsumptions)
        foldNonConsumables(records, byKind[.nonConsumable] ?? [], settled: settled, into: &result, folded: &folded)
        foldSubscriptions(
            records, byKind[.autoRenewable] ?? [], at: moment, keeping: recent, settled: settled, into: &result,
            folded: &folded)
        // A chain's group stated only by periods folded away stays known to the periods kept.
        var chainGroups: [String: String] = [:]
        for record in records where chainGroups[record.originalTransactionID] == nil {
            if let group = record.subscriptionGroupID { chainGroups[record.originalTransactionID] = group }
        }
        result.history.records = records.indices.filter { !folded.contains($0) }.map { index in
            var record = records[index]
            if record.subscriptionGroupID == nil, kind(of: record) == .autoRenewable {
                record.subscriptionGroupID = chainGroups[record.originalTransactionID]
            }
            return record
        }
        result.history.consumptions = keptConsumptions
        result.foldedRevocations.sort { ($0.purchaseDate, $0.transactionID) < ($1.purchaseDate, $1.transactionID) }
        result.foldedRevocations = Array(result.foldedRevocations.suffix(CompactHistory.keptRevocations))
        result.keptAtLastFold = result.keptCount
        return result
    }

    /// A consumable's oldest events fold into its opening: the longest prefix (in the order events count) of settled
    /// events that leaves the newest `recent` alone and takes a refunded purchase together with its refund.
    private func foldConsumables(
        _ records: [PurchaseRecord], _ indices: [Int], at moment: Date, keeping recent: Int,
        settled: (PurchaseRecord) -> Bool, into result: inout CompactHistory, folded: inout Set<Int>,
        consumptions: inout [ConsumptionRecord]
    ) {
        let consumables = indices.map { records[$0] }
        let indexByID = Dictionary(indices.map { (records[$0].transactionID, $0) }, uniquingKeysWith: { a, _ in a })
        let distinct = Self.distinct(consumptions)
        let events = Self.consumableEvents(consumables, distinct, at: moment)
        var foldedConsumptions = Set<Int>()  // indices into `distinct`
        for (productID, ordered) in events.sorted(by: { $0.key < $1.key }) {
            var cut = max(0, ordered.count - recent)
            if let unsettled = ordered.prefix(cut).firstIndex(where: { $0.date > moment }) { cut = unsettled }
            // A purchase and its refund fold together or not at all, and a record not yet settled does not fold: a
            // cut inside a record's span of events (or after the first event of an unsettled one) is not allowed.
            // One pass over the spans marks those cuts; the largest allowed one at or below `cut` is taken.
            var spans: [String: (first: Int, last: Int)] = [:]
            for (position, event) in ordered.enumerated() where event.kind != .consumption {
                guard let id = event.transactionID else { continue }
                let span = spans[id] ?? (position, position)
                spans[id] = (min(span.first, position), max(span.last, position))
            }
            var blocked = [Int](repeating: 0, count: ordered.count + 2)  // a difference array over cuts 0...count
            for (id, span) in spans {
                let unsettled = indexByID[id].map { !settled(records[$0]) } ?? false
                blocked[span.first + 1] += 1
                blocked[(unsettled ? ordered.count : span.last) + 1] -= 1
            }
            var running = 0
            var allowed = 0
            for candidate in 0...cut {
                running += blocked[candidate]
                if running == 0 { allowed = candidate }
            }
            cut = allowed
            guard cut > 0 else { continue }
            var balance = ConsumableBalance(
                productID: productID, purchased: 0, consumed: 0, refunded: 0, balance: 0, shortfall: 0, history: [])
            let opening = result.openings[productID] ?? ConsumableOpening()
            balance.purchased = opening.purchased
            balance.consumed = opening.consumed
            balance.refunded = opening.refunded
            balance.balance = opening.balance
            balance.shortfall = opening.shortfall
            var consumed: [ConsumableEvent] = []
            for event in ordered.prefix(cut) {
                _ = Self.apply(event, to: &balance)
                switch event.kind {
                case .purchase:
                    if let id = event.transactionID, let index = indexByID[id] { folded.insert(index) }
                case .refund:
                    if let id = event.transactionID, let index = indexByID[id] { result.fold(revoked: records[index]) }
                case .consumption:
                    consumed.append(event)
                }
            }
            // The consumptions folded: for each folded consumption event, the first unfolded one of `distinct` it
            // was made from.
            var waiting: [ConsumableEventKey: [Int]] = [:]
            if !consumed.isEmpty {
                for index in distinct.indices where distinct[index].productID == productID {
                    waiting[ConsumableEventKey(Self.consumableEvent(of: distinct[index])), default: []].append(index)
                }
            }
            for key in waiting.keys { waiting[key]?.reverse() }  // the first is taken from the end
            for event in consumed {
                if let index = waiting[ConsumableEventKey(event)]?.popLast() { foldedConsumptions.insert(index) }
            }
            var updated = opening
            updated.purchased = balance.purchased
            updated.consumed = balance.consumed
            updated.refunded = balance.refunded
            updated.balance = balance.balance
            updated.shortfall = balance.shortfall
            updated.events += cut
            updated.last = ConsumableEventKey(ordered[cut - 1])
            result.openings[productID] = updated
        }
        if !foldedConsumptions.isEmpty {
            // Duplicates of a folded consumption's id (which count once) go with it.
            let foldedIDs = Set(foldedConsumptions.compactMap { distinct[$0].id })
            let remaining = distinct.indices.filter { !foldedConsumptions.contains($0) }.map { distinct[$0] }
            consumptions = remaining.filter { $0.id == nil || !foldedIDs.contains($0.id!) }
        }
    }

    /// A non-consumable is owned by its first settled purchase that was not revoked: later copies can never own it
    /// (revoked ones are listed as revocations), so they fold.
    private func foldNonConsumables(
        _ records: [PurchaseRecord], _ indices: [Int], settled: (PurchaseRecord) -> Bool,
        into result: inout CompactHistory, folded: inout Set<Int>
    ) {
        var owner: [String: Int] = [:]
        for index in indices {
            let record = records[index]
            guard settled(record) else { continue }
            if record.revocation != nil {
                folded.insert(index)
                result.fold(revoked: record)
                result.noteFolded(max(record.purchaseDate, record.revocation!.date))
            } else if owner[record.productID] != nil {
                folded.insert(index)
                result.noteFolded(record.purchaseDate)
            } else if record.ownership == .purchased {
                owner[record.productID] = index
            }
        }
    }

    /// A subscription group's periods that ended before `moment` fold, except the newest `recent`, the newest one not
    /// upgraded, and the first introductory offer (which decides eligibility for another).
    private func foldSubscriptions(
        _ records: [PurchaseRecord], _ indices: [Int], at moment: Date, keeping recent: Int,
        settled: (PurchaseRecord) -> Bool, into result: inout CompactHistory, folded: inout Set<Int>
    ) {
        var chainGroups: [String: String] = [:]
        for index in indices {
            let record = records[index]
            if chainGroups[record.originalTransactionID] == nil, let group = record.subscriptionGroupID {
                chainGroups[record.originalTransactionID] = group
            }
        }
        var groups: [String: [Int]] = [:]
        for index in indices {
            let record = records[index]
            let id =
                catalog?.product(record.productID)?.subscription?.groupID ?? record.subscriptionGroupID
                ?? chainGroups[record.originalTransactionID]
            groups[id ?? "original:\(record.originalTransactionID)", default: []].append(index)
        }
        for (key, members) in groups {
            var keep = Set(members.suffix(recent))
            if let last = members.last(where: { !records[$0].isUpgraded }) { keep.insert(last) }
            if let intro = members.first(where: {
                records[$0].ownership == .purchased && records[$0].offer?.kind == .introductory
            }) {
                keep.insert(intro)
            }
            for index in members where !keep.contains(index) {
                let record = records[index]
                let end = min(record.expiresDate ?? record.purchaseDate, record.revocation?.date ?? .distantFuture)
                guard settled(record), end <= moment else { continue }
                folded.insert(index)
                result.noteFolded(max(record.purchaseDate, record.revocation?.date ?? record.purchaseDate))
                if record.revocation != nil { result.fold(revoked: record) }
                if record.isUpgraded { result.foldedUpgrades[key, default: []].append(record.transactionID) }
            }
        }
    }
}
