import Crypto
import Foundation
import IAPCatalog
import IAPEntitlements
import IAPReceipts
import IAPSignedData

extension SimulatorCore {
    // MARK: - Signed transactions and renewal info

    func transactionPayload(_ t: TransactionState) -> TransactionPayload {
        var p = TransactionPayload()
        p.transactionID = String(t.id)
        p.originalTransactionID = String(t.originalID)
        p.webOrderLineItemID = t.webOrderLineItemID.map(String.init)
        p.bundleID = configuration.bundleID
        p.productID = t.productID
        p.subscriptionGroupIdentifier = t.groupID
        p.purchaseDate = EpochMilliseconds(t.purchaseDate)
        p.originalPurchaseDate = EpochMilliseconds(t.originalPurchaseDate)
        p.expiresDate = t.expiresDate.map(EpochMilliseconds.init)
        p.quantity = t.quantity
        p.type = Self.productType(t.kind)
        p.appAccountToken = t.appAccountToken?.uuidString.lowercased()
        p.inAppOwnershipType = t.ownership
        p.signedDate = EpochMilliseconds(now)
        if let revocation = t.revocation {
            p.revocationDate = EpochMilliseconds(revocation.date)
            p.revocationReason = revocation.reason
            p.revocationType = revocation.type
            p.revocationPercentage = revocation.percentage
        }
        if t.isUpgraded { p.isUpgraded = true }
        if let offer = t.offer {
            p.offerType = offer.type
            p.offerIdentifier = offer.id
            p.offerDiscountType = Self.discountType(offer.offer.paymentMode)
            p.offerPeriod = offer.offer.period.iso8601
        }
        p.environment = configuration.environment
        p.storefront = t.storefront.countryCode
        p.storefrontID = Self.storefrontIDs[t.storefront.countryCode]
        // Apple signs a reason on every transaction: PURCHASE for what a customer bought (of any product type),
        // RENEWAL for a subscription's renewals.
        p.transactionReason = t.reason
        p.currency = t.storefront.currency
        p.price = Self.milliunits(t.price)
        p.appTransactionID = accounts[t.accountID]?.appTransactionID
        return p
    }

    func renewalInfoPayload(line: SubscriptionLine, originalID: UInt64) -> RenewalInfoPayload {
        var p = RenewalInfoPayload()
        p.originalTransactionID = String(originalID)
        p.productID = line.productID
        p.autoRenewProductID = line.autoRenewProductID
        p.autoRenewStatus = line.autoRenew ? .on : .off
        p.signedDate = EpochMilliseconds(now)
        p.environment = configuration.environment
        p.recentSubscriptionStartDate = EpochMilliseconds(line.recentStart)
        p.appAccountToken = accounts[line.accountID]?.appAccountToken?.uuidString.lowercased()
        p.appTransactionID = accounts[line.accountID]?.appTransactionID
        p.currency = accounts[line.accountID]?.storefront.currency
        p.renewalPrice = Self.milliunits(prices[line.autoRenewProductID] ?? 0)
        if let increase = line.priceIncrease { p.priceIncreaseStatus = increase }
        switch line.status {
        case .active:
            p.renewalDate = EpochMilliseconds(line.expiresDate)
            if line.offerPeriodsRemaining > 0, let offer = line.offer {
                p.offerType = offer.type
                p.offerIdentifier = offer.id
                p.offerDiscountType = Self.discountType(offer.offer.paymentMode)
                p.offerPeriod = offer.offer.period.iso8601
            }
        case .billingRetry(let graceEnd, _, _):
            p.isInBillingRetryPeriod = true
            p.expirationIntent = .billingError
            p.gracePeriodExpiresDate = graceEnd.map(EpochMilliseconds.init)
            p.renewalDate = EpochMilliseconds(line.expiresDate)
        case .expired(let intent):
            p.expirationIntent = intent
            p.isInBillingRetryPeriod = false
            let winBack = catalog.product(line.autoRenewProductID)?.subscription?.winBackOffers.compactMap(\.id) ?? []
            if !winBack.isEmpty { p.eligibleWinBackOfferIDs = winBack }
        case .revoked:
            p.isInBillingRetryPeriod = false
        }
        return p
    }

    /// Signs the renewal info of a line (for a family member, with their shared original id).
    mutating func signedRenewalInfo(line number: Int, forAccount account: String) throws(SimulatorError) -> String {
        let line = lines[number]
        let originalID =
            account == line.accountID ? line.originalID : (line.sharedOriginals[account] ?? line.originalID)
        let jws: String
        do { jws = try jwsSigner.sign(renewalInfoPayload(line: line, originalID: originalID)) } catch {
            throw SimulatorError(.signingFailed, "could not sign renewal info: \(error)")
        }
        statistics.jwsSignatures += 1
        keep(.renewalInfo, id: String(originalID), account: account, bytes: Array(jws.utf8))
        return jws
    }

    /// The App Store Server API status of a line.
    static func status(_ line: SubscriptionLine, at now: Date) -> SubscriptionState {
        switch line.status {
        case .active: return .subscribed
        case .billingRetry(let graceEnd, _, _):
            return graceEnd.map { now < $0 } == true ? .inGracePeriod : .inBillingRetry
        case .expired: return .expired
        case .revoked: return .revoked
        }
    }

    // MARK: - Notifications

    /// Issues an App Store Server Notification V2 about a transaction (and its subscription line) and queues it for
    /// every sink.
    mutating func notify(
        _ type: NotificationType, _ subtype: NotificationSubtype?, transaction id: UInt64, line: Int?,
        consumptionReason: ConsumptionRequestReason? = nil
    ) {
        guard let t = transactions[id] else { return }
        var data = NotificationData()
        data.environment = configuration.environment
        data.appAppleID = configuration.appAppleID
        data.bundleID = configuration.bundleID
        data.bundleVersion = configuration.appVersion
        data.consumptionRequestReason = consumptionReason
        do {
            data.signedTransactionInfo = try signedTransaction(id).jws
            var subscriptionLine = line
            if subscriptionLine == nil, let group = t.groupID {
                let owner = t.sharedFrom.flatMap { transactions[$0]?.accountID } ?? t.accountID
                subscriptionLine = lineNumber(account: owner, group: group)
            }
            if let number = subscriptionLine, t.kind == .autoRenewable {
                data.signedRenewalInfo = try signedRenewalInfo(line: number, forAccount: t.accountID)
                data.status = SubscriptionStatus(rawValue: Self.status(lines[number], at: now).appStoreStatus)
            }
            var payload = NotificationPayload()
            payload.notificationType = type
            payload.subtype = subtype
            payload.data = data
            try emit(payload, account: t.accountID, transaction: id)
        } catch {
            log(
                .failed, account: t.accountID, product: t.productID, transaction: id,
                "signing a notification failed: \(error)")
        }
    }

    /// Signs a notification (its type, subtype and data or summary set; the UUID, version and date are added here),
    /// keeps it and queues it for every sink. Returns it.
    @discardableResult
    mutating func emit(_ unsigned: NotificationPayload, account: String?, transaction id: UInt64?) throws
        -> SimulatorNotification
    {
        var payload = unsigned
        payload.notificationUUID = ids.uuid().uuidString.lowercased()
        payload.version = "2.0"
        payload.signedDate = EpochMilliseconds(now)
        let jws = try jwsSigner.sign(payload)
        statistics.jwsSignatures += 1
        statistics.notifications += 1
        let notification = SimulatorNotification(
            uuid: payload.notificationUUID!, type: payload.notificationType ?? .test, subtype: payload.subtype,
            date: now, accountID: account, transactionID: id.map(String.init), signedPayload: jws, payload: payload)
        if keepsNotifications {
            notifications.append(notification)
            notificationOrders.append(Int64(statistics.notifications))
            changedNotifications.insert(notification.uuid)
            // A simulator keeping every record keeps every notification too; one keeping notifications alone (a
            // server's) keeps what Apple's history would.
            if !keepsRecords { letGoOfOldNotifications() }
        }
        keep(.notification, id: notification.uuid, account: account, bytes: notification.requestBody)
        if !notificationSinks.isEmpty { outbox.post(.notification(notification, sinks: notificationSinks)) }
        return notification
    }

    /// Apple's notification history reaches back 180 days: kept notifications older than that go (with their send
    /// attempts), and past ``maximumKeptNotifications`` the oldest do.
    mutating func letGoOfOldNotifications() {
        let horizon = now.addingTimeInterval(-Self.notificationHistoryWindow)
        var drop = 0
        while drop < notifications.count
            && (notifications[drop].date < horizon || notifications.count - drop > Self.maximumKeptNotifications)
        {
            drop += 1
        }
        // A batch at a time (an eighth of what is kept, at most 64), so letting go costs little per notification.
        guard drop > 0, drop >= min(64, max(1, notifications.count / 8)) else { return }
        for notification in notifications.prefix(drop) {
            serverAPI.sendAttempts[notification.uuid] = nil
            changedNotifications.remove(notification.uuid)
            removedNotifications.insert(notification.uuid)
        }
        notifications.removeFirst(drop)
        notificationOrders.removeFirst(drop)
    }

    static let notificationHistoryWindow: TimeInterval = 180 * 86_400
    static let maximumKeptNotifications = 10_000

    // MARK: - Receipts and app transactions

    /// The device's app receipt as of now: rebuilt and re-signed only when the account changed since the last one.
    mutating func receipt(account accountID: String, device deviceID: UUID) throws(SimulatorError) -> SimulatorReceipt {
        let account = try account(accountID)
        guard let index = account.device(deviceID) else {
            throw SimulatorError(.unknownDevice, "device \(deviceID) does not belong to \(accountID)")
        }
        if let cached = account.devices[index].cachedReceipt, cached.revision == account.revision {
            return cached.receipt
        }
        let device = account.devices[index]
        let receipt = appReceipt(account: account, device: device)
        let signed: SimulatorReceipt
        do {
            let receipt = try pki.receiptSigner.sign(receipt)
            signed = SimulatorReceipt(bytes: try receipt.derBytes(), receipt: receipt)
        } catch {
            throw SimulatorError(.signingFailed, "could not sign the receipt: \(error)")
        }
        statistics.receiptSignatures += 1
        accounts[accountID]!.devices[index].cachedReceipt = (account.revision, signed)
        keep(
            .receipt, id: "\(accountID)-\(deviceID.uuidString.prefix(8).lowercased())", account: accountID,
            bytes: signed.bytes)
        return signed
    }

    func appReceipt(account: Account, device: Device) -> AppReceipt {
        var receipt = AppReceipt(
            environment: Self.receiptEnvironment(configuration.environment),
            appItemID: configuration.environment == .production
                ? ReceiptInteger(UInt64(configuration.appAppleID)) : nil,
            bundleID: configuration.bundleID, appVersion: configuration.appVersion, opaqueValue: device.opaqueValue,
            creationDate: now, originalPurchaseDate: account.createdAt,
            originalAppVersion: configuration.originalAppVersion)
        let deviceBytes = withUnsafeBytes(of: device.id.uuid) { Array($0) }
        receipt.sha1Hash = Array(Insecure.SHA1.hash(data: deviceBytes + device.opaqueValue + receipt.bundleIDData))
        receipt.inAppPurchases = account.transactionIDs.compactMap { id in
            guard let t = transactions[id], !(t.kind == .consumable && t.finished) else { return nil }
            return InAppPurchase(
                quantity: t.quantity, productID: t.productID, transactionID: String(t.id),
                originalTransactionID: String(t.originalID), purchaseDate: t.purchaseDate,
                originalPurchaseDate: t.originalPurchaseDate, productType: Self.receiptProductType(t.kind),
                expiresDate: t.expiresDate, webOrderLineItemID: t.webOrderLineItemID.map { ReceiptInteger($0) },
                cancellationDate: t.revocation?.date,
                isTrialPeriod: t.offer?.offer.paymentMode == .freeTrial,
                isInIntroOfferPeriod: t.offer?.type == .introductory && t.offer?.offer.paymentMode != .freeTrial,
                promotionalOfferID: t.offer?.type == .promotional ? t.offer?.id : nil)
        }
        return receipt
    }

    mutating func appTransaction(account accountID: String, device deviceID: UUID, nonce: UUID?) throws(SimulatorError)
        -> String
    {
        try checkInjectedFailure(.appTransaction)
        let account = try account(accountID)
        guard account.device(deviceID) != nil else {
            throw SimulatorError(.unknownDevice, "device \(deviceID) does not belong to \(accountID)")
        }
        return try signAppTransaction(account: account, device: deviceID, nonce: nonce ?? ids.uuid())
    }

    /// The account's app transaction, signed; with a device verification when a device and nonce are given (the
    /// server API's copy has none).
    mutating func signAppTransaction(account: Account, device deviceID: UUID?, nonce: UUID?) throws(SimulatorError)
        -> String
    {
        var p = AppTransactionPayload()
        p.receiptType = configuration.environment
        p.appAppleID = configuration.appAppleID
        p.bundleID = configuration.bundleID
        p.applicationVersion = configuration.appVersion
        p.receiptCreationDate = EpochMilliseconds(now)
        p.originalPurchaseDate = EpochMilliseconds(account.createdAt)
        p.originalApplicationVersion = configuration.originalAppVersion
        if let deviceID, let nonce {
            p.deviceVerificationNonce = nonce.uuidString.lowercased()
            let hashed = Array((nonce.uuidString.lowercased() + deviceID.uuidString.lowercased()).utf8)
            p.deviceVerification = Data(SHA384.hash(data: hashed)).base64EncodedString()
        }
        p.appTransactionID = account.appTransactionID
        p.originalPlatform = .iOS
        p.signedDate = EpochMilliseconds(now)
        let jws: String
        do { jws = try jwsSigner.sign(p) } catch {
            throw SimulatorError(.signingFailed, "could not sign the app transaction: \(error)")
        }
        statistics.jwsSignatures += 1
        keep(.appTransaction, id: account.id, account: account.id, bytes: Array(jws.utf8))
        return jws
    }

    /// The subscription lines an account sees: its own, and those its family shares with it, each with the
    /// original transaction id the account knows it by.
    func visibleLines(account accountID: String) -> [(line: Int, originalID: UInt64, shared: Bool)] {
        var result = (lineIndex[accountID] ?? [:]).values.sorted().map { ($0, lines[$0].originalID, false) }
        for member in familyMembers(of: accountID) {
            for number in (lineIndex[member] ?? [:]).values.sorted() {
                if let copy = lines[number].sharedOriginals[accountID] { result.append((number, copy, true)) }
            }
        }
        return result
    }

    // MARK: - The simulator's own view

    /// What the account has now, from the simulator's state.
    func view(account accountID: String) throws(SimulatorError) -> SimulatorEntitlements {
        let account = try account(accountID)
        var entitled = Set<String>()
        var consumables: [String: Int] = [:]
        for id in account.transactionIDs {
            guard let t = transactions[id] else { continue }
            switch t.kind {
            case .consumable:
                var quantity = t.quantity
                if let revocation = t.revocation {
                    let refunded = EntitlementEngine.proratedUnits(
                        of: t.quantity, milliPercent: revocation.percentage ?? 100_000)
                    quantity = max(0, t.quantity - refunded)
                }
                consumables[t.productID, default: 0] += quantity
            case .nonConsumable:
                if t.revocation == nil { entitled.insert(t.productID) }
            case .nonRenewable, .autoRenewable:
                break
            }
        }
        var subscriptions: [String: SimulatorSubscription] = [:]
        for (number, originalID, shared) in visibleLines(account: accountID) {
            let line = lines[number]
            let state = Self.status(line, at: now)
            let view = SimulatorSubscription(
                state: state, productID: line.productID, expiresDate: line.expiresDate, willAutoRenew: line.autoRenew,
                renewsToProductID: line.autoRenew ? line.autoRenewProductID : nil,
                gracePeriodExpiresDate: { if case .billingRetry(let g, _, _) = line.status { g } else { nil } }(),
                isFamilyShared: shared, originalTransactionID: String(originalID))
            if let existing = subscriptions[line.groupID] {
                // Access first, then the higher service level, then the customer's own.
                let better =
                    (state.grantsAccess && !existing.state.grantsAccess)
                    || (state.grantsAccess == existing.state.grantsAccess
                        && (level(of: view.productID), view.isFamilyShared ? 1 : 0)
                            < (level(of: existing.productID), existing.isFamilyShared ? 1 : 0))
                if !better { continue }
            }
            subscriptions[line.groupID] = view
        }
        for view in subscriptions.values where view.state.grantsAccess { entitled.insert(view.productID) }
        return SimulatorEntitlements(
            entitledProductIDs: entitled, consumablePurchased: consumables, subscriptions: subscriptions)
    }

    // MARK: - Vocabulary

    static func productType(_ kind: ProductKind) -> ProductType {
        switch kind {
        case .consumable: .consumable
        case .nonConsumable: .nonConsumable
        case .nonRenewable: .nonRenewing
        case .autoRenewable: .autoRenewable
        }
    }

    static func receiptProductType(_ kind: ProductKind) -> InAppPurchase.ProductType {
        switch kind {
        case .consumable: .consumable
        case .nonConsumable: .nonConsumable
        case .nonRenewable: .nonRenewingSubscription
        case .autoRenewable: .autoRenewableSubscription
        }
    }

    static func discountType(_ mode: SubscriptionOffer.PaymentMode) -> OfferDiscountType {
        switch mode {
        case .freeTrial: .freeTrial
        case .payAsYouGo: .payAsYouGo
        case .payUpFront: .payUpFront
        }
    }

    static func receiptEnvironment(_ environment: AppStoreEnvironment) -> ReceiptEnvironment {
        switch environment {
        case .production: .production
        case .xcode: .xcode
        default: .productionSandbox
        }
    }

    static func milliunits(_ price: Decimal) -> Int64 {
        Int64(truncating: NSDecimalNumber(decimal: price * 1000))
    }

    /// App Store storefront ids for the storefronts IAPKit knows best.
    static let storefrontIDs: [String: String] = [
        "USA": "143441", "FRA": "143442", "DEU": "143443", "GBR": "143444", "AUT": "143445", "BEL": "143446",
        "FIN": "143447", "ITA": "143450", "NLD": "143452", "ESP": "143454", "CAN": "143455", "SWE": "143456",
        "NOR": "143457", "DNK": "143458", "CHE": "143459", "AUS": "143460", "NZL": "143461", "JPN": "143462",
        "KOR": "143466", "IRL": "143449", "BRA": "143503", "MEX": "143468", "IND": "143467", "CHN": "143465",
    ]
}
