public import Foundation
import IAPCatalog
import IAPCore
public import IAPEntitlements
import IAPReceipts
import IAPServerAPI
import IAPSignedData
import IAPTrust
public import Logging

/// The server's work without HTTP: verify what clients send, record it once, and answer what customers own.
///
/// Every method either returns an answer or throws a ``ServiceError`` saying what kind of refusal it is (the HTTP layer
/// picks the status); storage failures are ``ServiceError/Kind/unavailable``, never a failure of the server.
public struct ValidationService: Sendable {
    private let apps: [String: ServedApp]
    private let appOrder: [String]
    public let storage: any ServerStorage
    let clock: @Sendable () -> Date
    let wallClock: @Sendable () -> Date
    let logger: Logger
    /// Makes outbox events of what writes change, when any app has webhooks.
    let announcer: EventAnnouncer?
    /// Wakes this instance's ``WebhookSender`` when a write stored events.
    public let outboxSignal = OutboxSignal()
    /// The notifications this instance refused lately, for the console's log.
    let refusedNotifications = RefusedNotifications()

    /// - Parameters:
    ///   - apps: the apps served (bundle ids must differ).
    ///   - storage: where verified documents are kept.
    ///   - clock: the current moment, for entitlements and notification ages (a simulator's clock when simulated).
    ///   - logger: where refused claims and storage failures are reported.
    ///   - wallClock: the real moment, which events are stamped with and deliveries scheduled by (the simulator's
    ///     clock may run ahead of it).
    public init(
        apps: [AppConfiguration], storage: any ServerStorage, clock: @escaping @Sendable () -> Date,
        wallClock: @escaping @Sendable () -> Date = { Date() }, logger: Logger = Logger(label: "iapkit.server")
    ) throws(ServiceError) {
        var served: [String: ServedApp] = [:]
        for app in apps {
            guard served[app.bundleID] == nil else {
                throw ServiceError(.misconfigured, "duplicateApp", "the app \(app.bundleID) is configured twice")
            }
            served[app.bundleID] = try ServedApp(app)
        }
        self.apps = served
        self.appOrder = apps.map(\.bundleID)
        self.storage = storage
        self.clock = clock
        self.logger = logger
        self.wallClock = wallClock
        var derivations: [String: EventDerivation] = [:]
        var endpoints: [String: [String]] = [:]
        for app in apps {
            guard let webhooks = app.webhooks, !webhooks.endpoints.isEmpty else { continue }
            endpoints[app.bundleID] = webhooks.endpoints
            derivations[app.bundleID] = EventDerivation(catalog: app.catalog, clock: clock, wallClock: wallClock)
        }
        let (announcing, sending) = (derivations, endpoints)
        announcer =
            announcing.isEmpty
            ? nil
            : EventAnnouncer(
                endpoints: { sending[$0] ?? [] },
                events: { announcing[$0.customer.bundleID]?.events($0) ?? [] },
                defers: true, moments: { (wallClock(), clock()) })
    }

    /// The bundle ids served, in configuration order.
    public var bundleIDs: [String] { appOrder }

    /// The apps served, in configuration order.
    var appConfigurations: [AppConfiguration] { appOrder.compactMap { apps[$0]?.configuration } }

    /// The current moment by the server's clock.
    public var now: Date { clock() }

    // MARK: - Transactions

    /// What `POST /v1/transactions` answers.
    public struct CustomerAnswer: Sendable {
        public var customer: CustomerKey
        public var entitlements: EntitlementSnapshot
    }

    /// Verifies a signed transaction (and its renewal information), records it for the customer, and answers the
    /// customer's entitlements.
    ///
    /// The customer is the app account token the request or the transaction names (they must agree), or, without one,
    /// whoever already owns the original transaction, else the original transaction id itself.
    ///
    /// `caller` is who presented a key (nil: no key), see `authorizePost(_:app:)`.
    public func recordTransaction(
        signedTransaction jws: String, signedRenewalInfo: String?, appAccountToken: String?, caller: Caller?
    ) async throws(ServiceError) -> CustomerAnswer {
        let app = try self.app(forDocument: jws, as: TransactionPayload.self) { $0.bundleID }
        try Self.authorizePost(caller, app: app)
        let (payload, _) = try await Self.accepted("signedTransaction", counted: "transaction") {
            () async throws(SignedDataParsingError) in try await app.signedData.verifyTransaction(jws)
        }
        let transaction = try Self.stored(payload, document: jws, app: app)
        var renewals: [StoredRenewal] = []
        if let signedRenewalInfo {
            let (renewal, _) = try await Self.accepted("signedRenewalInfo", counted: "renewal") {
                () async throws(SignedDataParsingError) in
                try await app.signedData.verifyRenewalInfo(signedRenewalInfo, for: payload)
            }
            if let stored = Self.stored(renewal, document: signedRenewalInfo, app: app) { renewals.append(stored) }
        }
        let requested = try appAccountToken.map { (token) throws(ServiceError) in try Self.normalizedToken(token) }
        if let requested, let named = transaction.appAccountToken, requested != named,
            app.configuration.transferPolicy == .refuse,
            try await customer(matching: named, bundleID: app.configuration.bundleID)?.id != requested
        {
            // The transaction names another customer, who is not (an alias of) the one the request names.
            throw ServiceError(
                .conflict, "appAccountTokenMismatch",
                "the request names app account token \(requested), the signed transaction \(named)")
        }
        let claimant = requested ?? transaction.appAccountToken
        let (customer, digest) = try await record(
            PurchaseBatch(claimant: claimant, transactions: [transaction], renewals: renewals), app: app)
        return CustomerAnswer(customer: customer, entitlements: try await snapshot(of: customer, digest, app: app))
    }

    /// Records a batch for its claimant and answers the customer who owns it with their compact history now; a claim
    /// on another customer's purchase is refused (409) and logged.
    func record(_ batch: PurchaseBatch, app: ServedApp) async throws(ServiceError) -> (
        customer: CustomerKey, digest: CustomerDigest
    ) {
        var batch = batch
        batch.policy = app.configuration.transferPolicy
        let outcome: RecordOutcome
        do { outcome = try await storage.record(batch, announcing: announcer) } catch { throw .storage(error) }
        if announcer != nil { outboxSignal.nudge() }
        switch outcome {
        case .claimedByAnother(let original, let owner):
            logger.warning(
                "refused a claim on another customer's purchase",
                metadata: [
                    "originalTransactionId": "\(original)", "owner": "\(owner)",
                    "claimant": "\(batch.claimant ?? "-")",
                ])
            throw ServiceError(
                .conflict, "transactionClaimed",
                "original transaction \(original) belongs to another customer; the claim was refused and logged")
        case .recorded(let owners, let digest):
            return (
                CustomerKey(bundleID: app.configuration.bundleID, id: owners.first ?? batch.claimant ?? ""), digest
            )
        }
    }

    // MARK: - Notifications

    /// What `POST /v1/notifications` did with a notification.
    public enum NotificationOutcome: String, Sendable {
        /// Recorded and applied now.
        case applied
        /// Its UUID was recorded before: nothing changed.
        case duplicate
    }

    /// Verifies an App Store Server Notification V2 and the documents inside it, records it once by UUID, and applies
    /// what it carries (each transaction and renewal version only when newer than the stored one).
    ///
    /// - Parameters:
    ///   - signedPayload: the notification's compact JWS.
    ///   - body: the request body as it arrived, kept so state can be rebuilt from the log.
    ///   - receivedAt: when it arrived, for the age check (now by default); the local App Store's own feed passes the
    ///     moment it sent the notification, so a clock advanced by a month does not age its notifications.
    public func receiveNotification(signedPayload: String, body: String, receivedAt: Date? = nil)
        async throws(ServiceError) -> NotificationOutcome
    {
        do {
            return try await apply(signedPayload: signedPayload, body: body, receivedAt: receivedAt)
        } catch {
            // What the sender got wrong is kept for the console's log; an outage of this server's database is not.
            if [.invalid, .notFound, .refused].contains(error.kind) {
                refusedNotifications.add(body: body, receivedAt: receivedAt ?? clock(), error: error)
            }
            throw error
        }
    }

    private func apply(signedPayload: String, body: String, receivedAt: Date?) async throws(ServiceError)
        -> NotificationOutcome
    {
        let app = try self.app(forDocument: signedPayload, as: NotificationPayload.self) {
            $0.data?.bundleID ?? $0.summary?.bundleID ?? $0.appData?.bundleID
        }
        let (payload, verdict) = try await Self.accepted("signedPayload", counted: "notification") {
            () async throws(SignedDataParsingError) in try await app.signedData.verifyNotification(signedPayload)
        }
        guard let uuid = payload.notificationUUID, !uuid.isEmpty, let type = payload.notificationType,
            let signed = payload.signedDate?.date
        else {
            throw .unprocessable(
                "incompleteNotification", "the notification has no notificationUUID, notificationType or signedDate")
        }
        guard Self.isStorableID(uuid) else {
            throw .unprocessable("malformedNotification", "the notification's notificationUUID is not an id")
        }
        let now = receivedAt ?? clock()
        guard now.timeIntervalSince(signed) <= app.configuration.maximumNotificationAge else {
            ServerMetrics.notification(type.rawValue, "tooOld")
            throw .unprocessable(
                "notificationTooOld",
                "signed at \(signed) (now \(now)), older than the \(app.configuration.maximumNotificationAge) s accepted"
            )
        }
        var transactions: [StoredTransaction] = []
        var renewals: [StoredRenewal] = []
        if let transaction = verdict.verifiedTransaction {
            transactions.append(
                try Self.stored(transaction, document: payload.data?.signedTransactionInfo ?? "", app: app))
        }
        if let renewal = verdict.verifiedRenewalInfo,
            let stored = Self.stored(renewal, document: payload.data?.signedRenewalInfo ?? "", app: app)
        {
            renewals.append(stored)
        }
        var notification = StoredNotification(
            uuid: uuid, bundleID: app.configuration.bundleID, type: type.rawValue, subtype: payload.subtype?.rawValue,
            signedDate: signed, receivedAt: now, body: body,
            originalTransactionID: transactions.first?.originalTransactionID ?? renewals.first?.originalTransactionID,
            effect: transactions.isEmpty && renewals.isEmpty ? .nothingToRecord : .recorded)
        var queued: [QueuedEvent] = []
        if type == .consumptionRequest, let transaction = transactions.first,
            let answer = try await consumptionAnswer(for: transaction, notification: notification, app: app)
        {
            queued.append(answer)
            notification.effect = .answered
        }
        do {
            let applied = try await storage.record(
                notification: notification,
                applying: PurchaseBatch(claimant: nil, transactions: transactions, renewals: renewals),
                announcing: announcer, queueing: queued)
            if applied, !queued.isEmpty { outboxSignal.nudge() }
            if applied, announcer != nil { outboxSignal.nudge() }
            ServerMetrics.notification(type.rawValue, applied ? "applied" : "duplicate")
            return applied ? .applied : .duplicate
        } catch {
            throw .storage(error)
        }
    }

    // MARK: - Catching up

    /// What `POST /v1/customers/{id}/refresh` did.
    public struct RefreshAnswer: Sendable {
        public var customer: CustomerKey
        /// Distinct transactions and the renewal infos fetched from the App Store Server API (each verified here).
        public var transactionsFetched: Int
        public var renewalsFetched: Int
        public var entitlements: EntitlementSnapshot
    }

    /// Catches a customer up through the App Store Server API: fetches their whole history and their subscription
    /// statuses (asking with a transaction already stored for them), verifies every document as if it had come in a
    /// notification, and records for the customer what is newer than what is stored. For a server that missed
    /// notifications.
    public func refresh(_ customer: CustomerKey) async throws(ServiceError) -> RefreshAnswer {
        let app = try self.app(bundleID: customer.bundleID)
        guard let client = app.configuration.serverAPI else {
            throw ServiceError(
                .conflict, "refreshUnavailable",
                "no App Store Server API key is configured for \(customer.bundleID) (app.NAME.serverApi)")
        }
        let known = try await records(of: customer)
        guard let anchor = known.transactions.first?.originalTransactionID else {
            throw ServiceError(
                .notFound, "customerNotFound", "no transaction of '\(customer.id)' is known to ask about")
        }
        var documents: [String] = []
        var revision: String?
        var pages = 0
        do {
            repeat {
                let page = try await client.transactionHistoryPage(anchor, revision: revision)
                documents += page.documents
                pages += 1
                guard page.hasMore, let next = page.next, next != revision, pages < 1_000 else { break }
                revision = next
            } while true
        } catch {
            throw Self.unreachable(error)
        }
        let statuses: SubscriptionStatuses
        do { statuses = try await client.subscriptionStatuses(anchor) } catch { throw Self.unreachable(error) }
        var transactions: [StoredTransaction] = []
        var renewals: [StoredRenewal] = []
        var seen: Set<String> = []
        for jws in documents + statuses.groups.flatMap({ $0.lastTransactions.map(\.signedTransactionInfo) }) {
            let (payload, _) = try await Self.accepted("signedTransaction", counted: "transaction") {
                () async throws(SignedDataParsingError) in try await app.signedData.verifyTransaction(jws)
            }
            let stored = try Self.stored(payload, document: jws, app: app)
            // A status's last transaction is usually in the history too.
            if seen.insert(stored.transactionID).inserted { transactions.append(stored) }
        }
        for subscription in statuses.groups.flatMap(\.lastTransactions) {
            let (renewal, _) = try await Self.accepted("signedRenewalInfo", counted: "renewal") {
                () async throws(SignedDataParsingError) in
                try await app.signedData.verifyRenewalInfo(
                    subscription.signedRenewalInfo, for: subscription.transaction)
            }
            if let stored = Self.stored(renewal, document: subscription.signedRenewalInfo, app: app) {
                renewals.append(stored)
            }
        }
        // Apple answered for this customer's account: what it lists is theirs (a purchase another customer holds is
        // refused, 409, as any claim on it is).
        let (owner, digest) = try await record(
            PurchaseBatch(claimant: customer.id, transactions: transactions, renewals: renewals), app: app)
        return RefreshAnswer(
            customer: owner, transactionsFetched: transactions.count, renewalsFetched: renewals.count,
            entitlements: try await snapshot(of: owner, digest, app: app))
    }

    /// The App Store Server API refused or could not be reached: the client's request was fine, the upstream was not.
    private static func unreachable(_ error: ServerAPIError) -> ServiceError {
        ServiceError(
            .upstreamFailed, "serverAPIFailed",
            "the App Store Server API answered \(error.code)"
                + (error.appleErrorCode.map { " \($0)" } ?? "") + ": \(error.reason)")
    }

    // MARK: - Access

    /// Whether `caller` may post a document of `app`: any key of the app, or a server-wide one; without a key only
    /// when the app has no keys configured (Apple's signature is then the only credential).
    static func authorizePost(_ caller: Caller?, app: ServedApp) throws(ServiceError) {
        guard let caller else {
            guard app.configuration.accessKeys.isEmpty else {
                throw ServiceError(
                    .unauthenticated, "apiKeyMissing",
                    "\(app.configuration.bundleID) takes documents with one of its keys (Authorization: Bearer KEY)")
            }
            return
        }
        try authorize(caller, app: app, needs: .app)
    }

    /// Whether `caller` reaches `app` with the scope `needs` (an app key for what acts for one named customer, a
    /// secret key for listings and refresh).
    static func authorize(_ caller: Caller, app: ServedApp, needs: AccessKey.Scope) throws(ServiceError) {
        guard caller.reaches(app.configuration.bundleID) else {
            throw ServiceError(
                .forbidden, "keyNotForApp",
                "key \(caller.keyID) belongs to another app than \(app.configuration.bundleID)")
        }
        if needs == .secret, caller.scope == .app {
            throw ServiceError(
                .forbidden, "secretKeyRequired",
                "key \(caller.keyID) is an app key: this needs a secret key, which stays on the app's backend")
        }
    }

    /// The customer `id` names, for a caller with a key: the app is the one `bundleID` names, else the key's (or the
    /// only one served). An app key names its customer exactly, by an app account token (a UUID nobody guesses): never
    /// by an original transaction id, whether searched or one the server named a customer after (those are
    /// sequential, and an app key is public). A secret key may name one by either.
    public func customer(_ id: String, bundleID: String?, caller: Caller, needs: AccessKey.Scope)
        async throws(ServiceError) -> CustomerKey
    {
        let app = try app(bundleID: bundleID ?? caller.bundleID)
        try Self.authorize(caller, app: app, needs: needs)
        // A UUID never matches an original transaction id (those are numbers): found by it, the customer is the
        // token's own, or the one it is an alias of (an anonymous install that logged in).
        if caller.scope == .app, (try? Self.normalizedToken(id)) == nil {
            throw ServiceError(
                .notFound, "customerNotFound",
                "no customer of \(app.configuration.bundleID) is known by the app account token '\(id)'")
        }
        return try await customer(id, bundleID: app.configuration.bundleID)
    }

    // MARK: - Customers

    /// The customer `id` names (an app account token or an original transaction id) for an app, as the operator
    /// asks (no key involved).
    public func customer(_ id: String, bundleID: String?) async throws(ServiceError) -> CustomerKey {
        let app = try self.app(bundleID: bundleID)
        let key = (try? Self.normalizedToken(id)) ?? id
        let found: CustomerKey?
        do { found = try await storage.customer(matching: key, bundleID: app.configuration.bundleID) } catch {
            throw .storage(error)
        }
        guard let found else {
            throw ServiceError(
                .notFound, "customerNotFound", "no customer of \(app.configuration.bundleID) is known as '\(id)'")
        }
        return found
    }

    /// What a customer owns now.
    public func entitlements(of customer: CustomerKey) async throws(ServiceError) -> EntitlementSnapshot {
        try await snapshot(of: customer, app: try app(bundleID: customer.bundleID))
    }

    /// What a customer owned at `moment` (by the service's clock), from what is stored now: nothing signed after it
    /// counts. An event's entitlements are taken this way when it is sent.
    public func entitlements(of customer: CustomerKey, at moment: Date) async throws(ServiceError)
        -> EntitlementSnapshot
    {
        let app = try app(bundleID: customer.bundleID)
        let digest: CustomerDigest
        do { digest = try await storage.digest(of: customer) } catch { throw .storage(error) }
        if let snapshot = app.engine.snapshot(of: digest.history, at: moment) { return snapshot }
        return app.engine.snapshot(of: try await records(of: customer).history, at: moment)
    }

    /// Everything stored for a customer.
    public func records(of customer: CustomerKey) async throws(ServiceError) -> CustomerRecords {
        do { return try await storage.records(of: customer) } catch { throw .storage(error) }
    }

    /// A page of a customer's transactions in id order after `cursor` (before it, newest first).
    public func transactions(of customer: CustomerKey, after cursor: String?, limit: Int, newestFirst: Bool = false)
        async throws(ServiceError) -> [StoredTransaction]
    {
        do {
            return try await storage.transactions(of: customer, after: cursor, limit: limit, newestFirst: newestFirst)
        } catch { throw .storage(error) }
    }

    /// Records that a customer used `quantity` of a consumable, once per idempotency key; answers whether it was new
    /// and the entitlements after it.
    public func recordConsumption(
        of customer: CustomerKey, productID: String, quantity: Int, idempotencyKey: String
    ) async throws(ServiceError) -> (recorded: Bool, entitlements: EntitlementSnapshot) {
        let app = try app(bundleID: customer.bundleID)
        if let catalog = app.configuration.catalog {
            guard let product = catalog.products.first(where: { $0.id == productID }) else {
                throw .unprocessable("unknownProduct", "\(productID) is not in the app's catalog")
            }
            guard product.kind == .consumable else {
                throw .unprocessable("notConsumable", "\(productID) is not a consumable")
            }
        }
        let record = ConsumptionRecord(productID: productID, quantity: quantity, date: clock(), id: idempotencyKey)
        let recorded: Bool
        do { recorded = try await storage.record(consumption: record, for: customer) } catch { throw .storage(error) }
        return (recorded, try await snapshot(of: customer, app: app))
    }

    // MARK: - Helpers

    func snapshot(of customer: CustomerKey, app: ServedApp) async throws(ServiceError) -> EntitlementSnapshot {
        let digest: CustomerDigest
        do { digest = try await storage.digest(of: customer) } catch { throw .storage(error) }
        return try await snapshot(of: customer, digest, app: app)
    }

    /// A customer's entitlements now from their compact history, which is folded (and stored folded, unless a write
    /// changed it meanwhile) once it has grown enough; from every record for a moment before the last fold.
    func snapshot(of customer: CustomerKey, _ digest: CustomerDigest, app: ServedApp) async throws(ServiceError)
        -> EntitlementSnapshot
    {
        let now = clock()
        guard let snapshot = app.engine.snapshot(of: digest.history, at: now) else {
            return app.engine.snapshot(of: try await records(of: customer).history, at: now)
        }
        if digest.history.worthFolding() {
            let folded = app.engine.compacted(digest.history, at: now)
            do { _ = try await storage.replaceDigest(folded, of: customer, version: digest.version) } catch {
                logger.warning(
                    "a customer's history could not be folded; it stays as it is",
                    metadata: ["code": "\(error.code)", "reason": "\(error.reason)"])
            }
        }
        return snapshot
    }

    func app(bundleID: String?) throws(ServiceError) -> ServedApp {
        guard let bundleID else {
            guard appOrder.count == 1, let only = apps[appOrder[0]] else {
                throw .badRequest("bundleIdRequired", "this server serves several apps: name one with bundleId")
            }
            return only
        }
        guard let app = apps[bundleID] else {
            throw ServiceError(.notFound, "unknownApp", "this server does not serve \(bundleID)")
        }
        return app
    }

    /// The app a document is for: the only one, or the one its (not yet verified) payload names.
    private func app<Payload: PayloadModel>(
        forDocument jws: String, as type: Payload.Type, bundleID: (Payload) -> String?
    ) throws(ServiceError) -> ServedApp {
        if appOrder.count == 1, let only = apps[appOrder[0]] { return only }
        let named: String?
        do { named = bundleID(try CompactJWS(jws).decodePayload(as: type)) } catch {
            throw .badRequest(error.code.rawValue, error.reason)
        }
        guard let named, let app = apps[named] else {
            throw .unprocessable(
                "unknownApp", "the document is for \(named ?? "no app"), which this server does not serve")
        }
        return app
    }

    /// Runs one verification and counts its verdict: a document that is not one is a 400 with the parser's code,
    /// one that fails a check a 422 listing every failed check.
    private static func accepted<Payload>(
        _ field: String, counted document: String,
        _ verify: () async throws(SignedDataParsingError) -> SignedDataVerdict<Payload>
    ) async throws(ServiceError) -> (payload: Payload, verdict: SignedDataVerdict<Payload>) {
        let verdict: SignedDataVerdict<Payload>
        do { verdict = try await verify() } catch {
            ServerMetrics.verification(document, "malformed")
            throw .badRequest(error.code.rawValue, "\(field): \(error.reason)")
        }
        guard let payload = verdict.verifiedPayload else {
            ServerMetrics.verification(document, "refused")
            throw refused(field, verdict.failures)
        }
        ServerMetrics.verification(document, "valid")
        return (payload, verdict)
    }

    static func refused(_ field: String, _ failures: [VerificationFailure]) -> ServiceError {
        .unprocessable(
            "verificationFailed", "\(field) did not verify: \(failures.map(\.code.rawValue).joined(separator: ", "))",
            details: failures.map { ErrorDetail(code: $0.code.rawValue, reason: $0.reason, field: $0.field) })
    }

    static func normalizedToken(_ token: String) throws(ServiceError) -> String {
        guard let uuid = UUID(uuidString: token) else {
            throw .badRequest("invalidAppAccountToken", "appAccountToken must be a UUID")
        }
        return uuid.uuidString.lowercased()
    }

    private static func stored(_ payload: TransactionPayload, document: String, app: ServedApp) throws(ServiceError)
        -> StoredTransaction
    {
        guard let record = PurchaseRecord(payload), let id = payload.transactionID,
            let original = payload.originalTransactionID, let product = payload.productID,
            let signed = payload.signedDate?.date
        else {
            throw .unprocessable(
                "incompleteTransaction",
                "the transaction lacks an id, original id, product id, purchase date or signed date")
        }
        guard [id, original, product].allSatisfy(isStorableID),
            [payload.currency, payload.storefront].allSatisfy({ $0.map(isCode) ?? true })
        else {
            throw .unprocessable(
                "malformedTransaction",
                "the transaction's id, original id or product id is not an id (empty, over 200 characters, or with a "
                    + "control character), or its currency or storefront is not a code of letters and digits")
        }
        return StoredTransaction(
            transactionID: id, originalTransactionID: original, bundleID: app.configuration.bundleID,
            productID: product, signedDate: signed, document: document,
            appAccountToken: payload.appAccountToken.flatMap { try? normalizedToken($0) }, record: record)
    }

    /// Whether an id a signed document names can be stored and shown: 1 to 200 Unicode scalars on one line, no
    /// control character (Apple's are digits, UUIDs and product ids; a store that signs anything, the local App Store
    /// in development, could sign a NUL, which PostgreSQL's text refuses, or a megabyte).
    static func isStorableID(_ id: String) -> Bool {
        (1...200).contains(id.unicodeScalars.count) && id.isOneLineOfText
    }

    /// Whether a currency or storefront code can be stored and written into the console's CSV: 1 to 16 letters and
    /// digits (Apple's are ISO 4217 and ISO 3166-1 alpha-3).
    static func isCode(_ code: String) -> Bool { code.isIdentifier(maximum: 16, also: "") }

    private static func stored(_ payload: RenewalInfoPayload, document: String, app: ServedApp) -> StoredRenewal? {
        guard let record = RenewalRecord(payload), let signed = payload.signedDate?.date,
            isStorableID(record.originalTransactionID)
        else { return nil }
        return StoredRenewal(
            bundleID: app.configuration.bundleID, originalTransactionID: record.originalTransactionID,
            signedDate: signed, document: document, record: record)
    }
}
