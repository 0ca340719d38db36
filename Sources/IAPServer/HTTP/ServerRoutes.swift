import Foundation
import HTTPTypes
import Hummingbird
import IAPEntitlements
import IAPSignedData

/// The routes of the validation API, over one ``ValidationService``. The document routes read a key when one is
/// presented; the customer routes need one (``AccessKeyMiddleware``); what each key reaches is the service's rule.
struct ServerRoutes: Sendable {
    let service: ValidationService
    let configuration: ServerConfiguration
    var additions: [any ServerAddition] = []
    /// What `/health` says of the database, within a second.
    let databaseProbe: StorageCountsProbe
    /// Readiness's check, answered within 2 s.
    let readinessProbe: StorageProbe<Bool>

    init(service: ValidationService, configuration: ServerConfiguration, additions: [any ServerAddition] = []) {
        self.service = service
        self.configuration = configuration
        self.additions = additions
        databaseProbe = StorageCountsProbe(storage: service.storage)
        readinessProbe = StorageProbe(reaching: service.storage, patience: .seconds(2))
    }

    func add(to router: Router<ServerRequestContext>) {
        let ring = KeyRing(serverKeys: configuration.apiKeys, apps: service.appConfigurations)
        router.get("/health") { _, _ in await health() }
        router.get("/ready") { _, _ in try await ready() }
        // For balancers that probe with HEAD: the same answers' statuses, without a body (an error's would be sent).
        router.head("/health") { _, _ in
            _ = await health()
            return HTTPResponse.Status.ok
        }
        router.head("/ready") { _, _ in
            (try? await ready()) == nil ? HTTPResponse.Status.serviceUnavailable : .ok
        }
        let signing = AnswerSigningMiddleware(
            signer: configuration.answerSigner, bodyLimit: configuration.maximumBodySize)
        let documents = router.group("v1").add(middleware: AccessKeyMiddleware(ring: ring, required: false))
            .add(middleware: signing)
        documents.post("transactions") { request, context in try await transactions(request, context.caller) }
        documents.post("receipts") { request, context in try await receipts(request, context.caller) }
        // Apple's shape: a key when the client can send one (an app with keys records only for keyed callers).
        let legacy = router.group().add(middleware: AccessKeyMiddleware(ring: ring, required: false))
            .add(middleware: signing)
        legacy.post("/verifyReceipt") { request, context in
            try await verifyReceipt(request, endpoint: .production, context.caller)
        }
        legacy.post("/sandbox/verifyReceipt") { request, context in
            try await verifyReceipt(request, endpoint: .sandbox, context.caller)
        }
        router.post("/v1/notifications") { request, _ in try await notifications(request) }
        let customers = router.group("v1/customers").add(middleware: AccessKeyMiddleware(ring: ring, required: true))
            .add(middleware: signing)
        customers.get(":id/entitlements") { request, context in
            try await entitlements(request, id: try context.parameters.require("id"), context.caller)
        }
        customers.get(":id/transactions") { request, context in
            try await customerTransactions(request, id: try context.parameters.require("id"), context.caller)
        }
        customers.post(":id/consumptions") { request, context in
            try await consumptions(request, id: try context.parameters.require("id"), context.caller)
        }
        customers.post(":id/login") { request, context in
            let body = try RequestDocument(
                bytes: try await JSONBody.bytes(of: request, limit: configuration.maximumBodySize),
                allowed: ["appUserId", "bundleId"])
            let answer = try await service.logIn(
                try context.parameters.require("id"), as: try body.requiredString("appUserId"),
                bundleID: try body.string("bundleId"), caller: try Self.keyed(context.caller))
            return Answers.Login(
                customerId: answer.customer.id, bundleId: answer.customer.bundleID, merged: answer.merged,
                movedOriginalTransactionIds: answer.moved,
                entitledProductIds: answer.entitlements.entitledProductIDs.sorted(),
                entitlements: answer.entitlements)
        }
        customers.post(":id/refresh") { request, context in
            let customer = try await service.customer(
                try context.parameters.require("id"), bundleID: request.uri.queryParameters.get("bundleId"),
                caller: try Self.keyed(context.caller), needs: .secret)
            let answer = try await service.refresh(customer)
            return Answers.Refresh(
                customer: answer.customer.id, bundleId: answer.customer.bundleID,
                transactionsFetched: answer.transactionsFetched, renewalsFetched: answer.renewalsFetched,
                entitlements: Answers.Entitlements(answer.customer, answer.entitlements))
        }
    }

    // MARK: - Handlers (each returns its answer; the context's encoder writes it, ErrorMiddleware any refusal)

    /// Liveness: this process serves requests (200 whatever the database does). The counts come when the database
    /// answers; `database` says whether it did.
    func health() async -> Answers.Health {
        let counts = await databaseProbe.answer()
        let said = additions.compactMap(\.health)
        return Answers.Health(
            status: "ok", apps: service.bundleIDs, database: counts == nil ? "unreachable" : "reachable",
            storage: counts,
            additions: said.isEmpty ? nil : Dictionary(said.map { ($0.name, $0.status) }) { first, _ in first })
    }

    /// Readiness: whether this instance can reach its database now; 503 `storageUnavailable` when it cannot or does
    /// not tell within 2 s (every pooled connection held by statements a lock keeps waiting, a frozen database), so a
    /// load balancer sends requests elsewhere. An instance whose pool stays busy past 2 s says so too, as a probe with
    /// a short timeout would conclude anyway: under a burst that holds every instance's pool, all of them do.
    func ready() async throws -> Answers.Ready {
        guard await readinessProbe.answer() == true else {
            throw APIError(503, "storageUnavailable", "the database is unavailable; try again shortly")
        }
        return Answers.Ready(ready: true)
    }

    /// The caller of a route behind a required key (the middleware refused a request without one).
    static func keyed(_ caller: Caller?) throws(APIError) -> Caller {
        guard let caller else { throw APIError(401, "apiKeyMissing", "send a key: Authorization: Bearer KEY") }
        return caller
    }

    func transactions(_ request: Request, _ caller: Caller?) async throws -> Answers.Entitlements {
        let body = try RequestDocument(
            bytes: try await JSONBody.bytes(of: request, limit: configuration.maximumBodySize),
            allowed: ["signedTransaction", "signedRenewalInfo", "appAccountToken"])
        let answer = try await service.recordTransaction(
            signedTransaction: try body.requiredString("signedTransaction"),
            signedRenewalInfo: try body.string("signedRenewalInfo"),
            appAccountToken: try body.string("appAccountToken"), caller: caller)
        return Answers.Entitlements(answer.customer, answer.entitlements)
    }

    func receipts(_ request: Request, _ caller: Caller?) async throws -> Answers.Entitlements {
        let body = try RequestDocument(
            bytes: try await JSONBody.bytes(of: request, limit: configuration.maximumBodySize),
            allowed: ["receiptData", "appAccountToken"])
        let answer = try await service.recordReceipt(
            try body.requiredString("receiptData"), appAccountToken: try body.string("appAccountToken"), caller: caller)
        return Answers.Entitlements(
            customerID: answer.customer?.id, bundleID: answer.customer?.bundleID ?? service.bundleIDs[0],
            answer.entitlements)
    }

    /// Apple's `verifyReceipt` shape: always 200 with a `status`, whatever the content type (Apple's clients send
    /// several); only a body past the size limit is refused at the HTTP level (413). The service writes the JSON.
    func verifyReceipt(_ request: Request, endpoint: AppStoreEnvironment, _ caller: Caller?) async throws -> Response {
        let bytes = try await JSONBody.bytes(of: request, limit: configuration.maximumBodySize, requireJSON: false)
        return JSONBody.response(
            bytes: await service.verifyReceiptAnswer(body: bytes, endpoint: endpoint, caller: caller))
    }

    func notifications(_ request: Request) async throws -> Answers.Notification {
        let bytes = try await JSONBody.bytes(of: request, limit: configuration.maximumBodySize)
        let body = try RequestDocument(bytes: bytes, allowed: ["signedPayload"])
        let outcome = try await service.receiveNotification(
            signedPayload: try body.requiredString("signedPayload"), body: String(decoding: bytes, as: UTF8.self))
        return Answers.Notification(status: outcome.rawValue)
    }

    func entitlements(_ request: Request, id: String, _ caller: Caller?) async throws -> Answers.Entitlements {
        let customer = try await service.customer(
            id, bundleID: request.uri.queryParameters.get("bundleId"), caller: try Self.keyed(caller), needs: .app)
        return Answers.Entitlements(customer, try await service.entitlements(of: customer))
    }

    func customerTransactions(_ request: Request, id: String, _ caller: Caller?) async throws -> Answers.Transactions {
        let customer = try await service.customer(
            id, bundleID: request.uri.queryParameters.get("bundleId"), caller: try Self.keyed(caller), needs: .secret)
        let limit = try request.integerQuery("limit", in: 1...1_000) ?? 100
        let cursor: String? = request.uri.queryParameters.get("cursor").map { String($0) }
        if let cursor, cursor.isEmpty || cursor.utf8.count > 64 {
            throw APIError.badRequest("invalidQuery", "'cursor' is the 'next' of the previous page")
        }
        let page = try await service.transactions(of: customer, after: cursor, limit: limit + 1)
        return Answers.Transactions(customer, page, limit: limit)
    }

    func consumptions(_ request: Request, id: String, _ caller: Caller?) async throws
        -> EditedResponse<Answers.Consumption>
    {
        let body = try RequestDocument(
            bytes: try await JSONBody.bytes(of: request, limit: configuration.maximumBodySize),
            allowed: ["productId", "quantity", "idempotencyKey", "bundleId"])
        let customer = try await service.customer(
            id, bundleID: try body.string("bundleId"), caller: try Self.keyed(caller), needs: .app)
        let productID = try body.requiredString("productId")
        let key = try body.requiredString("idempotencyKey")
        guard key.utf8.count <= 200 else {
            throw APIError.badRequest("invalidField", "'idempotencyKey' is longer than 200 bytes")
        }
        let quantity = Int(try body.integer("quantity", in: 1...1_000_000) ?? 1)
        let result = try await service.recordConsumption(
            of: customer, productID: productID, quantity: quantity, idempotencyKey: key)
        return EditedResponse(
            status: result.recorded ? .created : .ok,
            response: Answers.Consumption(
                recorded: result.recorded, customerId: customer.id,
                balance: result.entitlements.balance(of: productID), entitlements: result.entitlements))
    }
}
