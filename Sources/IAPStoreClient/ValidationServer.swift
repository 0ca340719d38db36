public import Foundation
import IAPEntitlements
import IAPSignedData

/// The app's own validation server (`iapkit serve`), SwiftyReceiptValidator's way: the device sends what the store
/// handed out and unlocks from the server's verdict, never from its own reading. `verifyReceipt` carries the app's
/// shared secret as Apple's shape does (`password`) when the server is configured with one; the other documents need
/// none.
public struct ValidationServer: Sendable {
    /// What the device sends.
    public enum Document: Hashable, Sendable {
        /// Each signed transaction to `POST /v1/transactions`; the server records it and answers the customer's
        /// entitlements (consumable balances live on the server).
        case signedTransaction
        /// The app receipt to `POST /v1/receipts`; recorded and answered the same way.
        case receipt
        /// The app receipt to `POST /verifyReceipt`, Apple's retired shape that SwiftyReceiptValidator speaks; the
        /// device runs the engine over the server's `latest_receipt_info` and `pending_renewal_info`. With
        /// `excludeOldTransactions` the server sends only the latest period of each subscription.
        case verifyReceipt(excludeOldTransactions: Bool)
    }

    public let document: Document
    /// Whether sandbox documents are accepted: `verifyReceipt` then retries a receipt that production calls a sandbox
    /// one (21007) at `/sandbox/verifyReceipt`, as Apple advised. When false that is refused as
    /// ``StoreError/Code/sandboxReceiptInProduction``.
    public let acceptsSandbox: Bool
    /// The app's shared secret, sent with `verifyReceipt` as `password` (a server configured with one refuses a
    /// receipt without it: 21004).
    public let sharedSecret: String?
    let http: JSONHTTPClient

    /// A server at `url`.
    /// - Parameters:
    ///   - url: where the server listens.
    ///   - apiKey: the app's app key (`app.NAME.appKeys`), sent as `Authorization: Bearer`: it records this device's
    ///     purchases and reads its own customer, and is safe to ship in the app (never ship a secret key).
    ///   - document: what the device sends.
    ///   - acceptsSandbox: whether sandbox documents are accepted.
    ///   - sharedSecret: the app's shared secret, sent with `verifyReceipt`.
    ///   - transport: how requests are sent; `URLSession` by default.
    ///   - answerVerification: the server's answer keys: with them, every answer the device unlocks from must be
    ///     signed by the server for this request (``AnswerVerification``).
    ///   - timeout: the limit of each request.
    public init(
        url: URL, apiKey: String? = nil, document: Document = .signedTransaction, acceptsSandbox: Bool = true,
        sharedSecret: String? = nil, transport: any HTTPTransport = URLSessionTransport(),
        timeout: Duration = .seconds(10), answerVerification: AnswerVerification? = nil
    ) {
        self.document = document
        self.acceptsSandbox = acceptsSandbox
        self.sharedSecret = sharedSecret
        http = JSONHTTPClient(
            baseURL: url, headers: apiKey.map { [("Authorization", "Bearer \($0)")] } ?? [], timeout: timeout,
            unreachable: .serverUnreachable, transport: transport, answers: answerVerification)
    }

    // MARK: - The Store's three calls

    /// The server's verdict once it has seen `jws` (or the receipt that contains it).
    func check(_ jws: String, appAccountToken: UUID?, backend: any StoreBackend, state: VerifiedState)
        async throws(StoreError) -> VerifiedState
    {
        let id = (try? CompactJWS(jws).decodePayload(as: TransactionPayload.self))?.transactionID
        switch document {
        case .signedTransaction:
            // Always claimed: by the app's token, the customer the server named before, or a token made now (which
            // the server's answer then keeps as this device's customer).
            let owner = Self.owner(appAccountToken, state) ?? UUID()
            let body = TransactionBody(signedTransaction: jws, appAccountToken: owner.uuidString)
            return try await entitlements("POST", "/v1/transactions", body, state: state)
        case .receipt:
            let next = try await postReceipt(
                backend: backend, appAccountToken: Self.owner(appAccountToken, state), state: state)
            try Self.require(id, in: next.serverSnapshot.map(Self.transactionIDs) ?? [])
            return next
        case .verifyReceipt(let exclude):
            let next = try await verifyReceipt(backend: backend, excludeOld: exclude, state: state)
            try Self.require(id, in: Set(next.history.records.map(\.transactionID)))
            return next
        }
    }

    /// Who the server should record a purchase for: the app's account token, or else the customer the server named in
    /// an earlier answer, so every purchase of this device lands with one customer instead of one made up for each.
    static func owner(_ appAccountToken: UUID?, _ state: VerifiedState) -> UUID? {
        appAccountToken ?? state.serverCustomerID.flatMap(UUID.init(uuidString:))
    }

    /// The latest transaction of each purchase (by original transaction: a subscription's renewals and the plans it
    /// moved between are one), oldest purchase first: what the server is told at each reconciliation. Revoked ones
    /// stay (the server has to hear of refunds). Read from the documents' own claims: the server verifies them, and
    /// is sent a document that cannot be read as it is, to say what is wrong with it.
    static func latestOfEachPurchase(_ documents: [String]) -> [String] {
        var latest: [String: (jws: String, purchased: Date, signed: Date)] = [:]
        var unreadable: [String] = []
        for jws in documents {
            guard let claim = try? CompactJWS(jws).decodePayload(as: TransactionPayload.self),
                let id = claim.originalTransactionID ?? claim.transactionID
            else {
                unreadable.append(jws)
                continue
            }
            let entry = (
                jws: jws, purchased: claim.purchaseDate?.date ?? .distantPast,
                signed: claim.signedDate?.date ?? .distantPast
            )
            if let known = latest[id], (known.purchased, known.signed) >= (entry.purchased, entry.signed) { continue }
            latest[id] = entry
        }
        return latest.values.sorted { ($0.purchased, $0.jws) < ($1.purchased, $1.jws) }.map(\.jws) + unreadable
    }

    /// The server's verdict on everything the store says the customer has.
    func reconcile(
        backend: any StoreBackend, appAccountToken: UUID?, state: VerifiedState
    ) async throws(StoreError) -> VerifiedState {
        switch document {
        case .signedTransaction:
            var next = state
            // The server dedups: posting what it has already seen changes nothing and answers the same snapshot.
            // Consumables the device accepted go too: the store forgets them once finished.
            let ledger = state.ledger.purchasesToSend
            let latest = Self.latestOfEachPurchase(try await backend.allTransactions()) + ledger
            // Posted unclaimed while this device knows no customer: a new install adopts the customer who owns its
            // purchases already.
            for jws in latest {
                let body = TransactionBody(
                    signedTransaction: jws, appAccountToken: Self.owner(appAccountToken, next)?.uuidString)
                next = try await entitlements("POST", "/v1/transactions", body, state: next)
            }
            // Nobody owned them (the server named each after its original transaction): claim them all for one new
            // customer, so they answer together from now on.
            if !latest.isEmpty, Self.owner(appAccountToken, next) == nil {
                let token = UUID().uuidString
                for jws in latest {
                    next = try await entitlements(
                        "POST", "/v1/transactions", TransactionBody(signedTransaction: jws, appAccountToken: token),
                        state: next)
                }
            }
            next.ledger.sent(ledger)
            guard latest.isEmpty else { return try await sendConsumptions(next, backend: backend) }
            // Nothing to post: ask the server what it holds for this customer; a customer it has never seen owns
            // nothing.
            guard let customer = state.serverCustomerID ?? appAccountToken?.uuidString.lowercased() else {
                next.serverSnapshot = EntitlementSnapshot(moment: try await backend.now())
                return next
            }
            do {
                let answer = try await entitlements(
                    "GET", "/v1/customers/\(Self.escaped(customer))/entitlements", nil, state: next)
                return try await sendConsumptions(answer, backend: backend)
            } catch  where error.code == .serverRefused && error.reason.hasPrefix("customerNotFound") {
                next.serverSnapshot = EntitlementSnapshot(moment: try await backend.now())
                return next
            }
        case .receipt:
            return try await postReceipt(
                backend: backend, appAccountToken: nil, state: state)
        case .verifyReceipt(let exclude):
            return try await verifyReceipt(
                backend: backend, excludeOld: exclude, state: state)
        }
    }

    /// Sends the server the consumptions the device recorded that it has not recorded yet (made in another validation
    /// mode), each under its own idempotency key; one the server refuses (more than it counts) stays unsent.
    private func sendConsumptions(_ state: VerifiedState, backend: any StoreBackend) async throws(StoreError)
        -> VerifiedState
    {
        var next = state
        for use in state.history.consumptions {
            guard let id = use.id, !next.ledger.consumptionsOnServer.contains(id), next.serverCustomerID != nil
            else { continue }
            do {
                next = try await consume(
                    use.productID, quantity: use.quantity, idempotencyKey: id, at: use.date, state: next)
                next.ledger.consumptionsOnServer.insert(id)
            } catch  where error.code == .serverRefused {
                continue
            }
        }
        return next
    }

    /// Records a consumption on the server (signed transactions and receipts recorded there); with `verifyReceipt`
    /// the server keeps no state, so the device records it, dated `moment` (the store's clock).
    func consume(_ productID: String, quantity: Int, idempotencyKey: String, at moment: Date, state: VerifiedState)
        async throws(StoreError) -> VerifiedState
    {
        guard document != .verifyReceipt(excludeOldTransactions: true),
            document != .verifyReceipt(excludeOldTransactions: false)
        else {
            var next = state
            next.history.consumptions.append(
                ConsumptionRecord(productID: productID, quantity: quantity, date: moment, id: idempotencyKey))
            return next
        }
        guard let customer = state.serverCustomerID else {
            throw StoreError(.invalidState, "the server does not know this customer yet")
        }
        struct Answer: Decodable {
            var customerId: String
            var entitlements: EntitlementSnapshot
        }
        let answer = try await http.decode(
            Answer.self, "POST", "/v1/customers/\(Self.escaped(customer))/consumptions",
            body: ConsumptionBody(productId: productID, quantity: quantity, idempotencyKey: idempotencyKey))
        var next = state
        next.serverSnapshot = answer.entitlements
        next.serverCustomerID = answer.customerId
        return next
    }

    /// What the server holds for this device's customer now (`GET /v1/customers/{id}/entitlements`); nil when the
    /// device has no snapshot from the server (verifyReceipt keeps the records itself) or knows no customer.
    func current(appAccountToken: UUID?, state: VerifiedState) async throws(StoreError) -> VerifiedState? {
        guard state.serverSnapshot != nil,
            let customer = state.serverCustomerID ?? appAccountToken?.uuidString.lowercased()
        else { return nil }
        return try await entitlements("GET", "/v1/customers/\(Self.escaped(customer))/entitlements", nil, state: state)
    }

    /// Logs this device's customer in as `user` (`POST /v1/customers/{id}/login`): an anonymous customer's purchases
    /// join the user's on the server, and the server's answer becomes the device's. A device the server knows no
    /// customer of has nothing to merge: its next purchase is claimed for `user`. verifyReceipt keeps no customers.
    func logIn(_ user: UUID, state: VerifiedState) async throws(StoreError) -> VerifiedState {
        var next = state
        guard document != .verifyReceipt(excludeOldTransactions: true),
            document != .verifyReceipt(excludeOldTransactions: false)
        else { return next }
        guard let customer = state.serverCustomerID else {
            next.serverCustomerID = user.uuidString.lowercased()
            return next
        }
        struct Body: Encodable { var appUserId: String }
        return try await entitlements(
            "POST", "/v1/customers/\(Self.escaped(customer))/login", Body(appUserId: user.uuidString), state: state)
    }

    // MARK: - Requests

    /// `POST /v1/transactions`.
    private struct TransactionBody: Encodable {
        var signedTransaction: String
        var appAccountToken: String?
    }

    /// `POST /v1/receipts`.
    private struct ReceiptBody: Encodable {
        var receiptData: String
        var appAccountToken: String?
    }

    /// `POST /v1/customers/{id}/consumptions`.
    private struct ConsumptionBody: Encodable {
        var productId: String
        var quantity: Int
        var idempotencyKey: String
    }

    /// `POST /verifyReceipt`, Apple's shape.
    private struct LegacyReceiptBody: Encodable {
        var receiptData: String
        var password: String?
        var excludeOldTransactions: Bool

        enum CodingKeys: String, CodingKey {
            case receiptData = "receipt-data"
            case password
            case excludeOldTransactions = "exclude-old-transactions"
        }
    }

    private struct EntitlementsAnswer: Decodable {
        var customerId: String?
        var entitlements: EntitlementSnapshot
    }

    private func entitlements(_ method: String, _ path: String, _ body: (any Encodable)?, state: VerifiedState)
        async throws(StoreError) -> VerifiedState
    {
        let (status, bytes) = try await http.send(method, path, body: body)
        guard (200..<300).contains(status) else { throw Self.refusal(status: status, bytes) }
        let answer: EntitlementsAnswer
        do { answer = try JSONHTTPClient.decoder.decode(EntitlementsAnswer.self, from: Data(bytes)) } catch {
            throw StoreError(.serverUnreachable, "\(path) answered with a body that is not entitlements: \(error)")
        }
        var next = state
        next.serverSnapshot = answer.entitlements
        next.serverCustomerID = answer.customerId ?? state.serverCustomerID
        return next
    }

    /// The receipt on disk (a new one comes from the App Store only with a restore's sync).
    private func receipt(_ backend: any StoreBackend) async throws(StoreError) -> String {
        guard let bytes = try await backend.appReceipt() else {
            throw StoreError(
                .failedVerification, "the device has no receipt yet (restoring purchases asks the App Store for one)")
        }
        return Data(bytes).base64EncodedString()
    }

    private func postReceipt(
        backend: any StoreBackend, appAccountToken: UUID?, state: VerifiedState
    ) async throws(StoreError) -> VerifiedState {
        let body = ReceiptBody(
            receiptData: try await receipt(backend),
            appAccountToken: appAccountToken?.uuidString)
        return try await entitlements("POST", "/v1/receipts", body, state: state)
    }

    private func verifyReceipt(
        backend: any StoreBackend, excludeOld: Bool, state: VerifiedState
    ) async throws(StoreError) -> VerifiedState {
        let body = LegacyReceiptBody(
            receiptData: try await receipt(backend), password: sharedSecret,
            excludeOldTransactions: excludeOld)
        var answer = try await legacyAnswer("/verifyReceipt", body)
        if answer.status == 21007, acceptsSandbox { answer = try await legacyAnswer("/sandbox/verifyReceipt", body) }
        switch answer.status {
        case 0, 21006: break
        case 21007:
            throw StoreError(.sandboxReceiptInProduction, answer.message ?? "a sandbox receipt sent to production")
        case 21002, 21003:
            let wrongApp =
                answer.iapkitError?.code == "unknownApp" || answer.message?.contains("bundleIdMismatch") == true
            let code: StoreError.Code = wrongApp ? .wrongBundle : .failedVerification
            throw StoreError(code, answer.message ?? "the server did not authenticate the receipt (\(answer.status))")
        case 21004:
            throw StoreError(
                .serverRefused,
                "sharedSecretMismatch: \(answer.message ?? "the shared secret is not the app's") (21004)")
        case 21100...21199, 21005, 21009:
            throw StoreError(.serverUnreachable, answer.message ?? "the server could not answer now (\(answer.status))")
        default:
            throw StoreError(.serverRefused, "status \(answer.status): \(answer.message ?? "refused")")
        }
        var history = PurchaseHistory(
            consumptions: state.history.consumptions,
            originalAppVersion: answer.receipt?.originalApplicationVersion ?? state.history.originalAppVersion)
        for entry in (answer.latestReceiptInfo ?? []) + (answer.receipt?.inApp ?? []) {
            if let record = entry.record { history.records.merge(record) }
        }
        history.renewals = (answer.pendingRenewalInfo ?? []).compactMap(\.record)
        var next = state
        next.history = history
        next.serverSnapshot = nil
        return next
    }

    private func legacyAnswer(_ path: String, _ body: LegacyReceiptBody) async throws(StoreError)
        -> LegacyReceiptAnswer
    {
        let (status, bytes) = try await http.send("POST", path, body: body)
        guard status == 200 else { throw Self.refusal(status: status, bytes) }
        do { return try JSONDecoder().decode(LegacyReceiptAnswer.self, from: Data(bytes)) } catch {
            throw StoreError(.serverUnreachable, "\(path) answered with a body that is not Apple's shape")
        }
    }

    // MARK: - Errors

    /// A refusal by the server as a typed error: another app's document, a sandbox document in production, a
    /// forgery, or something else the server refused.
    static func refusal(status: Int, _ bytes: [UInt8]) -> StoreError {
        struct Body: Decodable {
            struct Detail: Decodable { var code: String }
            var code: String
            var message: String?
            var details: [Detail]?
        }
        guard let body = try? JSONDecoder().decode(Body.self, from: Data(bytes)) else {
            return StoreError(.serverUnreachable, "the server answered HTTP \(status) without an error body")
        }
        let message = "\(body.code): \(body.message ?? "HTTP \(status)")"
        let details = Set((body.details ?? []).map(\.code))
        if body.code == "unknownApp" || details.contains("bundleIdMismatch") {
            return StoreError(.wrongBundle, message)
        }
        if details.contains("environmentMismatch") { return StoreError(.sandboxReceiptInProduction, message) }
        if status >= 500 { return StoreError(.serverUnreachable, message) }
        if body.code == "verificationFailed" { return StoreError(.failedVerification, message) }
        return StoreError(.serverRefused, message)
    }

    static func require(_ id: String?, in ids: Set<String>) throws(StoreError) {
        guard let id, ids.contains(id) else {
            throw StoreError(.failedVerification, "the server's verdict does not include transaction \(id ?? "?")")
        }
    }

    static func transactionIDs(_ snapshot: EntitlementSnapshot) -> Set<String> {
        var ids = Set(snapshot.nonConsumables.map(\.transactionID))
        ids.formUnion(snapshot.consumables.flatMap { $0.history.compactMap(\.transactionID) })
        ids.formUnion(snapshot.subscriptionGroups.compactMap(\.currentTransactionID))
        ids.formUnion(snapshot.subscriptionGroups.flatMap(\.upgradedTransactionIDs))
        ids.formUnion(snapshot.nonRenewingSubscriptions.flatMap(\.transactionIDs))
        ids.formUnion(snapshot.revokedTransactions.map(\.transactionID))
        return ids
    }

    static func escaped(_ id: String) -> String {
        id.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? id
    }
}
