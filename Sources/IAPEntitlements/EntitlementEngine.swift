public import Foundation
public import IAPCatalog
import IAPCore

/// The caller's choices where the App Store leaves the answer to the app.
public struct EntitlementPolicy: Hashable, Sendable {
    /// How long each non-renewing subscription lasts, by product id (the App Store does not say: the app decides).
    public var nonRenewingDurations: [String: SubscriptionPeriod]
    /// The duration of non-renewing products not listed in ``nonRenewingDurations``; `nil` reports them as
    /// ``NonRenewingStatus/State/durationUnknown``.
    public var defaultNonRenewingDuration: SubscriptionPeriod?
    /// Whether a non-renewing purchase made while an earlier one still runs starts when that one ends (`true`, the
    /// customer keeps every day paid for) or at once (`false`).
    public var stacksNonRenewingPurchases: Bool
    /// How long Apple keeps retrying a failed renewal before the subscription expires: 60 days.
    public var billingRetryDuration: TimeInterval

    public init(
        nonRenewingDurations: [String: SubscriptionPeriod] = [:],
        defaultNonRenewingDuration: SubscriptionPeriod? = nil,
        stacksNonRenewingPurchases: Bool = true,
        billingRetryDuration: TimeInterval = 60 * 86_400
    ) {
        self.nonRenewingDurations = nonRenewingDurations
        self.defaultNonRenewingDuration = defaultNonRenewingDuration
        self.stacksNonRenewingPurchases = stacksNonRenewingPurchases
        self.billingRetryDuration = billingRetryDuration
    }
}

/// Computes what a customer owns at a moment from their purchase records: a pure function of its inputs.
///
/// The engine has no clock and does no I/O. It accepts records in any order and with duplicates (the same
/// transaction from a receipt and from signed data counts once, the better-informed copy wins), ignores what was
/// bought after the moment, and treats a refund or revocation as taking effect at its date. The catalog, when given,
/// decides product types, subscription groups and service levels; without it the records' own statements are used
/// and what they do not state is reported as unknown.
public struct EntitlementEngine: Sendable {
    public let catalog: Catalog?
    public var policy: EntitlementPolicy
    private let productsByID: [String: CatalogProduct]

    public init(catalog: Catalog? = nil, policy: EntitlementPolicy = EntitlementPolicy()) {
        self.catalog = catalog
        self.policy = policy
        var index: [String: CatalogProduct] = [:]
        for product in catalog?.products ?? [] where index[product.id] == nil { index[product.id] = product }
        self.productsByID = index
    }

    /// The snapshot at `moment`.
    ///
    /// - Parameters:
    ///   - records: verified purchase records, any order, duplicates allowed.
    ///   - renewals: renewal information, at most one per original transaction id is used (the most recently signed).
    ///   - consumptions: what the app recorded as consumed; records with the same ``ConsumptionRecord/id`` count once.
    ///   - originalAppVersion: the version the customer first obtained, for ``EntitlementSnapshot/obtainedAppBefore(version:)``.
    ///   - moment: the instant the snapshot describes; nothing signed after it counts.
    public func snapshot(
        records: [PurchaseRecord],
        renewals: [RenewalRecord] = [],
        consumptions: [ConsumptionRecord] = [],
        originalAppVersion: String? = nil,
        at moment: Date
    ) -> EntitlementSnapshot {
        snapshot(
            records: records, renewals: renewals, consumptions: consumptions, originalAppVersion: originalAppVersion,
            openings: [:], at: moment)
    }

    /// The snapshot at `moment`, each consumable's balance starting from its `openings` (events folded away by a
    /// ``CompactHistory``).
    func snapshot(
        records: [PurchaseRecord], renewals: [RenewalRecord], consumptions: [ConsumptionRecord],
        originalAppVersion: String?, openings: [String: ConsumableOpening], at moment: Date
    ) -> EntitlementSnapshot {
        var byKind: [ProductKind: [PurchaseRecord]] = [:]
        var unclassified: [UnclassifiedPurchase] = []
        var revoked: [RevokedTransaction] = []
        // Subscriptions see later purchases too: an upgrade flag takes effect when the upgraded-to period starts.
        var laterSubscriptions: [PurchaseRecord] = []
        for record in Self.merged(records) {
            guard record.purchaseDate <= moment else {
                if kind(of: record) == .autoRenewable { laterSubscriptions.append(record) }
                continue
            }
            if record.isRevoked(at: moment), let revocation = record.revocation {
                revoked.append(
                    RevokedTransaction(
                        productID: record.productID, transactionID: record.transactionID,
                        purchaseDate: record.purchaseDate, revocation: revocation))
            }
            if let kind = kind(of: record) {
                byKind[kind, default: []].append(record)
            } else if !record.isRevoked(at: moment) {
                unclassified.append(
                    UnclassifiedPurchase(
                        productID: record.productID, transactionID: record.transactionID,
                        purchaseDate: record.purchaseDate, quantity: record.quantity))
            }
        }
        return EntitlementSnapshot(
            moment: moment,
            nonConsumables: ownedNonConsumables(byKind[.nonConsumable] ?? [], at: moment),
            consumables: consumableBalances(byKind[.consumable] ?? [], consumptions, openings: openings, at: moment),
            subscriptionGroups: subscriptionGroups(
                (byKind[.autoRenewable] ?? []) + laterSubscriptions, renewals, at: moment),
            nonRenewingSubscriptions: nonRenewingStatuses(byKind[.nonRenewable] ?? [], at: moment),
            unclassified: unclassified,
            revokedTransactions: revoked,
            originalAppVersion: originalAppVersion
        )
    }

    /// The product type: the catalog's, else the record's, else an auto-renewable subscription if it has an expiry.
    public func kind(of record: PurchaseRecord) -> ProductKind? {
        if let kind = productsByID[record.productID]?.kind { return kind }
        if let kind = record.kind { return kind }
        return record.expiresDate == nil ? nil : .autoRenewable
    }

    // MARK: - Records

    /// One record per transaction id, sorted by purchase date then transaction id.
    static func merged(_ records: [PurchaseRecord]) -> [PurchaseRecord] {
        // Indices, not records, are stored and sorted: moving a record means copying a dozen fields (measured:
        // sorting the records themselves took a third of a snapshot).
        var chosen: [String: Int] = [:]
        chosen.reserveCapacity(records.count)
        for index in records.indices {
            let id = records[index].transactionID
            if let existing = chosen[id], !isBetterInformed(records[index], than: records[existing]) { continue }
            chosen[id] = index
        }
        return chosen.values.sorted {
            (records[$0].purchaseDate, records[$0].transactionID) < (
                records[$1].purchaseDate, records[$1].transactionID
            )
        }.map { records[$0] }
    }

    /// Which of two copies of one transaction to keep: of two statements by the same kind of source, the later one
    /// (a refund, then its reversal); otherwise the one that knows of a revocation or an upgrade, then the more
    /// complete source, then the later expiry; any remaining tie is broken by content so order never matters.
    static func isBetterInformed(_ a: PurchaseRecord, than b: PurchaseRecord) -> Bool {
        if a.source == b.source, let aSigned = a.signedDate, let bSigned = b.signedDate, aSigned != bSigned {
            return aSigned > bSigned
        }
        if (a.revocation != nil) != (b.revocation != nil) { return a.revocation != nil }
        if a.isUpgraded != b.isUpgraded { return a.isUpgraded }
        if a.source != b.source { return a.source < b.source }
        let aExpiry = a.expiresDate ?? .distantPast
        let bExpiry = b.expiresDate ?? .distantPast
        if aExpiry != bExpiry { return aExpiry > bExpiry }
        if (a.kind != nil) != (b.kind != nil) { return a.kind != nil }
        return a != b && String(reflecting: a) < String(reflecting: b)
    }

    // MARK: - Non-consumables

    private func ownedNonConsumables(_ records: [PurchaseRecord], at moment: Date) -> [OwnedProduct] {
        var best: [String: PurchaseRecord] = [:]
        for record in records where !record.isRevoked(at: moment) {
            // Records are in purchase order: the first purchased copy wins, a family-shared one only until then.
            if let current = best[record.productID],
                !(current.ownership == .familyShared && record.ownership == .purchased)
            {
                continue
            }
            best[record.productID] = record
        }
        return best.values.sorted { $0.productID < $1.productID }.map {
            OwnedProduct(
                productID: $0.productID, transactionID: $0.transactionID,
                originalTransactionID: $0.originalTransactionID, purchaseDate: $0.purchaseDate,
                ownership: $0.ownership, source: $0.source)
        }
    }

    // MARK: - Consumables

    private func consumableBalances(
        _ records: [PurchaseRecord], _ consumptions: [ConsumptionRecord], openings: [String: ConsumableOpening],
        at moment: Date
    ) -> [ConsumableBalance] {
        let ordered = Self.consumableEvents(records, consumptions, at: moment)
        return Set(ordered.keys).union(openings.keys).sorted().map { productID in
            var balance = ConsumableBalance(
                productID: productID, purchased: 0, consumed: 0, refunded: 0, balance: 0, shortfall: 0, history: [])
            if let opening = openings[productID] {
                balance.purchased = opening.purchased
                balance.consumed = opening.consumed
                balance.refunded = opening.refunded
                balance.balance = opening.balance
                balance.shortfall = opening.shortfall
                balance.earlierEvents = opening.events
            }
            for event in ordered[productID] ?? [] { balance.history.append(Self.apply(event, to: &balance)) }
            return balance
        }
    }

    /// Applies one event to a balance; answers the event with the balance after it.
    static func apply(_ event: ConsumableEvent, to balance: inout ConsumableBalance) -> ConsumableEvent {
        var event = event
        switch event.kind {
        case .purchase:
            balance.purchased.saturatingAdd(event.quantity)
            balance.balance.saturatingAdd(event.quantity)
        case .consumption, .refund:
            if event.kind == .consumption {
                balance.consumed.saturatingAdd(event.quantity)
            } else {
                balance.refunded.saturatingAdd(event.quantity)
            }
            let covered = min(balance.balance, event.quantity)
            balance.balance -= covered
            balance.shortfall.saturatingAdd(event.quantity - covered)
        }
        event.balanceAfter = balance.balance
        return event
    }

    /// Each consumable product's events at `moment` in the order they count: by date, a purchase before a consumption
    /// before a refund on the same date, then by transaction id and quantity.
    static func consumableEvents(
        _ records: [PurchaseRecord], _ consumptions: [ConsumptionRecord], at moment: Date
    ) -> [String: [ConsumableEvent]] {
        var events: [String: [ConsumableEvent]] = [:]
        for record in records { events[record.productID, default: []] += consumableEvents(of: record, at: moment) }
        for consumption in Self.distinct(consumptions) where consumption.date <= moment {
            events[consumption.productID, default: []].append(consumableEvent(of: consumption))
        }
        return events.mapValues { list in list.sorted { ConsumableEventKey($0) < ConsumableEventKey($1) } }
    }

    /// A consumable record's events: its purchase, and its refund when revoked by `moment`.
    static func consumableEvents(of record: PurchaseRecord, at moment: Date) -> [ConsumableEvent] {
        let quantity = max(0, record.quantity)
        var events = [
            ConsumableEvent(
                date: record.purchaseDate, kind: .purchase, quantity: quantity, transactionID: record.transactionID,
                balanceAfter: 0)
        ]
        if record.isRevoked(at: moment), let revocation = record.revocation {
            events.append(
                ConsumableEvent(
                    date: revocation.date, kind: .refund, quantity: refundedUnits(quantity, revocation),
                    transactionID: record.transactionID, balanceAfter: 0))
        }
        return events
    }

    /// A consumption's event.
    static func consumableEvent(of consumption: ConsumptionRecord) -> ConsumableEvent {
        ConsumableEvent(
            date: consumption.date, kind: .consumption, quantity: max(0, consumption.quantity),
            transactionID: consumption.transactionID, balanceAfter: 0)
    }

    /// Units a revocation takes back: all of them, or the refunded share of a prorated refund.
    static func refundedUnits(_ quantity: Int, _ revocation: Revocation) -> Int {
        guard revocation.kind == .proratedRefund, let percentage = revocation.percentage else { return quantity }
        return proratedUnits(of: quantity, milliPercent: percentage)
    }

    /// The one proration rule, which the simulator's own view uses too: `milliPercent` thousandths of a percent
    /// (50000 = half) of `quantity`, rounded down, in integers so no quantity or percentage can overflow or trap.
    public static func proratedUnits(of quantity: Int, milliPercent: Int) -> Int {
        let quantity = max(quantity, 0)
        let share = min(max(milliPercent, 0), 100_000)
        // quantity * share / 100000 without forming the product: both parts stay below Int.max.
        return quantity / 100_000 * share + quantity % 100_000 * share / 100_000
    }

    /// Consumptions sorted, each caller id counted once.
    static func distinct(_ consumptions: [ConsumptionRecord]) -> [ConsumptionRecord] {
        let sorted = consumptions.sorted {
            ($0.date, $0.productID, $0.id ?? "", $0.transactionID ?? "", $0.quantity)
                < ($1.date, $1.productID, $1.id ?? "", $1.transactionID ?? "", $1.quantity)
        }
        var seen = Set<String>()
        return sorted.filter { consumption in
            guard let id = consumption.id else { return true }
            return seen.insert(id).inserted
        }
    }

    // MARK: - Non-renewing subscriptions

    private func nonRenewingStatuses(_ records: [PurchaseRecord], at moment: Date) -> [NonRenewingStatus] {
        let byProduct = Dictionary(grouping: records.filter { !$0.isRevoked(at: moment) }, by: \.productID)
        return byProduct.keys.sorted().map { productID in
            let purchases = byProduct[productID]!
            let ids = purchases.map(\.transactionID)
            let duration = policy.nonRenewingDurations[productID] ?? policy.defaultNonRenewingDuration
            // Each purchase's window, then runs of windows that touch.
            var runs: [(start: Date, end: Date)] = []
            for purchase in purchases {
                let start =
                    policy.stacksNonRenewingPurchases && purchase.expiresDate == nil
                    ? max(purchase.purchaseDate, runs.last?.end ?? .distantPast) : purchase.purchaseDate
                guard let end = purchase.expiresDate ?? duration.map({ $0.advance(start) }) else {
                    return NonRenewingStatus(
                        productID: productID, state: .durationUnknown, startDate: nil, expiresDate: nil,
                        transactionIDs: ids)
                }
                if let last = runs.last, start <= last.end {
                    runs[runs.count - 1].end = max(last.end, end)
                } else {
                    runs.append((start, end))
                }
            }
            let run = runs.last { $0.start <= moment }!
            return NonRenewingStatus(
                productID: productID, state: moment < run.end ? .active : .expired, startDate: run.start,
                expiresDate: run.end, transactionIDs: ids)
        }
    }

    // MARK: - Auto-renewable subscriptions

    private func subscriptionGroups(
        _ records: [PurchaseRecord], _ renewals: [RenewalRecord], at moment: Date
    ) -> [SubscriptionGroupStatus] {
        // A group a record states applies to its whole chain (a receipt's copy of the chain states none).
        var chainGroups: [String: String] = [:]
        for record in records {
            if chainGroups[record.originalTransactionID] == nil, let group = record.subscriptionGroupID {
                chainGroups[record.originalTransactionID] = group
            }
        }
        var groups: [String: (id: String?, records: [PurchaseRecord])] = [:]
        for record in records where record.purchaseDate <= moment {
            let id =
                productsByID[record.productID]?.subscription?.groupID ?? record.subscriptionGroupID
                ?? chainGroups[record.originalTransactionID]
            let key = id ?? "original:\(record.originalTransactionID)"
            groups[key, default: (id, [])].records.append(record)
        }
        let latestRenewals = Self.latestRenewals(renewals)
        // Upgrades are found among all periods, including those bought after the moment.
        var upgradeDates: [String: Date] = [:]
        for (index, record) in records.enumerated() where record.isUpgraded {
            let end = min(record.expiresDate ?? record.purchaseDate, record.revocation?.date ?? .distantFuture)
            let successor = records[(index + 1)...].first {
                $0.purchaseDate < end && $0.originalTransactionID == record.originalTransactionID
            }
            upgradeDates[record.transactionID] =
                successor?.purchaseDate ?? record.revocation?.date ?? record.purchaseDate
        }
        return groups.keys.sorted().map { key in
            let group = groups[key]!
            return status(ofGroup: key, id: group.id, group.records, upgradeDates, latestRenewals, at: moment)
        }
    }

    /// The most recently signed renewal record of each original transaction id.
    static func latestRenewals(_ renewals: [RenewalRecord]) -> [String: RenewalRecord] {
        var latest: [String: RenewalRecord] = [:]
        for renewal in renewals {
            if let existing = latest[renewal.originalTransactionID] {
                let a = renewal.signedDate ?? .distantPast
                let b = existing.signedDate ?? .distantPast
                if a < b
                    || (a == b
                        && (renewal.source > existing.source
                            || (renewal.source == existing.source
                                && String(reflecting: renewal) >= String(reflecting: existing))))
                {
                    continue
                }
            }
            latest[renewal.originalTransactionID] = renewal
        }
        return latest
    }

    private func level(of productID: String) -> Int? { productsByID[productID]?.subscription?.level }

    /// `records` are one group's, in purchase order.
    private func status(
        ofGroup key: String, id: String?, _ records: [PurchaseRecord], _ upgradeDates: [String: Date],
        _ renewals: [String: RenewalRecord], at moment: Date
    ) -> SubscriptionGroupStatus {
        // When each period stops counting: its expiry, its revocation, or the start of the period it was upgraded to.
        var serviceEnds: [Date] = []
        var upgraded: [String] = []
        for record in records {
            var end = record.expiresDate ?? record.purchaseDate
            if let revocation = record.revocation { end = min(end, revocation.date) }
            if let upgradeDate = upgradeDates[record.transactionID] {
                end = min(end, upgradeDate)
                if upgradeDate <= moment { upgraded.append(record.transactionID) }
            }
            serviceEnds.append(end)
        }

        var status = SubscriptionGroupStatus(
            groupID: id, key: key, state: .expired,
            introductoryOfferEligible: !records.contains {
                $0.ownership == .purchased && $0.offer?.kind == .introductory
            }, upgradedTransactionIDs: upgraded)

        let active = records.indices.filter { moment < serviceEnds[$0] }
        let current: PurchaseRecord
        if let best = active.min(by: { isHigherService(records[$0], than: records[$1]) }) {
            current = records[best]
            status.state = .subscribed
        } else {
            // Nothing runs now: the latest period that was not upgraded away says how it ended.
            current = records.last { !upgraded.contains($0.transactionID) } ?? records.last!
            if let revocation = current.revocation, revocation.date <= moment {
                status.state = .revoked
                status.revocation = revocation
            } else {
                applyLapse(of: current, renewals[current.originalTransactionID], at: moment, to: &status)
            }
        }
        status.currentProductID = current.productID
        status.serviceLevel = level(of: current.productID)
        status.currentTransactionID = current.transactionID
        status.originalTransactionID = current.originalTransactionID
        status.ownership = current.ownership
        status.periodStart = current.purchaseDate
        status.expiresDate = current.expiresDate

        if status.state == .expired || status.state == .revoked {
            status.willAutoRenew = false
        } else if let renewal = renewals[current.originalTransactionID] {
            status.willAutoRenew = renewal.willAutoRenew
            if renewal.willAutoRenew == true {
                let next = renewal.autoRenewProductID ?? renewal.productID ?? current.productID
                status.renewsToProductID = next
                status.pendingChange = planChange(from: current.productID, to: next)
            }
        }
        return status
    }

    /// A period ended without a revocation: grace period, billing retry, or expired with the reason.
    private func applyLapse(
        of last: PurchaseRecord, _ renewal: RenewalRecord?, at moment: Date, to status: inout SubscriptionGroupStatus
    ) {
        // Renewal information signed before the last period began describes an earlier lapse: it says nothing of
        // this one's retry state.
        let renewal = renewal.flatMap { renewal in
            (renewal.signedDate.map { $0 >= last.purchaseDate } ?? true) ? renewal : nil
        }
        let expiry = last.expiresDate ?? last.purchaseDate
        if let grace = renewal?.gracePeriodExpiresDate, moment < grace, renewal?.isInBillingRetry ?? false {
            status.state = .inGracePeriod
            status.gracePeriodExpiresDate = grace
        } else if renewal?.isInBillingRetry == true, moment < expiry.addingTimeInterval(policy.billingRetryDuration) {
            status.state = .inBillingRetry
            status.gracePeriodExpiresDate = renewal?.gracePeriodExpiresDate
        } else {
            status.state = .expired
            status.expirationReason =
                renewal?.expirationReason
                ?? (renewal?.isInBillingRetry == true
                    ? .billingError : renewal?.willAutoRenew == false ? .voluntary : .unknown)
        }
    }

    /// Orders active periods: higher service level (a lower level number) first, then the customer's own before a
    /// family-shared one, then the later purchase, then the larger transaction id.
    private func isHigherService(_ a: PurchaseRecord, than b: PurchaseRecord) -> Bool {
        let aLevel = level(of: a.productID) ?? .max
        let bLevel = level(of: b.productID) ?? .max
        if aLevel != bLevel { return aLevel < bLevel }
        if a.ownership != b.ownership { return a.ownership == .purchased }
        if a.purchaseDate != b.purchaseDate { return a.purchaseDate > b.purchaseDate }
        return a.transactionID > b.transactionID
    }

    private func planChange(from current: String, to next: String) -> PlanChange? {
        guard next != current else { return nil }
        guard let from = level(of: current), let to = level(of: next) else { return .otherProduct }
        return to < from ? .upgrade : to > from ? .downgrade : .crossgrade
    }
}
