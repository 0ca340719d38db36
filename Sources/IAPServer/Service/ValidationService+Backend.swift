import Foundation
import IAPCatalog
import IAPCore
public import IAPEntitlements
import IAPSignedData

/// What a backend builds on: customers who log in (aliases, switching accounts), the events of the outbox as the
/// console sees them, and answers to Apple's consumption requests.
extension ValidationService {
    // MARK: - Identity

    /// What `POST /v1/customers/{id}/login` did.
    public struct LoginAnswer: Sendable {
        public var customer: CustomerKey
        /// Whether an anonymous customer was merged in (its purchases moved, its id an alias from now on).
        public var merged: Bool
        public var moved: [String]
        public var entitlements: EntitlementSnapshot
    }

    /// Logs the customer `id` names in as `appUserID`: an anonymous customer (one who never logged in) is merged into
    /// that customer, a customer who logged in before switches to it (nothing moves). An app key names both by app
    /// account token (UUIDs); a secret key may name the app user by any id of 1 to 200 characters.
    public func logIn(_ id: String, as appUserID: String, bundleID: String?, caller: Caller)
        async throws(ServiceError) -> LoginAnswer
    {
        let app = try app(bundleID: bundleID ?? caller.bundleID)
        try Self.authorize(caller, app: app, needs: .app)
        let bundle = app.configuration.bundleID
        func named(_ text: String, _ field: String) throws(ServiceError) -> String {
            if let token = try? Self.normalizedToken(text) { return token }
            guard caller.scope == .secret else {
                throw .badRequest(
                    "invalidAppAccountToken", "with an app key, \(field) must be an app account token (a UUID)")
            }
            guard (1...200).contains(text.unicodeScalars.count), text.isOneLineOfText else {
                throw .badRequest(
                    "invalidField",
                    "\(field) must be 1 to 200 characters (Unicode scalars) on one line, no control characters")
            }
            return text
        }
        let sourceID = try named(id, "the customer id")
        let targetID = try named(appUserID, "appUserId")
        let source =
            try await customer(matching: sourceID, bundleID: bundle) ?? CustomerKey(bundleID: bundle, id: sourceID)
        let target = try await customer(matching: targetID, bundleID: bundle)?.id ?? targetID
        let outcome: LoginOutcome
        do { outcome = try await storage.logIn(source, as: target, announcing: announcer) } catch {
            throw .storage(error)
        }
        if outcome.merged, announcer != nil { outboxSignal.nudge() }
        let customer = CustomerKey(bundleID: bundle, id: target)
        return LoginAnswer(
            customer: customer, merged: outcome.merged, moved: outcome.moved,
            entitlements: try await snapshot(of: customer, app: app))
    }

    /// The stored customer `id` names (directly, as an alias, or as an original transaction id), or nil.
    func customer(matching id: String, bundleID: String) async throws(ServiceError) -> CustomerKey? {
        do { return try await storage.customer(matching: id, bundleID: bundleID) } catch { throw .storage(error) }
    }

    // MARK: - Events

    /// Deliveries of events to webhooks, newest first.
    public func deliveries(_ query: DeliveryQuery) async throws(ServiceError) -> [DeliveryRecord] {
        do { return try await storage.deliveries(query) } catch { throw .storage(error) }
    }

    /// Sends an event again (to one endpoint, or all): due now, whatever its state. 404 when no such event.
    public func retryDelivery(eventID: String, endpoint: String?) async throws(ServiceError) -> Int {
        let count: Int
        do { count = try await storage.retryDelivery(eventID: eventID, endpoint: endpoint, now: wallClock()) } catch {
            throw .storage(error)
        }
        guard count > 0 else {
            throw ServiceError(
                .notFound, "deliveryNotFound", "no delivery of event '\(eventID)' that is not in flight")
        }
        outboxSignal.nudge()
        return count
    }

    // MARK: - Answers to refund requests

    /// The answer to a consumption request, queued for the App Store Server API, when the app answers them: how much
    /// of the purchase was used (a consumable's share consumed, a subscription period's share elapsed), that it was
    /// delivered, and the app's refund preference; due by Apple's deadline.
    func consumptionAnswer(
        for transaction: StoredTransaction, notification: StoredNotification, app: ServedApp
    ) async throws(ServiceError) -> QueuedEvent? {
        guard let settings = app.configuration.consumptionAnswers, settings.customerConsented,
            app.configuration.serverAPI != nil
        else { return nil }
        let record = transaction.record
        let owner = try await customer(
            matching: transaction.originalTransactionID, bundleID: app.configuration.bundleID)
        var percentage: Int?
        switch app.engine.kind(of: record) {
        case .consumable:
            if let owner {
                let snapshot = try await snapshot(of: owner, app: app)
                if let balance = snapshot.consumables.first(where: { $0.productID == record.productID }),
                    balance.purchased > 0
                {
                    percentage = Int(min(1, Double(balance.consumed) / Double(balance.purchased)) * 100_000)
                }
            }
        case .autoRenewable, .nonRenewable:
            if let expires = record.expiresDate, expires > record.purchaseDate {
                let share =
                    clock().timeIntervalSince(record.purchaseDate) / expires.timeIntervalSince(record.purchaseDate)
                percentage = Int((min(1, max(0, share)) * 100_000).rounded())
            }
        case .nonConsumable, nil:
            percentage = nil
        }
        var preference = settings.refundPreference
        // Apple takes a prorated preference only with a share consumed.
        if preference == .grantProrated, (percentage ?? 0) == 0 { preference = .grantFull }
        let request = AppStoreServerAPI.ConsumptionRequest(
            customerConsented: true, sampleContentProvided: settings.sampleContentProvided,
            deliveryStatus: .delivered, consumptionPercentage: percentage, refundPreference: preference)
        struct Body: Encodable {
            var transactionId: String
            var request: AppStoreServerAPI.ConsumptionRequest
        }
        let body =
            (try? StreamingJSONEncoder().encode(Body(transactionId: transaction.transactionID, request: request)))
            .map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        let id = EventDerivation.eventID(
            bundleID: app.configuration.bundleID, type: "consumptionAnswer", subject: notification.uuid)
        let created = wallClock()
        return QueuedEvent(
            event: OutboxEvent(
                id: id, bundleID: app.configuration.bundleID,
                customerID: owner?.id ?? transaction.originalTransactionID, type: "consumptionAnswer",
                createdAt: created, body: body,
                giveUpAt: max(created, notification.signedDate.addingTimeInterval(settings.deadline))),
            endpoints: [WebhookSender.consumptionEndpoint])
    }
}
