import Foundation
import IAPCatalog
import IAPEntitlements
import IAPSignedData
import IAPSimulator

/// The JSON answers of the `/simulator` control plane.
extension Answers {
    struct SimulatorState: Encodable {
        var bundleId: String
        var environment: String
        var now: Date
        var accounts: [String]
        var productIds: [String]
        var pendingPurchases: [Pending]
        var notifications: Int
        var transactions: Int
    }

    struct SimulatedClock: Encodable {
        var now: Date
        /// Absent for a clock that moves only when told.
        var paused: Bool?
        /// Simulated seconds per wall-clock second; absent for a clock that moves only when told.
        var speed: Double?
    }

    struct Pending: Encodable {
        var id: String
        var reason: String
        var accountId: String
        var productId: String
        var requestedAt: Date

        init(_ pending: PendingPurchase) {
            id = pending.id
            reason = pending.reason.rawValue
            accountId = pending.accountID
            productId = pending.productID
            requestedAt = pending.requestedAt
        }
    }

    struct SimulatedTransaction: Encodable {
        var transactionId: String
        var originalTransactionId: String?
        var productId: String?
        var purchaseDate: Date?
        var expiresDate: Date?
        var revocationDate: Date?
        /// The order id the customer's emailed receipt shows (the App Store Server API's order lookup takes it).
        var orderId: String?
        /// The signed transaction, ready for `POST /v1/transactions`.
        var signedTransaction: String

        init(_ transaction: SimulatorTransaction) {
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

    struct SimulatedAccount: Encodable {
        var accountId: String
        var storefront: String
        var askToBuy: Bool
        /// Renewals fail, as with an expired card.
        var billingFails: Bool
        var familyId: String?
        /// The token the account's purchases carry, when it has one: the validation server's customer id.
        var appAccountToken: String?
        var deviceIds: [String]
        var entitledProductIds: [String]
        var consumablesPurchased: [String: Int]
        /// The account's subscriptions, one per group.
        var subscriptions: [SimulatedSubscription]
        var transactions: [SimulatedTransaction]
    }

    /// One subscription group of an account, as the store sees it.
    struct SimulatedSubscription: Encodable {
        var groupId: String
        var groupName: String?
        /// `subscribed`, `inGracePeriod`, `inBillingRetry`, `expired` or `revoked`.
        var state: String
        var productId: String
        var expiresDate: Date
        var willAutoRenew: Bool
        /// The product the next renewal brings (another level after an upgrade or a downgrade), while auto-renew is on.
        var renewsToProductId: String?
        var gracePeriodExpiresDate: Date?
        var isFamilyShared: Bool
        var originalTransactionId: String

        init(groupId: String, _ subscription: SimulatorSubscription, groupName: String?) {
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

    struct SimulatedProduct: Encodable {
        var id: String
        var kind: String
        var displayName: String
        var description: String
        var price: Decimal
        var displayPrice: String
        var subscriptionGroupId: String?
        var subscriptionGroupName: String?
        /// The service level in its group: 1 is the highest (upgrades move towards 1).
        var subscriptionGroupLevel: Int?
        /// ISO 8601 (`P1M`), for subscriptions.
        var subscriptionPeriod: String?
        var isFamilyShareable: Bool
        var isEligibleForIntroductoryOffer: Bool

        init(_ product: SimulatorProduct, groupName: String? = nil, groupLevel: Int? = nil) {
            id = product.id
            subscriptionGroupName = groupName
            subscriptionGroupLevel = groupLevel
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

    struct PurchaseResult: Encodable {
        /// `purchased`, `pending` or `userCancelled`.
        var outcome: String
        var transaction: SimulatedTransaction?
        var pending: Pending?

        init(_ outcome: PurchaseOutcome) {
            switch outcome {
            case .purchased(let transaction):
                self.outcome = "purchased"
                self.transaction = SimulatedTransaction(transaction)
            case .pending(let pending):
                self.outcome = "pending"
                self.pending = Pending(pending)
            case .userCancelled:
                self.outcome = "userCancelled"
            }
        }
    }

    struct SimulatedNotification: Encodable {
        var index: Int
        var notificationUUID: String
        var notificationType: String
        var subtype: String?
        var signedDate: Date
        /// Absent for notifications about no customer (TEST, a mass extension's SUMMARY).
        var accountId: String?
        var transactionId: String?
        /// What this server answered each time the notification reached it (`SUCCESS`, or
        /// `UNSUCCESSFUL_HTTP_RESPONSE_CODE` when it refused it), oldest first.
        var serverAnswers: [Attempt]
        var signedPayload: String

        struct Attempt: Encodable {
            var date: Date
            var result: String
        }

        init(index: Int, _ notification: SimulatorNotification, attempts: [NotificationSendAttempt] = []) {
            transactionId = notification.transactionID
            serverAnswers = attempts.map { Attempt(date: $0.date, result: $0.result) }
            self.index = index
            notificationUUID = notification.uuid
            notificationType = notification.type.rawValue
            subtype = notification.subtype?.rawValue
            signedDate = notification.date
            accountId = notification.accountID
            signedPayload = notification.signedPayload
        }
    }

    struct SimulatedNotifications: Encodable {
        var notifications: [SimulatedNotification]
        /// The `since` that asks for what comes after this page.
        var next: Int
    }
}
