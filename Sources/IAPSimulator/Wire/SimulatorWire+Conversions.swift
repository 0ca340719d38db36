import Foundation
public import IAPCatalog
import IAPCore
import IAPEntitlements
import IAPSignedData

// The wire types made from the store's own values, and the store's answers in wire form (`SimulatorWire`).

// MARK: - From the store's values

extension SimulatorWire.Pending {
    public init(_ pending: PendingPurchase) {
        id = pending.id
        reason = pending.reason.rawValue
        accountId = pending.accountID
        productId = pending.productID
        requestedAt = pending.requestedAt
    }
}

extension SimulatorWire.Transaction {
    public init(_ transaction: SimulatorTransaction) {
        transactionId = transaction.transactionID
        originalTransactionId = transaction.payload.originalTransactionID
        productId = transaction.payload.productID
        purchaseDate = transaction.payload.purchaseDate?.date
        expiresDate = transaction.payload.expiresDate?.date
        revocationDate = transaction.payload.revocationDate?.date
        orderId = transaction.orderID
        signedTransaction = transaction.jws
    }
}

extension SimulatorWire.Transactions {
    public init(_ transactions: [SimulatorTransaction]) {
        self.transactions = transactions.map(SimulatorWire.Transaction.init)
    }
}

extension SimulatorWire.Subscription {
    public init(groupId: String, _ subscription: SimulatorSubscription, groupName: String?) {
        self.groupId = groupId
        self.groupName = groupName
        state = subscription.state.rawValue
        productId = subscription.productID
        expiresDate = subscription.expiresDate
        willAutoRenew = subscription.willAutoRenew
        renewsToProductId = subscription.renewsToProductID
        gracePeriodExpiresDate = subscription.gracePeriodExpiresDate
        isFamilyShared = subscription.isFamilyShared
        originalTransactionId = subscription.originalTransactionID
    }
}

extension SimulatorWire.Product {
    /// `product` as the store sells it; `catalog` adds its group's name, its level and its offers.
    public init(_ product: SimulatorProduct, catalog: Catalog? = nil) {
        id = product.id
        let subscription = catalog?.product(product.id)?.subscription
        subscriptionGroupName = product.subscriptionGroupID.flatMap { catalog?.group($0)?.name }
        subscriptionGroupLevel = subscription?.level
        introductoryOffer = subscription?.introductoryOffer
        promotionalOffers = subscription.map(\.promotionalOffers)
        winBackOffers = subscription.map(\.winBackOffers)
        kind = product.kind.rawValue
        displayName = product.displayName
        description = product.description
        price = product.price
        displayPrice = product.displayPrice
        subscriptionGroupId = product.subscriptionGroupID
        subscriptionPeriod = product.subscriptionPeriod?.iso8601
        isFamilyShareable = product.isFamilyShareable
        isEligibleForIntroductoryOffer = product.isEligibleForIntroductoryOffer
    }
}

extension SimulatorWire.PurchaseResult {
    public init(_ outcome: PurchaseOutcome) {
        switch outcome {
        case .purchased(let transaction):
            self.outcome = "purchased"
            self.transaction = SimulatorWire.Transaction(transaction)
        case .pending(let pending):
            self.outcome = "pending"
            self.pending = SimulatorWire.Pending(pending)
        case .userCancelled:
            self.outcome = "userCancelled"
        }
    }
}

extension SimulatorWire.Notification {
    public init(index: Int, _ notification: SimulatorNotification, attempts: [NotificationSendAttempt] = []) {
        transactionId = notification.transactionID
        serverAnswers = attempts
        self.index = index
        notificationUUID = notification.uuid
        notificationType = notification.type.rawValue
        subtype = notification.subtype?.rawValue
        signedDate = notification.date
        accountId = notification.accountID
        signedPayload = notification.signedPayload
    }
}

extension AppStoreSimulator {
    /// The store at a glance, as `GET /simulator` answers it.
    public func wireState() throws(SimulatorError) -> SimulatorWire.State {
        SimulatorWire.State(
            bundleId: configuration.bundleID, environment: configuration.environment.rawValue, now: try now,
            accounts: accountIDs, productIds: catalog.products.map(\.id),
            pendingPurchases: pendingPurchases.map(SimulatorWire.Pending.init),
            notifications: statistics.notifications, transactions: statistics.transactions)
    }

    /// The clock, as `GET /simulator/clock` answers it.
    public func wireClock() throws(SimulatorError) -> SimulatorWire.Clock {
        SimulatorWire.Clock(now: try now, paused: clockSetting?.paused, speed: clockSetting?.speed)
    }

    /// One account, as `GET /simulator/accounts/{account}` answers it.
    public func wireAccount(_ id: String) throws(SimulatorError) -> SimulatorWire.Account {
        let settings = try settings(account: id)
        let view = try view(account: id)
        return SimulatorWire.Account(
            accountId: id, storefront: settings.storefront, askToBuy: settings.askToBuy,
            billingFails: settings.billingFails, familyId: settings.familyID,
            appAccountToken: settings.appAccountToken?.uuidString.lowercased(),
            deviceIds: try devices(account: id).map(\.uuidString),
            entitledProductIds: view.entitledProductIDs.sorted(),
            consumablesPurchased: view.consumablePurchased,
            subscriptions: view.subscriptions.sorted { $0.key < $1.key }.map { group, subscription in
                SimulatorWire.Subscription(groupId: group, subscription, groupName: catalog.group(group)?.name)
            },
            transactions: try transactions(account: id).map(SimulatorWire.Transaction.init))
    }

    /// The products `ids` (every product when nil) as `account` sees them.
    public func wireProducts(_ ids: [String]?, account: String) throws(SimulatorError) -> SimulatorWire.Products {
        let products = try products(ids ?? catalog.products.map(\.id), account: account)
        return SimulatorWire.Products(
            products: products.map { SimulatorWire.Product($0, catalog: catalog) })
    }

    /// The app and the roots a device verifies against.
    public func wireTrust() throws -> SimulatorWire.Trust {
        SimulatorWire.Trust(
            bundleId: configuration.bundleID, appAppleId: configuration.appAppleID,
            environment: configuration.environment.rawValue,
            rootCertificates: try pki.rootCertificates().map { Data($0).base64EncodedString() })
    }

    /// The failing operations and their codes.
    public var wireFailures: SimulatorWire.Failures {
        SimulatorWire.Failures(
            failures: Dictionary(uniqueKeysWithValues: injectedFailures.map { ($0.key.rawValue, $0.value.rawValue) }))
    }

    /// The notifications from `since` on, at most 500.
    public func wireNotifications(since: Int) -> SimulatorWire.Notifications {
        let all = notifications
        let start = min(max(since, 0), all.count)
        let page = all[start..<min(start + 500, all.count)]
        return SimulatorWire.Notifications(
            notifications: page.enumerated().map {
                SimulatorWire.Notification(index: start + $0, $1, attempts: sendAttempts(notificationUUID: $1.uuid))
            },
            next: start + page.count)
    }
}
