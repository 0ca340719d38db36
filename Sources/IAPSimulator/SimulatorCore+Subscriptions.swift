import Foundation
import IAPCatalog
import IAPSignedData

extension SimulatorCore {
    // MARK: - Subscribing

    /// Buys an auto-renewable subscription: a new or resumed subscription, an immediate upgrade, or a downgrade or
    /// crossgrade scheduled for the next renewal. Returns the transaction the purchase answers with.
    mutating func subscribe(
        _ productID: String, account: String, options: PurchaseOptions, offer forcedOffer: AppliedOffer? = nil
    ) throws(StoreError) -> UInt64 {
        guard let info = catalog.product(productID)?.subscription else {
            throw StoreError(.productUnavailable, "\(productID) is not an auto-renewable subscription")
        }
        var chosen = forcedOffer
        if chosen == nil {
            chosen = try resolveOffer(options.offer, productID: productID, account: account, options: options)
        }
        if let number = lineNumber(account: account, group: info.groupID), lines[number].isActive {
            return try change(line: number, to: productID, offer: chosen)
        }
        var offer = chosen
        if offer == nil, let intro = info.introductoryOffer,
            isEligibleForIntroductoryOffer(account: account, productID: productID)
        {
            offer = AppliedOffer(type: .introductory, id: nil, offer: intro)
        }
        let existing = lineNumber(account: account, group: info.groupID)
        let (expires, remaining) = periodEnd(from: now, productID: productID, offer: offer)
        let id = issue(
            account: account, productID: productID, kind: .autoRenewable, purchaseDate: now,
            originalID: existing.map { lines[$0].originalID },
            originalPurchaseDate: existing.flatMap { transactions[lines[$0].originalID]?.purchaseDate },
            expiresDate: expires, offer: offer, appAccountToken: options.appAccountToken)
        let number: Int
        if let existing {
            number = existing
        } else {
            number = lines.count
            lines.append(
                SubscriptionLine(
                    accountID: account, groupID: info.groupID, originalID: id, productID: productID,
                    autoRenewProductID: productID, latestTransactionID: id, expiresDate: expires, recentStart: now))
            lineIndex[account, default: [:]][info.groupID] = number
        }
        lines[number].begin(productID, transaction: id, at: now, expires: expires, offer: offer, remaining: remaining)
        reschedule(number)
        let subtype: NotificationSubtype = existing == nil ? .initialBuy : .resubscribe
        let redeemed = offer.map { $0.type != .introductory } ?? false
        log(
            redeemed ? .offerRedeemed : .purchased, account: account, product: productID, transaction: id,
            "\(account) \(existing == nil ? "subscribes to" : "resubscribes to") \(productID)"
                + (offer.map { " with the \(Self.describe($0)) offer" } ?? "")
                + ", until \(Self.format(expires))")
        notify(redeemed ? .offerRedeemed : .subscribed, subtype, transaction: id, line: number)
        shareWithFamily(id)
        return id
    }

    /// A purchase in a group the account is already subscribed to.
    mutating func change(line number: Int, to productID: String, offer: AppliedOffer?) throws(StoreError) -> UInt64 {
        let line = lines[number]
        let account = line.accountID
        if productID == line.productID {
            if !line.autoRenew {
                try setAutoRenew(account: account, group: line.groupID, enabled: true)
            } else if line.autoRenewProductID != productID {
                lines[number].autoRenewProductID = productID
                log(
                    .changeCancelled, account: account, product: productID,
                    "\(account) keeps \(productID): the pending change to \(line.autoRenewProductID) is cancelled")
                notify(.didChangeRenewalPref, nil, transaction: line.latestTransactionID, line: number)
            }
            return line.latestTransactionID
        }
        let newLevel = level(of: productID)
        let oldLevel = level(of: line.productID)
        if newLevel < oldLevel {
            change(line.latestTransactionID) { $0.isUpgraded = true }
            let (expires, remaining) = periodEnd(from: now, productID: productID, offer: offer)
            let id = issue(
                account: account, productID: productID, kind: .autoRenewable, purchaseDate: now,
                originalID: line.originalID, originalPurchaseDate: transactions[line.originalID]?.purchaseDate,
                expiresDate: expires, offer: offer)
            lines[number].begin(
                productID, transaction: id, at: now, expires: expires, offer: offer, remaining: remaining)
            reschedule(number)
            log(
                .upgraded, account: account, product: productID, transaction: id,
                "\(account) upgrades from \(line.productID) to \(productID) at once, until \(Self.format(expires))")
            notify(
                offer.map { $0.type != .introductory } == true ? .offerRedeemed : .didChangeRenewalPref, .upgrade,
                transaction: id, line: number)
            shareWithFamily(id, upgrade: true)
            return id
        }
        lines[number].autoRenewProductID = productID
        lines[number].autoRenew = true
        let isDowngrade = newLevel > oldLevel
        log(
            isDowngrade ? .downgradeScheduled : .crossgradeScheduled, account: account, product: productID,
            "\(account) switches from \(line.productID) to \(productID) at the next renewal "
                + "(\(isDowngrade ? "downgrade" : "crossgrade"), \(Self.format(line.expiresDate)))")
        notify(.didChangeRenewalPref, .downgrade, transaction: line.latestTransactionID, line: number)
        return line.latestTransactionID
    }

    /// The end of a period starting at `start`, and how many more periods the offer lasts after this one.
    func periodEnd(from start: Date, productID: String, offer: AppliedOffer?) -> (Date, Int) {
        let rate = configuration.timeRate
        guard let offer else { return (rate.advance(start, by: period(of: productID)), 0) }
        switch offer.offer.paymentMode {
        case .freeTrial, .payUpFront:
            return (rate.advance(start, by: offer.offer.period, count: max(1, offer.offer.numberOfPeriods)), 0)
        case .payAsYouGo:
            return (rate.advance(start, by: offer.offer.period), max(0, offer.offer.numberOfPeriods - 1))
        }
    }

    // MARK: - The clock

    mutating func reschedule(_ number: Int) {
        lines[number].version += 1
        if let due = lines[number].nextDueDate, lineIndex[lines[number].accountID]?[lines[number].groupID] == number {
            queue.push(date: due, line: number, version: lines[number].version)
        }
    }

    /// Moves the clock to `target`, running every renewal, failure, grace expiry and expiry due before it, in order.
    mutating func advance(to target: Date) throws(StoreError) {
        guard target >= now else {
            throw StoreError(
                .timeGoesForward, "the clock cannot go back from \(Self.format(now)) to \(Self.format(target))")
        }
        guard target <= SimulatorConfiguration.latestDate else {
            throw StoreError(.invalidArgument, "the clock stops at \(Self.format(SimulatorConfiguration.latestDate))")
        }
        var ran = 0
        while let next = queue.first, next.date <= target {
            guard ran < configuration.maximumEventsPerAdvance else {
                throw StoreError(
                    .invalidArgument,
                    "more than \(configuration.maximumEventsPerAdvance) renewals, retries and expiries in one move; "
                        + "the clock stopped at \(Self.format(now))")
            }
            ran += 1
            _ = queue.pop()
            guard lines.indices.contains(next.line), lines[next.line].version == next.version else { continue }
            now = max(now, next.date)
            runDue(next.line)
        }
        now = target
    }

    /// What happens when a line comes due.
    mutating func runDue(_ number: Int) {
        let line = lines[number]
        switch line.status {
        case .active:
            if !line.autoRenew {
                expire(number, intent: .customerCancelled, subtype: .voluntary, "auto-renew was off")
            } else if line.priceIncrease == .notResponded {
                expire(
                    number, intent: .priceIncreaseDeclined, subtype: .priceIncrease,
                    "the price increase was not accepted")
            } else if accounts[line.accountID]?.billingFails == true {
                failRenewal(number)
            } else {
                renew(number, from: line.expiresDate, subtype: nil)
            }
        case .billingRetry(let graceEnd, let retryEnd, let notified):
            if let graceEnd, !notified, graceEnd <= now {
                lines[number].status = .billingRetry(graceEnd: graceEnd, retryEnd: retryEnd, graceExpiredNotified: true)
                reschedule(number)
                log(
                    .gracePeriodExpired, account: line.accountID, product: line.productID,
                    "\(line.accountID)'s grace period for \(line.productID) ends; access stops while Apple retries")
                notify(.gracePeriodExpired, nil, transaction: line.latestTransactionID, line: number)
            } else {
                expire(number, intent: .billingError, subtype: .billingRetry, "billing retry gave up")
            }
        case .expired, .revoked:
            break
        }
    }

    /// Starts the next period at `start` with the product the line renews to.
    mutating func renew(_ number: Int, from start: Date, subtype: NotificationSubtype?) {
        let line = lines[number]
        let productID = line.autoRenewProductID
        let offer = line.offerPeriodsRemaining > 0 ? line.offer : nil
        let (expires, _) = periodEnd(from: start, productID: productID, offer: offer)
        let id = issue(
            account: line.accountID, productID: productID, kind: .autoRenewable, purchaseDate: start,
            originalID: line.originalID, originalPurchaseDate: transactions[line.originalID]?.purchaseDate,
            expiresDate: expires, reason: .renewal, offer: offer)
        lines[number].productID = productID
        lines[number].latestTransactionID = id
        lines[number].expiresDate = expires
        lines[number].status = .active
        if line.priceIncrease != nil { lines[number].priceIncrease = nil }
        if offer != nil { lines[number].offerPeriodsRemaining -= 1 }
        if lines[number].offerPeriodsRemaining == 0 { lines[number].offer = nil }
        reschedule(number)
        log(
            subtype == .billingRecovery ? .billingRecovered : .renewed, account: line.accountID, product: productID,
            transaction: id,
            "\(line.accountID)'s \(productID) \(subtype == .billingRecovery ? "recovers" : "renews") until \(Self.format(expires))"
                + (productID != line.productID ? " (was \(line.productID))" : ""))
        notify(.didRenew, subtype, transaction: id, line: number)
        for member in familyMembers(of: line.accountID) where lines[number].sharedOriginals[member] != nil {
            share(id, with: member)
        }
    }

    mutating func failRenewal(_ number: Int) {
        let line = lines[number]
        let period = period(of: line.autoRenewProductID)
        let rate = configuration.timeRate
        let graceEnd = graceEnabled ? line.expiresDate + rate.gracePeriod(for: period) : nil
        lines[number].status = .billingRetry(
            graceEnd: graceEnd, retryEnd: line.expiresDate + rate.billingRetryDuration(for: period),
            graceExpiredNotified: false)
        reschedule(number)
        log(
            .billingFailed, account: line.accountID, product: line.productID,
            "\(line.accountID)'s \(line.productID) fails to renew; Apple retries"
                + (graceEnd.map { ", access continues until \(Self.format($0))" } ?? ""))
        notify(
            .didFailToRenew, graceEnd == nil ? nil : .gracePeriod, transaction: line.latestTransactionID, line: number)
    }

    mutating func expire(_ number: Int, intent: ExpirationIntent, subtype: NotificationSubtype, _ why: String) {
        let line = lines[number]
        lines[number].status = .expired(intent)
        lines[number].autoRenew = false
        reschedule(number)
        log(
            .expired, account: line.accountID, product: line.productID, transaction: line.latestTransactionID,
            "\(line.accountID)'s \(line.productID) expires: \(why)")
        notify(.expired, subtype, transaction: line.latestTransactionID, line: number)
    }

    // MARK: - Billing

    /// Makes renewals fail (a card expired) or succeed again; clearing it recovers every subscription in billing
    /// retry at once: one still in its grace period keeps its renewal date, a later one starts a new period now.
    mutating func setBillingIssue(account id: String, failing: Bool) throws(StoreError) {
        var account = try account(id)
        guard account.billingFails != failing else { return }
        account.billingFails = failing
        accounts[id] = account
        log(
            failing ? .billingIssue : .billingResolved, account: id,
            failing ? "\(id)'s payment method stops working" : "\(id) fixes the payment method")
        guard !failing else { return }
        for number in (lineIndex[id] ?? [:]).values.sorted() {
            guard case .billingRetry(let graceEnd, _, _) = lines[number].status else { continue }
            if let graceEnd, now < graceEnd {
                renew(number, from: lines[number].expiresDate, subtype: .billingRecovery)
            } else {
                lines[number].recentStart = now
                renew(number, from: now, subtype: .billingRecovery)
            }
        }
    }

    mutating func setAutoRenew(account: String, group: String, enabled: Bool) throws(StoreError) {
        _ = try self.account(account)
        guard let number = lineNumber(account: account, group: group) else {
            throw StoreError(.invalidState, "\(account) has no subscription in group '\(group)'")
        }
        let line = lines[number]
        guard line.isActive || line.isInBillingRetry else {
            throw StoreError(.invalidState, "\(account)'s subscription in '\(group)' is not running")
        }
        guard line.autoRenew != enabled else { return }
        lines[number].autoRenew = enabled
        log(
            enabled ? .autoRenewEnabled : .autoRenewDisabled, account: account, product: line.productID,
            "\(account) turns auto-renew \(enabled ? "on" : "off") for \(line.productID)")
        notify(
            .didChangeRenewalStatus, enabled ? .autoRenewEnabled : .autoRenewDisabled,
            transaction: line.latestTransactionID, line: number)
        if !enabled, line.isInBillingRetry {
            expire(number, intent: .customerCancelled, subtype: .voluntary, "cancelled during billing retry")
        }
    }

    // MARK: - Prices

    /// Changes a product's price. Subscribers renewing to it are told: with `requiresConsent` they must accept before
    /// their next renewal or the subscription expires; without, the increase is accepted for them.
    mutating func changePrice(_ productID: String, to price: Decimal, requiresConsent: Bool) throws(StoreError) {
        let (_, kind) = try product(productID)
        guard price >= 0 else { throw StoreError(.invalidArgument, "a price cannot be negative") }
        let old = prices[productID] ?? 0
        prices[productID] = price
        log(
            .priceIncreased, account: nil, product: productID,
            "the price of \(productID) changes from \(old) to \(price)")
        guard kind == .autoRenewable, price > old else { return }
        for number in lines.indices where lines[number].isActive && lines[number].autoRenewProductID == productID {
            guard lineIndex[lines[number].accountID]?[lines[number].groupID] == number else { continue }
            lines[number].priceIncrease = requiresConsent ? .notResponded : .consented
            notify(
                .priceIncrease, requiresConsent ? .pending : .accepted, transaction: lines[number].latestTransactionID,
                line: number)
        }
    }

    mutating func consentToPriceIncrease(account: String, group: String) throws(StoreError) {
        guard let number = lineNumber(account: account, group: group), lines[number].priceIncrease == .notResponded
        else { throw StoreError(.invalidState, "\(account) has no price increase to accept in '\(group)'") }
        lines[number].priceIncrease = .consented
        let line = lines[number]
        log(
            .priceIncreaseConsented, account: account, product: line.productID,
            "\(account) accepts the new price of \(line.autoRenewProductID)")
        notify(.priceIncrease, .accepted, transaction: lines[number].latestTransactionID, line: number)
    }

    // MARK: - Refunds and revocations

    /// Refunds a transaction in full or in part (`percentage` in milli-percent, 100000 = all) as Apple does after a
    /// customer's request: the transaction is revoked, a subscription's current period ends, family copies go too.
    mutating func refund(_ id: String, percentage: Int?, reason: RevocationReason) throws(StoreError) {
        let t = try transaction(id)
        guard t.ownership == .purchased else {
            throw StoreError(.invalidState, "transaction \(id) is family-shared; refund the purchaser's")
        }
        guard t.revocation == nil else { throw StoreError(.invalidState, "transaction \(id) is already revoked") }
        if let percentage, !(1...100_000).contains(percentage) {
            throw StoreError(.invalidArgument, "a prorated refund's percentage is 1...100000 (milli-percent)")
        }
        let prorated = percentage.map { $0 < 100_000 } ?? false
        let revocation = StoreRevocation(
            date: now, reason: reason, type: prorated ? .refundProrated : .refundFull,
            percentage: prorated ? percentage : nil)
        change(t.id) {
            $0.revocation = revocation
        }
        var line: Int?
        if let group = t.groupID, let number = lineNumber(account: t.accountID, group: group),
            lines[number].latestTransactionID == t.id
        {
            line = number
            lines[number].status = .revoked
            lines[number].autoRenew = false
            reschedule(number)
        }
        refundRequests[t.id] = nil
        log(
            .refunded, account: t.accountID, product: t.productID, transaction: t.id,
            "Apple refunds \(prorated ? "part of " : "")\(t.productID) (transaction \(t.id)) to \(t.accountID)")
        notify(.refund, nil, transaction: t.id, line: line)
        for copy in sharedCopies(of: t.id) where transactions[copy]?.revocation == nil {
            revokeCopy(copy, reason: reason)
        }
    }

    /// Apple reverses a refund it granted (after a dispute with the customer's bank, say): the transaction is no
    /// longer revoked, a subscription period that has not ended grants again (auto-renew stays off, as the refund
    /// left it), and the family copies the refund revoked come back. The developer gets REFUND_REVERSED.
    mutating func reverseRefund(_ id: String) throws(StoreError) {
        let t = try transaction(id)
        guard let revocation = t.revocation, revocation.type == .refundFull || revocation.type == .refundProrated
        else {
            throw StoreError(.invalidState, "transaction \(id) has no refund to reverse")
        }
        change(t.id) { $0.revocation = nil }
        var line: Int?
        if let group = t.groupID, let number = lineNumber(account: t.accountID, group: group),
            lines[number].latestTransactionID == t.id, case .revoked = lines[number].status
        {
            line = number
            lines[number].status = lines[number].expiresDate > now ? .active : .expired(.customerCancelled)
            reschedule(number)
        }
        log(
            .refundReversed, account: t.accountID, product: t.productID, transaction: t.id,
            "Apple reverses the refund of \(t.productID) (transaction \(t.id)); \(t.accountID) has it again")
        notify(.refundReversed, nil, transaction: t.id, line: line)
        for copy in sharedCopies(of: t.id) {
            guard let shared = transactions[copy], shared.revocation?.type == .familyRevoke,
                shared.revocation?.date == revocation.date
            else { continue }
            change(copy) { $0.revocation = nil }
            notify(.refundReversed, nil, transaction: copy, line: nil)
        }
    }

    /// A customer asks Apple for a refund: Apple asks the developer for consumption information (CONSUMPTION_REQUEST)
    /// and waits for ``decideRefund(_:grant:percentage:)``.
    mutating func requestRefund(_ id: String, reason: ConsumptionRequestReason) throws(StoreError) {
        try checkInjectedFailure(.refundRequest)
        let t = try transaction(id)
        guard t.ownership == .purchased, t.revocation == nil, refundRequests[t.id] == nil else {
            throw StoreError(.invalidState, "transaction \(id) cannot be refunded now")
        }
        refundRequests[t.id] = RefundRequest(transactionID: t.id, reason: reason)
        log(
            .refundRequested, account: t.accountID, product: t.productID, transaction: t.id,
            "\(t.accountID) asks Apple to refund \(t.productID) (\(reason.rawValue)); Apple asks the developer about consumption"
        )
        notify(.consumptionRequest, nil, transaction: t.id, line: nil, consumptionReason: reason)
    }

    mutating func reportConsumption(_ id: String, _ report: ConsumptionReport) throws(StoreError) {
        let t = try transaction(id)
        guard refundRequests[t.id] != nil else {
            throw StoreError(.invalidState, "no refund request for transaction \(id) awaits consumption information")
        }
        if let field = report.invalidField() {
            throw StoreError(.invalidArgument, "consumption information: '\(field)' is out of range")
        }
        refundRequests[t.id]!.report = report
        log(
            .consumptionReported, account: t.accountID, product: t.productID, transaction: t.id,
            "the developer reports consumption status \(report.consumptionStatus) for transaction \(t.id)")
    }

    mutating func decideRefund(_ id: String, grant: Bool, percentage: Int?) throws(StoreError) {
        let t = try transaction(id)
        guard refundRequests[t.id] != nil else {
            throw StoreError(.invalidState, "no refund request for transaction \(id)")
        }
        if grant {
            try refund(id, percentage: percentage, reason: .other)
        } else {
            refundRequests[t.id] = nil
            log(
                .refundDeclined, account: t.accountID, product: t.productID, transaction: t.id,
                "Apple declines the refund of \(t.productID)")
            notify(.refundDeclined, nil, transaction: t.id, line: nil)
        }
    }

    // MARK: - Wording

    /// A moment as the timeline writes it: `2026-03-09 09:00` (UTC), seconds only when there are some.
    static func format(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let base = String(format: "%04d-%02d-%02d %02d:%02d", c.year!, c.month!, c.day!, c.hour!, c.minute!)
        return c.second == 0 ? base : base + String(format: ":%02d", c.second!)
    }

    static func describe(_ offer: AppliedOffer) -> String {
        let kind =
            switch offer.type {
            case .introductory: "introductory"
            case .promotional: "promotional"
            case .offerCode: "offer-code"
            case .winBack: "win-back"
            default: "other"
            }
        return offer.id.map { "\(kind) '\($0)'" } ?? kind
    }
}
