import Foundation
import IAPCatalog
import IAPCore
import IAPSignedData

extension SimulatorCore {
    // MARK: - Subscribing

    /// Buys an auto-renewable subscription: a new or resumed subscription, an immediate upgrade, or a downgrade or
    /// crossgrade scheduled for the next renewal. Returns the transaction the purchase answers with.
    mutating func subscribe(
        _ productID: String, account: String, options: PurchaseOptions, offer forcedOffer: AppliedOffer? = nil
    ) throws(SimulatorError) -> UInt64 {
        guard let info = catalog.product(productID)?.subscription else {
            throw SimulatorError(.productUnavailable, "\(productID) is not an auto-renewable subscription")
        }
        var chosen = forcedOffer
        if chosen == nil {
            chosen = try resolveOffer(options.offer, productID: productID, account: account, options: options)
        }
        if let number = lineNumber(account: account, group: info.groupID), lines[number].isActive {
            return try change(line: number, to: productID, offer: chosen)
        }
        var offer = chosen
        let (introductory, eligibilityNonce) = try introductoryOfferApplies(
            account: account, productID: productID, options: options)
        if offer == nil, let intro = info.introductoryOffer, introductory {
            offer = AppliedOffer(type: .introductory, id: nil, offer: intro)
        }
        for nonce in [chosen?.nonce, eligibilityNonce].compactMap({ $0 }) { spentOfferNonces.insert(nonce) }
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
    mutating func change(line number: Int, to productID: String, offer: AppliedOffer?) throws(SimulatorError) -> UInt64
    {
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
    mutating func advance(to target: Date) throws(SimulatorError) {
        guard target >= now else {
            throw SimulatorError(
                .timeGoesForward, "the clock cannot go back from \(Self.format(now)) to \(Self.format(target))")
        }
        guard target <= SimulatorConfiguration.latestDate else {
            throw SimulatorError(
                .invalidArgument, "the clock stops at \(Self.format(SimulatorConfiguration.latestDate))")
        }
        var ran = 0
        while let next = queue.first, next.date <= target {
            guard ran < configuration.maximumEventsPerAdvance else {
                throw SimulatorError(
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
            expiresDate: expires, reason: .renewal, offer: offer,
            appAccountToken: transactions[line.latestTransactionID]?.appAccountToken)
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
    mutating func setBillingIssue(account id: String, failing: Bool) throws(SimulatorError) {
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

    mutating func setAutoRenew(account: String, group: String, enabled: Bool) throws(SimulatorError) {
        _ = try self.account(account)
        guard let number = lineNumber(account: account, group: group) else {
            throw SimulatorError(.invalidState, "\(account) has no subscription in group '\(group)'")
        }
        let line = lines[number]
        guard line.isActive || line.isInBillingRetry else {
            throw SimulatorError(.invalidState, "\(account)'s subscription in '\(group)' is not running")
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
    mutating func changePrice(_ productID: String, to price: Decimal, requiresConsent: Bool) throws(SimulatorError) {
        let (_, kind) = try product(productID)
        guard price >= 0 else { throw SimulatorError(.invalidArgument, "a price cannot be negative") }
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

    mutating func consentToPriceIncrease(account: String, group: String) throws(SimulatorError) {
        guard let number = lineNumber(account: account, group: group), lines[number].priceIncrease == .notResponded
        else { throw SimulatorError(.invalidState, "\(account) has no price increase to accept in '\(group)'") }
        lines[number].priceIncrease = .consented
        let line = lines[number]
        log(
            .priceIncreaseConsented, account: account, product: line.productID,
            "\(account) accepts the new price of \(line.autoRenewProductID)")
        notify(.priceIncrease, .accepted, transaction: lines[number].latestTransactionID, line: number)
    }

    // MARK: - Wording

    /// A moment as the timeline writes it: `2026-03-09 09:00` (UTC), seconds only when there are some.
    static func format(_ date: Date) -> String { DateText.utc(date) }

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
