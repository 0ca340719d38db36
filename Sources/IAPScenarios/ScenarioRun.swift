import Crypto
import Foundation
import IAPCatalog
import IAPCore
import IAPEntitlements
import IAPSignedData
import IAPSimulator

/// The state of one scenario run: labels, what each account saw, the timeline so far.
struct ScenarioRun {
    let scenario: Scenario
    let store: AppStoreSimulator
    let values: ScenarioValues
    let configuration: SimulatorConfiguration
    var entries: [TimelineEntry] = []
    var labels: [String: String] = [:]
    var pendingLabels: [String: String] = [:]
    var notificationsSeen: [String: Int] = [:]
    var checks = 0
    var crossChecksEveryStep = false

    init(scenario: Scenario, store: AppStoreSimulator, values: ScenarioValues, configuration: SimulatorConfiguration) {
        self.scenario = scenario
        self.store = store
        self.values = values
        self.configuration = configuration
    }

    mutating func perform(_ step: ScenarioStep, number: Int) async -> TimelineEntry {
        let eventsBefore = store.events.count
        let notificationsBefore = store.notifications.count
        var failures: [String] = []
        var title = "\(step.action.rawValue) \(step.value)" + (step.account.map { " (\($0))" } ?? "")
        var outcome = StepOutcome.done
        var date = configuration.start
        do {
            date = try store.now
            if let message = try await act(step, number: number, failures: &failures) { title = message }
            if let expected = step.expectError {
                checks += 1
                failures.append("expected the error \(expected), but the step succeeded")
            }
        } catch let error as SimulatorError {
            if let expected = step.expectError {
                checks += 1
                if error.code.rawValue != expected {
                    failures.append("expected the error \(expected), got \(error.code): \(error.reason)")
                }
                title += " → refused as expected (\(error.code))"
                outcome = .refusedAsExpected(error.code)
            } else {
                outcome = .stopped(code: error.code.rawValue, reason: error.reason)
            }
        } catch let error as ScenarioError {
            outcome = .stopped(code: error.code.rawValue, reason: error.reason)
        } catch {
            outcome = .stopped(code: "unknown", reason: "\(error)")
        }
        if case .stopped(let code, let reason) = outcome { failures.append("stopped: \(code): \(reason)") }
        let events = Array(store.events.dropFirst(eventsBefore))
        let notifications = Array(store.notifications.dropFirst(notificationsBefore))
        var touched = events.compactMap(\.accountID) + notifications.compactMap(\.accountID)
        if step.action == .expect { touched.append(step.value) }
        var holdings: [(String, String)] = []
        for account in store.accountIDs where touched.contains(account) {
            holdings.append((account, summary(account)))
            if crossChecksEveryStep, step.action != .expect {
                checks += 1
                failures +=
                    (try? await store.engineDisagreements(account: account)) ?? ["\(account): cross-check failed"]
            }
            for device in (try? store.devices(account: account)) ?? [] {
                _ = try? store.receipt(account: account, device: device)  // re-signed only if it changed
            }
        }
        return TimelineEntry(
            step: number, date: step.action == .advance || step.action == .advanceTo ? (try? store.now) ?? date : date,
            title: title,
            outcome: outcome, events: events, notifications: notifications, holdings: holdings, failures: failures)
    }

    /// Carries out one step; returns a better title when there is one.
    mutating func act(_ step: ScenarioStep, number: Int, failures: inout [String]) async throws -> String? {
        switch step.action {
        case .createAccount:
            try store.createAccount(
                step.value, storefront: step.storefront ?? "USA", appAccountToken: try uuid(step.appAccountToken),
                askToBuy: step.askToBuy ?? false)
            let device = try store.addDevice(account: step.value)
            _ = try store.appTransaction(account: step.value, device: device)
            return nil
        case .addDevice:
            let device = try store.addDevice(account: step.value)
            _ = try store.appTransaction(account: step.value, device: device)
            return nil
        case .joinFamily:
            try store.joinFamily(step.value, account: try required(step.account, "account"))
            return nil
        case .leaveFamily:
            try store.leaveFamily(account: step.value)
            return nil
        case .buy:
            let account = try required(step.account, "account")
            let product = try values.product(step.value)
            var options = PurchaseOptions(
                quantity: step.quantity ?? 1, appAccountToken: try uuid(step.appAccountToken),
                interrupted: step.interrupted ?? false, userCancels: step.cancel ?? false)
            if let offer = step.promotionalOffer {
                options.offer = .promotional(
                    try signPromotionalOffer(offer, step: step, product: product, number: number))
            } else if let offer = step.winBackOffer {
                options.offer = .winBack(offerID: offer)
            }
            switch try store.purchase(product, account: account, options: options) {
            case .purchased(let transaction):
                if let label = step.label { labels[label] = transaction.transactionID }
            case .pending(let pending):
                if let label = step.label { pendingLabels[label] = pending.id }
            case .userCancelled:
                break
            }
            return nil
        case .approve, .decline:
            let id = try pendingID(step.value)
            if step.action == .approve {
                if case .purchased(let transaction) = try store.approve(id), let label = labelOfPending(id) {
                    labels[label] = transaction.transactionID
                }
            } else {
                try store.decline(id)
            }
            return nil
        case .redeemOfferCode:
            let transaction = try store.redeemOfferCode(step.value, account: try required(step.account, "account"))
            if let label = step.label { labels[label] = transaction.transactionID }
            return nil
        case .advance:
            guard let seconds = ScenarioValues.duration(step.value, from: try store.now) else {
                throw ScenarioError(.invalidValue, "advance: '\(step.value)' is not a duration (P1M, P3D, 90s, 2h ...)")
            }
            try store.advance(by: seconds)
            return "time passes: \(step.value), to \(Self.format(try store.now))"
        case .advanceTo:
            guard let date = ScenarioValues.date(step.value) else {
                throw ScenarioError(.invalidValue, "advanceTo: '\(step.value)' is not an ISO 8601 date")
            }
            try store.advance(to: date)
            return "time passes to \(Self.format(try store.now))"
        case .billingIssue, .billingFixed:
            try store.setBillingIssue(account: step.value, failing: step.action == .billingIssue)
            return nil
        case .autoRenewOff, .autoRenewOn:
            try store.setAutoRenew(
                account: step.value, group: try values.group(step.group), enabled: step.action == .autoRenewOn)
            return nil
        case .changePrice:
            let product = try values.product(step.value)
            let price = try required(step.price, "price")
            try store.changePrice(product, to: Decimal(price), requiresConsent: step.requiresConsent ?? true)
            return nil
        case .acceptPriceIncrease:
            try store.consentToPriceIncrease(account: step.value, group: try values.group(step.group))
            return nil
        case .refund:
            try store.refund(try transactionID(step), percentage: milliPercent(step.percentage))
            return nil
        case .requestRefund:
            let reason = step.reason.map { ConsumptionRequestReason(rawValue: $0) } ?? .unintendedPurchase
            try store.requestRefund(try transactionID(step), reason: reason)
            return nil
        case .reportConsumption:
            try store.reportConsumption(
                try transactionID(step), ConsumptionReport(consumptionStatus: step.consumptionStatus ?? 0))
            return nil
        case .grantRefund, .declineRefund:
            try store.decideRefund(
                try transactionID(step), grant: step.action == .grantRefund, percentage: milliPercent(step.percentage))
            return nil
        case .finish:
            if step.value == "all" {
                for transaction in try store.unfinishedTransactions(account: try required(step.account, "account")) {
                    try store.finish(transaction.transactionID)
                }
            } else {
                try store.finish(try transactionID(step))
            }
            return nil
        case .restore:
            let restored = try store.sync(account: step.value)
            return "\(step.value) restores purchases: \(restored.count) transactions come back"
        case .deleteTransaction:
            try store.deleteTransaction(try transactionID(step))
            return nil
        case .clear:
            try store.clearTransactions(account: step.value.isEmpty || step.value == "all" ? nil : step.value)
            return nil
        case .fail:
            guard let operation = SimulatorOperation(rawValue: step.value) else {
                throw ScenarioError(
                    .invalidValue,
                    "fail: '\(step.value)' is not one of \(SimulatorOperation.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            let code = try required(step.error, "error")
            store.injectFailure(operation, code == "none" ? nil : SimulatorError.Code(rawValue: code))
            return code == "none" ? "\(step.value) works again" : "\(step.value) will fail with \(code)"
        case .expect:
            failures += try await check(step)
            return "check \(step.value)"
        case .note:
            return step.value
        }
    }

    // MARK: - Expectations

    mutating func check(_ step: ScenarioStep) async throws -> [String] {
        let account = step.value
        let view = try store.view(account: account)
        var failures: [String] = []
        for name in step.entitled ?? [] {
            checks += 1
            let product = try values.product(name)
            if !view.entitledProductIDs.contains(product) { failures.append("\(account) should have \(name)") }
        }
        for name in step.notEntitled ?? [] {
            checks += 1
            let product = try values.product(name)
            if view.entitledProductIDs.contains(product) { failures.append("\(account) should not have \(name)") }
        }
        for (name, expected) in step.balance ?? [:] {
            checks += 1
            let actual = view.consumablePurchased[try values.product(name)] ?? 0
            if actual != expected { failures.append("\(account) has \(actual) \(name), expected \(expected)") }
        }
        if let expected = step.subscription {
            let group = try values.group(expected.group)
            let actual = view.subscriptions[group]
            func compare(_ what: String, _ want: String?, _ got: String?) {
                guard let want else { return }
                checks += 1
                if want != got {
                    failures.append("\(account)'s subscription \(what) is \(got ?? "none"), expected \(want)")
                }
            }
            compare("state", expected.state, actual?.state.rawValue)
            compare("product", try expected.product.map { try values.product($0) }, actual?.productID)
            compare("auto-renew", expected.autoRenew.map(String.init), actual.map { String($0.willAutoRenew) })
            compare("renewal product", try expected.renewsTo.map { try values.product($0) }, actual?.renewsToProductID)
        }
        if let expected = step.pending {
            checks += 1
            let actual = store.pendingPurchases.filter { $0.accountID == account }.count
            if actual != expected {
                failures.append("\(account) has \(actual) pending purchases, expected \(expected)")
            }
        }
        let mine = store.notifications.filter { $0.accountID == account }
        if let expected = step.notifications {
            checks += 1
            let actual = mine.dropFirst(notificationsSeen[account] ?? 0).map(Self.name)
            if actual != expected { failures.append("\(account)'s notifications were \(actual), expected \(expected)") }
        }
        notificationsSeen[account] = mine.count
        checks += 1
        failures += try await store.engineDisagreements(account: account)
        return failures
    }

    // MARK: - Helpers

    func summary(_ account: String) -> String {
        guard let view = try? store.view(account: account) else { return "?" }
        var parts: [String] = []
        for (group, subscription) in view.subscriptions.sorted(by: { $0.key < $1.key }) {
            let name = store.catalog.group(group)?.name ?? group
            var text = "\(name) \(values.short(subscription.productID)) \(subscription.state.rawValue)"
            switch subscription.state {
            case .subscribed:
                text +=
                    subscription.willAutoRenew
                    ? ", renews \(Self.format(subscription.expiresDate))"
                    : ", ends \(Self.format(subscription.expiresDate))"
                if let next = subscription.renewsToProductID, next != subscription.productID {
                    text += " as \(values.short(next))"
                }
            case .inGracePeriod:
                text += " until \(Self.format(subscription.gracePeriodExpiresDate ?? subscription.expiresDate))"
            case .inBillingRetry, .expired, .revoked: break
            }
            if subscription.isFamilyShared { text += " (family)" }
            parts.append(text)
        }
        let owned = view.entitledProductIDs.filter { id in !view.subscriptions.values.contains { $0.productID == id } }
        parts += owned.sorted().map(values.short)
        parts += view.consumablePurchased.sorted(by: { $0.key < $1.key }).filter { $0.value > 0 }.map {
            "\(values.short($0.key)) ×\($0.value)"
        }
        return parts.isEmpty ? "nothing" : parts.joined(separator: "; ")
    }

    func required<T>(_ value: T?, _ key: String) throws(ScenarioError) -> T {
        guard let value else { throw ScenarioError(.missingValue, "this step needs '\(key)'") }
        return value
    }

    func uuid(_ text: String?) throws(ScenarioError) -> UUID? {
        guard let text else { return nil }
        guard let id = UUID(uuidString: text) else { throw ScenarioError(.invalidValue, "'\(text)' is not a UUID") }
        return id
    }

    func milliPercent(_ percent: Double?) -> Int? { percent.map { Int(($0 * 1000).rounded()) } }

    /// A transaction by label, or the account's latest purchase of a product.
    func transactionID(_ step: ScenarioStep) throws -> String {
        if let id = labels[step.value] { return id }
        let account = try required(step.account, "account (or a label)")
        let product = try values.product(step.value)
        guard
            let latest = try store.transactions(account: account).last(where: {
                $0.payload.productID == product && $0.payload.inAppOwnershipType == .purchased
            })
        else { throw ScenarioError(.unknownName, "\(account) has no transaction for \(step.value)") }
        return latest.transactionID
    }

    /// A pending purchase by label, or the account's oldest.
    func pendingID(_ value: String) throws(ScenarioError) -> String {
        if let id = pendingLabels[value] { return id }
        guard let pending = store.pendingPurchases.first(where: { $0.accountID == value }) else {
            throw ScenarioError(.unknownName, "nothing is pending for '\(value)'")
        }
        return pending.id
    }

    func labelOfPending(_ id: String) -> String? { pendingLabels.first { $0.value == id }?.key }

    func signPromotionalOffer(_ offer: String, step: ScenarioStep, product: String, number: Int) throws
        -> PromotionalOffer
    {
        let keyID = try required(step.keyID, "keyID")
        guard let pem = scenario.promotionalOfferKeys?[keyID],
            let key = try? P256.Signing.PrivateKey(pemRepresentation: pem)
        else { throw ScenarioError(.unknownName, "no promotional-offer key '\(keyID)' in the scenario") }
        let nonce = UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", number))!
        return try PromotionalOffer.sign(
            key: key, bundleID: configuration.bundleID, keyID: keyID, productID: product, offerID: offer,
            appAccountToken: try uuid(step.appAccountToken), nonce: nonce,
            timestamp: try store.now.millisecondsSince1970)
    }

    static func name(_ notification: SimulatorNotification) -> String {
        notification.type.rawValue + (notification.subtype.map { "/\($0.rawValue)" } ?? "")
    }

    static func format(_ date: Date) -> String { DateText.utc(date) }
}

extension ScenarioReport {
    /// The run as text a newcomer can follow: each step, what happened, the notifications Apple would send, and what
    /// each account has afterwards.
    public func timelineText() -> String {
        var lines: [String] = []
        let configuration = simulator.configuration
        let values = ScenarioValues(catalog: simulator.catalog)
        lines.append("\(scenario.name)")
        if let description = scenario.description { lines.append(description) }
        lines.append(
            "App \(configuration.bundleID), \(configuration.environment.rawValue), time rate \(configuration.timeRate.name), "
                + "from \(ScenarioRun.format(configuration.start)) UTC")
        lines.append("")
        for entry in entries {
            lines.append(String(format: "%3d  ", entry.step) + "\(ScenarioRun.format(entry.date))  \(entry.title)")
            for event in entry.events where event.kind != .deviceAdded || entry.title.contains("Device") {
                let time = event.date == entry.date ? "" : "\(ScenarioRun.format(event.date))  "
                lines.append("       \(time)\(values.shorten(event.summary))")
            }
            for notification in entry.notifications {
                lines.append(
                    "       → notification \(ScenarioRun.name(notification))"
                        + (notification.accountID.map { " (\($0))" } ?? ""))
            }
            for (account, summary) in entry.holdings { lines.append("       \(account) has: \(summary)") }
            for failure in entry.failures { lines.append("       ✗ \(failure)") }
        }
        lines.append("")
        let statistics = simulator.statistics
        lines.append(
            "\(statistics.events) events, \(statistics.transactions) transactions, \(statistics.notifications) notifications, "
                + "\(statistics.signatures) signatures (\(statistics.receiptSignatures) receipts)")
        let failures = failures
        lines.append(
            failures.isEmpty
                ? "All \(checks) expectations met."
                : "\(failures.count) of \(checks) expectations FAILED:\n"
                    + failures.map { "  \($0)" }.joined(separator: "\n"))
        return lines.joined(separator: "\n") + "\n"
    }
}
