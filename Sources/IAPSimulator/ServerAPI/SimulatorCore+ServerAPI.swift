import Foundation
import IAPCatalog
import IAPCore
import IAPEntitlements
import IAPSignedData

/// What the App Store Server API was asked and keeps.
struct ServerAPIRecords: Codable {
    /// Renewal extensions by original transaction id and request identifier: asking again answers the same.
    var extensions: [String: RenewalExtensionResult] = [:]
    /// Mass extensions by product id and request identifier.
    var massExtensions: [String: MassRenewalExtensionStatus] = [:]
    /// Test notifications: token -> notification UUID.
    var testNotifications: [String: String] = [:]
    /// Every delivery attempt of a notification, by its UUID.
    var sendAttempts: [String: [NotificationSendAttempt]] = [:]
    /// Accounts by their app transaction id (a look-up by any id must not scan every account).
    var appTransactionAccounts: [String: String] = [:]
}

extension SimulatorCore {
    // MARK: - Looking customers up

    /// The account a transaction id, an original transaction id or an app transaction id belongs to (the API's
    /// "anyTransactionId").
    func account(anyTransactionID id: String) throws(SimulatorError) -> String {
        guard !id.isEmpty, id.utf8.count <= 32, id.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            throw SimulatorError(.invalidArgument, "'\(id)' is not a transaction id", appStoreErrorCode: 4_000_006)
        }
        if let number = UInt64(id), let transaction = transactions[number] { return transaction.accountID }
        if let account = serverAPI.appTransactionAccounts[id] { return account }
        throw SimulatorError(.unknownTransaction, "no transaction '\(id)'", appStoreErrorCode: 4_040_010)
    }

    /// A transaction id that must name a transaction (not an app transaction).
    func transaction(apiID id: String) throws(SimulatorError) -> TransactionState {
        let account = try account(anyTransactionID: id)
        guard let number = UInt64(id), let transaction = transactions[number] else {
            throw SimulatorError(
                .invalidArgument, "\(id) is \(account)'s app transaction id, not a transaction's",
                appStoreErrorCode: 4_000_048)
        }
        return transaction
    }

    /// One transaction by any of the customer's transaction ids, signed (an app transaction id is refused).
    mutating func transactionInfo(_ id: String) throws(SimulatorError) -> SimulatorTransaction {
        try signedTransaction(try transaction(apiID: id).id)
    }

    /// Every transaction of the customer, signed, in issue order; finished consumables only when asked (the v1
    /// history leaves them out, the v2 history has them).
    mutating func history(anyTransactionID id: String, includeFinishedConsumables: Bool) throws(SimulatorError)
        -> [SimulatorTransaction]
    {
        let account = try account(anyTransactionID: id)
        var result: [SimulatorTransaction] = []
        for number in accounts[account]?.transactionIDs ?? [] {
            guard let t = transactions[number], includeFinishedConsumables || !(t.kind == .consumable && t.finished)
            else { continue }
            result.append(try signedTransaction(number))
        }
        return result
    }

    // MARK: - Subscription statuses

    /// Every subscription the customer sees, own and family-shared, with its status, latest transaction and renewal
    /// info, in group order.
    mutating func subscriptionStatuses(anyTransactionID id: String) throws(SimulatorError) -> [(
        groupID: String, item: AppStoreServerAPI.LastTransactionsItem
    )] {
        try checkInjectedFailure(.subscriptionStatus)
        let account = try account(anyTransactionID: id)
        var result: [(groupID: String, item: AppStoreServerAPI.LastTransactionsItem)] = []
        for visible in visibleLines(account: account) {
            let line = lines[visible.line]
            guard
                let latest = accounts[account]?.transactionIDs.last(where: {
                    transactions[$0]?.originalID == visible.originalID
                })
            else { continue }
            result.append(
                (
                    line.groupID,
                    AppStoreServerAPI.LastTransactionsItem(
                        status: Self.status(line, at: now).appStoreStatus,
                        originalTransactionId: String(visible.originalID),
                        signedTransactionInfo: try signedTransaction(latest).jws,
                        signedRenewalInfo: try signedRenewalInfo(line: visible.line, forAccount: account))
                ))
        }
        return result
    }

    // MARK: - Refunds and orders

    /// The customer's refunded transactions (full or prorated refunds, not family revocations), oldest refund first.
    mutating func refundedTransactions(anyTransactionID id: String) throws(SimulatorError) -> [SimulatorTransaction] {
        let account = try account(anyTransactionID: id)
        let refunded = (accounts[account]?.transactionIDs ?? []).compactMap { number -> (Date, UInt64)? in
            guard let revocation = transactions[number]?.revocation,
                revocation.type == .refundFull || revocation.type == .refundProrated
            else { return nil }
            return (revocation.date, number)
        }
        var result: [SimulatorTransaction] = []
        for (_, number) in refunded.sorted(by: { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }) {
            result.append(try signedTransaction(number))
        }
        return result
    }

    /// The order id on the customer's emailed receipt: one per purchase or renewal the customer paid for (the
    /// simulator puts one transaction in each order), none for a family-shared copy.
    static func orderID(of transaction: TransactionState) -> String? {
        transaction.ownership == .purchased ? "M" + String(transaction.id, radix: 36).uppercased() : nil
    }

    /// The transactions of an order, or nil when no order has that id.
    mutating func order(_ orderID: String) throws(SimulatorError) -> [SimulatorTransaction]? {
        guard orderID.hasPrefix("M"), orderID.count <= 16, let number = UInt64(orderID.dropFirst(), radix: 36),
            orderID == orderID.uppercased(), let transaction = transactions[number],
            Self.orderID(of: transaction) == orderID
        else { return nil }
        return [try signedTransaction(number)]
    }

    // MARK: - Renewal date extensions

    /// Extends one subscription's renewal date (the API's "extend a subscription renewal date"): the current period
    /// ends `extendByDays` later (scaled by the time rate), the latest transaction and renewal info say so, and the
    /// developer gets RENEWAL_EXTENDED. The same request identifier again answers the same without extending twice.
    mutating func extendRenewalDate(
        originalTransactionID id: String, _ request: AppStoreServerAPI.ExtendRenewalDateRequest
    )
        throws(SimulatorError) -> RenewalExtensionResult
    {
        try Self.check(request)
        let t: TransactionState
        do { t = try transaction(apiID: id) } catch {
            throw SimulatorError(
                .unknownTransaction, "no original transaction '\(id)'",
                appStoreErrorCode: error.appStoreErrorCode == 4_000_006 ? 4_000_008 : 4_040_005)
        }
        let key = "\(t.id)/\(request.requestIdentifier)"
        if let earlier = serverAPI.extensions[key] { return earlier }
        guard t.originalID == t.id else {
            throw SimulatorError(
                .invalidArgument, "\(id) is not an original transaction id", appStoreErrorCode: 4_040_005)
        }
        guard t.ownership == .purchased else {
            throw SimulatorError(
                .invalidState, "a family-shared subscription cannot be extended", appStoreErrorCode: 4_030_007)
        }
        guard t.kind == .autoRenewable, let group = t.groupID,
            let number = lineNumber(account: t.accountID, group: group),
            lines[number].originalID == t.id
        else {
            throw SimulatorError(
                .invalidState, "\(id) is not an auto-renewable subscription", appStoreErrorCode: 4_030_004)
        }
        let result = try extend(line: number, request)
        serverAPI.extensions[key] = result
        return result
    }

    /// Extends every active subscription to a product (in the given storefronts, or all): RENEWAL_EXTENDED for each one
    /// extended, RENEWAL_EXTENSION FAILURE for each one that cannot be, and a RENEWAL_EXTENSION SUMMARY at the end. The
    /// simulator completes the request at once.
    mutating func extendRenewalDates(
        productID: String, storefronts: [String]?, _ request: AppStoreServerAPI.ExtendRenewalDateRequest
    )
        throws(SimulatorError) -> MassRenewalExtensionStatus
    {
        try Self.check(request)
        guard catalog.product(productID)?.subscription != nil else {
            throw SimulatorError(
                .invalidArgument, "\(productID) is not an auto-renewable subscription", appStoreErrorCode: 4_000_023)
        }
        if let storefronts {
            guard !storefronts.isEmpty else {
                throw SimulatorError(.invalidArgument, "the storefront list is empty", appStoreErrorCode: 4_000_027)
            }
            if let unknown = storefronts.first(where: { Storefront.named($0) == nil }) {
                throw SimulatorError(
                    .invalidArgument, "unknown storefront '\(unknown)'", appStoreErrorCode: 4_000_028)
            }
        }
        let key = "\(productID)/\(request.requestIdentifier)"
        if let earlier = serverAPI.massExtensions[key] { return earlier }
        let countries = storefronts.map { Set($0.map { $0.uppercased() }) }
        var succeeded = 0
        var failed = 0
        for number in lines.indices {
            let line = lines[number]
            guard line.productID == productID, line.isActive,
                lineIndex[line.accountID]?[line.groupID] == number,
                countries.map({ $0.contains(accounts[line.accountID]?.storefront.countryCode ?? "") }) ?? true
            else { continue }
            do {
                _ = try extend(line: number, request)
                succeeded += 1
            } catch {
                failed += 1
                notify(.renewalExtension, .failure, transaction: line.latestTransactionID, line: number)
            }
        }
        let status = MassRenewalExtensionStatus(
            requestIdentifier: request.requestIdentifier, productID: productID, complete: true, completeDate: now,
            succeededCount: succeeded, failedCount: failed)
        serverAPI.massExtensions[key] = status
        var summary = NotificationSummary()
        summary.environment = configuration.environment
        summary.appAppleID = configuration.appAppleID
        summary.bundleID = configuration.bundleID
        summary.productID = productID
        summary.requestIdentifier = request.requestIdentifier
        summary.storefrontCountryCodes = storefronts.map { $0.map { $0.uppercased() } }
        summary.succeededCount = Int64(succeeded)
        summary.failedCount = Int64(failed)
        var payload = NotificationPayload()
        payload.notificationType = .renewalExtension
        payload.subtype = .summary
        payload.summary = summary
        do { try emit(payload, account: nil, transaction: nil) } catch {
            log(.failed, account: nil, product: productID, "signing a notification failed: \(error)")
        }
        return status
    }

    func massExtensionStatus(productID: String, requestIdentifier: String) -> MassRenewalExtensionStatus? {
        serverAPI.massExtensions["\(productID)/\(requestIdentifier)"]
    }

    static func check(_ request: AppStoreServerAPI.ExtendRenewalDateRequest) throws(SimulatorError) {
        guard (1...90).contains(request.extendByDays) else {
            throw SimulatorError(.invalidArgument, "extendByDays is 1...90", appStoreErrorCode: 4_000_009)
        }
        guard (0...3).contains(request.extendReasonCode) else {
            throw SimulatorError(.invalidArgument, "extendReasonCode is 0...3", appStoreErrorCode: 4_000_010)
        }
        guard !request.requestIdentifier.isEmpty, request.requestIdentifier.utf8.count <= 128 else {
            throw SimulatorError(
                .invalidArgument, "requestIdentifier is 1 to 128 characters", appStoreErrorCode: 4_000_011)
        }
    }

    /// Moves an active line's renewal date; at most two extensions in a year.
    mutating func extend(line number: Int, _ request: AppStoreServerAPI.ExtendRenewalDateRequest) throws(SimulatorError)
        -> RenewalExtensionResult
    {
        let line = lines[number]
        guard line.isActive else {
            throw SimulatorError(
                .invalidState, "the subscription is not active, so it cannot be extended", appStoreErrorCode: 4_030_004)
        }
        let rate = configuration.timeRate
        let recent = line.extensionDates.filter {
            rate.advance($0, by: SubscriptionPeriod(value: 1, unit: .year)) > now
        }
        guard recent.count < 2 else {
            throw SimulatorError(
                .invalidState, "the subscription was extended twice in the last year", appStoreErrorCode: 4_030_005)
        }
        let expires = rate.advance(line.expiresDate, by: SubscriptionPeriod(value: request.extendByDays, unit: .day))
        lines[number].expiresDate = expires
        lines[number].extensionDates = recent + [now]
        reschedule(number)
        change(line.latestTransactionID) { $0.expiresDate = expires }
        for copy in sharedCopies(of: line.latestTransactionID) { change(copy) { $0.expiresDate = expires } }
        log(
            .renewalExtended, account: line.accountID, product: line.productID, transaction: line.latestTransactionID,
            "the developer extends \(line.accountID)'s \(line.productID) by \(request.extendByDays) days, "
                + "until \(Self.format(expires))")
        notify(.renewalExtended, nil, transaction: line.latestTransactionID, line: number)
        return RenewalExtensionResult(
            originalTransactionID: String(line.originalID),
            webOrderLineItemID: transactions[line.latestTransactionID]?.webOrderLineItemID.map(String.init),
            success: true, effectiveDate: expires)
    }

    // MARK: - App account tokens and app transactions

    /// The purchase an original transaction id names, for the endpoints that take only that: another transaction id
    /// is 4000187, a family-shared copy 4000185 (`sharedReason` says why it cannot be used).
    func originalPurchase(apiID id: String, sharedReason: String) throws(SimulatorError) -> TransactionState {
        let t = try transaction(apiID: id)
        guard t.originalID == t.id else {
            throw SimulatorError(
                .invalidArgument, "\(id) is not an original transaction id", appStoreErrorCode: 4_000_187)
        }
        guard t.ownership == .purchased else {
            throw SimulatorError(.invalidState, sharedReason, appStoreErrorCode: 4_000_185)
        }
        return t
    }

    /// Sets the app account token of a purchase (and of every later transaction of a subscription).
    mutating func setAppAccountToken(originalTransactionID id: String, _ token: UUID) throws(SimulatorError) {
        let t = try originalPurchase(
            apiID: id, sharedReason: "a family-shared transaction has no app account token of its own")
        for number in accounts[t.accountID]?.transactionIDs ?? [] where transactions[number]?.originalID == t.id {
            transactions[number]!.appAccountToken = token
            transactions[number]!.signed = nil
        }
        accounts[t.accountID]?.revision += 1
        log(
            .appAccountTokenSet, account: t.accountID, product: t.productID, transaction: t.id,
            "the developer sets the app account token of \(t.productID) (transaction \(t.id))")
    }

    /// The customer's app transaction as the server API gives it: signed, without a device verification.
    mutating func serverAppTransaction(anyTransactionID id: String) throws(SimulatorError) -> String {
        let account = try account(anyTransactionID: id)
        return try signAppTransaction(account: accounts[account]!, device: nil, nonce: nil)
    }

    // MARK: - Notifications

    /// Sends a TEST notification through the normal delivery path; returns the token that looks it up.
    mutating func requestTestNotification() throws(SimulatorError) -> String {
        var data = NotificationData()
        data.environment = configuration.environment
        data.appAppleID = configuration.appAppleID
        data.bundleID = configuration.bundleID
        data.bundleVersion = configuration.appVersion
        var payload = NotificationPayload()
        payload.notificationType = .test
        payload.data = data
        let notification: SimulatorNotification
        do { notification = try emit(payload, account: nil, transaction: nil) } catch {
            throw SimulatorError(.signingFailed, "could not sign the test notification: \(error)")
        }
        let token = "\(notification.uuid)_\(now.millisecondsSince1970)"
        serverAPI.testNotifications[token] = notification.uuid
        log(.testNotificationRequested, account: nil, "the developer asks for a test notification")
        return token
    }

    /// The notifications kept, with their send attempts, that match a notification history request, oldest first.
    func notificationHistory(_ query: NotificationHistoryFilter) throws(SimulatorError) -> [NotificationHistoryEntry] {
        let oldest = now.addingTimeInterval(-180 * 86_400)
        guard query.startDate >= oldest else {
            throw SimulatorError(
                .invalidArgument, "startDate is more than 180 days ago", appStoreErrorCode: 4_000_012)
        }
        guard query.startDate <= query.endDate else {
            throw SimulatorError(.invalidArgument, "startDate is after endDate", appStoreErrorCode: 4_000_013)
        }
        guard query.transactionID == nil || (query.type == nil && query.subtype == nil) else {
            throw SimulatorError(
                .invalidArgument, "transactionId and notificationType exclude each other",
                appStoreErrorCode: 4_000_019)
        }
        let customer = try query.transactionID.map { (id) throws(SimulatorError) in
            try account(anyTransactionID: id)
        }
        return notifications.compactMap { notification in
            let attempts = serverAPI.sendAttempts[notification.uuid] ?? []
            guard notification.date >= query.startDate, notification.date < query.endDate,
                query.type.map({ $0 == notification.type }) ?? true,
                query.subtype.map({ $0 == notification.subtype }) ?? true,
                customer.map({ $0 == notification.accountID }) ?? true,
                !query.onlyFailures || !attempts.contains(where: { $0.result == "SUCCESS" })
            else { return nil }
            return NotificationHistoryEntry(notification: notification, sendAttempts: attempts)
        }
    }

    /// A test notification and its send attempts, by token.
    func testNotification(token: String) throws(SimulatorError) -> NotificationHistoryEntry {
        let parts = token.split(separator: "_")
        guard parts.count == 2, UUID(uuidString: String(parts[0])) != nil, Int64(parts[1]) != nil else {
            throw SimulatorError(
                .invalidArgument, "'\(token)' is not a test notification token", appStoreErrorCode: 4_000_020)
        }
        guard let uuid = serverAPI.testNotifications[token],
            let notification = notifications.first(where: { $0.uuid == uuid })
        else {
            throw SimulatorError(.unknownRequest, "no test notification '\(token)'", appStoreErrorCode: 4_040_008)
        }
        return NotificationHistoryEntry(notification: notification, sendAttempts: serverAPI.sendAttempts[uuid] ?? [])
    }

    /// Records one attempt to deliver a notification (Apple keeps at most six).
    mutating func recordSendAttempt(notificationUUID uuid: String, result: String) {
        var attempts = serverAPI.sendAttempts[uuid] ?? []
        guard attempts.count < 6 else { return }
        attempts.append(NotificationSendAttempt(date: now, result: result))
        serverAPI.sendAttempts[uuid] = attempts
        changedNotifications.insert(uuid)
    }
}
