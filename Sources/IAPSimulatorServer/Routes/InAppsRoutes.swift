import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import IAPCore
import IAPServer
import IAPServerAPI
import IAPSignedData
import IAPSimulator

/// The simulator's copy of Apple's App Store Server API under `/inApps`, at Apple's paths with Apple's JSON, answered
/// from the simulator's state and signed by its PKI, so server code written against Apple's API runs against
/// `iapkit serve` unchanged: transaction info, history (v1 and v2), subscription statuses, refund lookup, order lookup,
/// renewal extensions (one and mass), consumption information (v1 and v2), app account tokens, app transaction info,
/// finish, test notifications, the notification history and the Retention Messaging API.
///
/// Every request carries `Authorization: Bearer JWT`, checked as Apple does: ES256, signed by the key its `kid` names
/// among the simulated app's keys, `aud` "appstoreconnect-v1", `bid` the simulated app, not expired, living at most
/// 60 minutes, and `iss` the configured issuer when there is one. A token that fails gets 401 with no body. Refusals
/// are Apple's error bodies with Apple's codes; with ``InAppsRateLimit`` on, requests past the limit get 429.
struct InAppsRoutes: Sendable {
    let store: AppStoreSimulator
    /// The wall clock tokens are checked against (clients sign them with theirs, not with the simulated one).
    let clock: @Sendable () -> Date
    let rateLimit: InAppsRateLimit

    /// The largest request body read (a consumption request is a few hundred bytes).
    static let bodyLimit = 16 << 10
    /// Transactions, refunds and notifications per page, as Apple pages them.
    static let pageSize = 20

    func add(to router: Router<ServerRequestContext>) {
        let group = router.group("inApps")
        route(group, .get, "v1/transactions/:id") { request, context in
            let transaction = try store.transactionInfo(try Self.parameter("id", context))
            return Self.json(AppStoreServerAPI.TransactionInfoResponse(signedTransactionInfo: transaction.jws))
        }
        route(group, .get, "v1/history/:id") { request, context in
            try history(request, id: try Self.parameter("id", context), includeFinishedConsumables: false)
        }
        route(group, .get, "v2/history/:id") { request, context in
            try history(request, id: try Self.parameter("id", context), includeFinishedConsumables: true)
        }
        route(group, .get, "v1/subscriptions/:id") { request, context in
            try subscriptionStatuses(request, id: try Self.parameter("id", context))
        }
        route(group, .get, "v2/refund/lookup/:id") { request, context in
            let refunds = try store.refundedTransactions(anyTransactionID: try Self.parameter("id", context))
            let (page, next, hasMore) = try Self.page(refunds, revision: request.uri.queryParameters.get("revision"))
            return Self.json(
                AppStoreServerAPI.RefundHistoryResponse(
                    signedTransactions: page.map(\.jws), revision: next, hasMore: hasMore))
        }
        route(group, .get, "v1/lookup/:orderId") { request, context in
            let transactions = try store.order(try Self.parameter("orderId", context))
            return Self.json(
                AppStoreServerAPI.OrderLookupResponse(
                    status: transactions == nil ? 1 : 0, signedTransactions: (transactions ?? []).map(\.jws)))
        }
        route(group, .put, "v1/subscriptions/extend/:id") { request, context in
            let body = try await Self.decode(
                AppStoreServerAPI.ExtendRenewalDateRequest.self, request, refusing: Self.extensionRefusals)
            return Self.json(
                try store.extendRenewalDate(originalTransactionID: try Self.parameter("id", context), body))
        }
        route(group, .post, "v1/subscriptions/extend/mass") { request, _ in
            var refusals = Self.extensionRefusals
            refusals["productId"] = InAppsRefusal(4_000_023, "productId is required.")
            refusals["storefrontCountryCodes"] = InAppsRefusal(
                4_000_028, "storefrontCountryCodes is a list of country codes.")
            let body = try await Self.decode(
                AppStoreServerAPI.MassExtendRenewalDateRequest.self, request, refusing: refusals)
            guard !body.productId.isEmpty else { throw InAppsRefusal(4_000_023, "productId is required.") }
            _ = try store.extendRenewalDates(
                productID: body.productId, storefronts: body.storefrontCountryCodes,
                AppStoreServerAPI.ExtendRenewalDateRequest(
                    extendByDays: body.extendByDays, extendReasonCode: body.extendReasonCode,
                    requestIdentifier: body.requestIdentifier))
            return Self.json(AppStoreServerAPI.MassExtendRenewalDateResponse(requestIdentifier: body.requestIdentifier))
        }
        route(group, .get, "v1/subscriptions/extend/mass/:productId/:requestId") { request, context in
            guard
                let status = store.massExtensionStatus(
                    productID: try Self.parameter("productId", context),
                    requestIdentifier: try Self.parameter("requestId", context))
            else { throw InAppsRefusal(4_040_009, "Status request not found.") }
            return Self.json(status)
        }
        route(group, .put, "v2/transactions/consumption/:id") { request, context in
            let report = try Self.consumptionReport(
                try await Self.decode(ConsumptionInformation.self, request, refusing: Self.consumptionRefusals))
            try store.sendConsumptionInformation(try Self.parameter("id", context), report)
            return Response(status: .accepted)
        }
        route(group, .put, "v1/transactions/consumption/:id") { request, context in
            let report = try await Self.consumptionReportV1(request)
            try store.sendConsumptionInformation(try Self.parameter("id", context), report)
            return Response(status: .accepted)
        }
        route(group, .put, "v1/transactions/:id/appAccountToken") { request, context in
            let invalid = InAppsRefusal(4_000_183, "Invalid app account token: it must be a UUID.")
            let body = try await Self.decode(
                AppStoreServerAPI.UpdateAppAccountTokenRequest.self, request, refusing: ["appAccountToken": invalid])
            guard let token = UUID(uuidString: body.appAccountToken) else { throw invalid }
            try store.setAppAccountToken(originalTransactionID: try Self.parameter("id", context), token)
            return Response(status: .ok)
        }
        route(group, .get, "v1/transactions/appTransactions/:id") { request, context in
            let jws = try store.appTransaction(anyTransactionID: try Self.parameter("id", context))
            return Self.json(AppStoreServerAPI.AppTransactionInfoResponse(signedAppTransactionInfo: jws))
        }
        route(group, .post, "v1/transactions/:id/finish") { request, context in
            try store.finish(try store.transactionInfo(try Self.parameter("id", context)).transactionID)
            return Response(status: .ok)
        }
        route(group, .post, "v1/notifications/test") { _, _ in
            Self.json(
                AppStoreServerAPI.SendTestNotificationResponse(
                    testNotificationToken: try store.requestTestNotification()))
        }
        route(group, .get, "v1/notifications/test/:token") { request, context in
            let entry = try store.testNotification(token: try Self.parameter("token", context))
            return Self.json(Self.item(entry))
        }
        route(group, .post, "v1/notifications/history") { request, _ in
            try await notificationHistory(request)
        }
        addRetentionMessaging(to: group)
    }

    /// Adds a route that checks the token and the rate limit first and turns refusals into Apple's error bodies.
    func route(
        _ group: RouterGroup<ServerRequestContext>, _ method: HTTPRequest.Method, _ path: RouterPath,
        _ handler: @escaping @Sendable (Request, ServerRequestContext) async throws -> Response
    ) {
        group.on(path, method: method) { request, context -> Response in
            guard authorized(request) else { return Response(status: .unauthorized) }
            if let retryAfter = rateLimit.admit() {
                var response = Self.appleError(4_290_000, "Rate limit exceeded.")
                response.headers[.retryAfter] = String(retryAfter)
                return response
            }
            do { return try await handler(request, context) } catch let refusal as InAppsRefusal {
                return Self.appleError(refusal.code, refusal.message)
            } catch let error as SimulatorError {
                return Self.appleError(Self.appleCode(for: error), error.reason)
            } catch {
                return Self.appleError(4_000_000, "Bad request: \(error)")
            }
        }
    }

    // MARK: - History and statuses

    /// `GET /inApps/v{1,2}/history/{transactionId}`: the customer's transactions, oldest purchase first (or newest
    /// with `sort=DESCENDING`), filtered as the query asks, 20 a page; `revision` is where the next page starts.
    func history(_ request: Request, id: String, includeFinishedConsumables: Bool) throws -> Response {
        let query = request.uri.queryParameters
        let filter = try HistoryFilter(request)
        var transactions = try store.history(
            anyTransactionID: id, includeFinishedConsumables: includeFinishedConsumables
        ).filter(filter.admits)
        transactions.sort {
            ($0.payload.purchaseDate ?? .init(millisecondsSince1970: 0))
                < ($1.payload.purchaseDate ?? .init(millisecondsSince1970: 0))
        }
        if filter.descending { transactions.reverse() }
        let (page, next, hasMore) = try Self.page(transactions, revision: query.get("revision"))
        return Self.json(
            AppStoreServerAPI.HistoryResponse(
                revision: next, hasMore: hasMore, bundleId: store.configuration.bundleID,
                appAppleId: store.configuration.appAppleID, environment: store.configuration.environment.rawValue,
                signedTransactions: page.map(\.jws)))
    }

    /// `GET /inApps/v1/subscriptions/{transactionId}`: every subscription group of the customer, each with its
    /// subscriptions' status, latest transaction and renewal info; `status` (repeated) keeps only those statuses.
    func subscriptionStatuses(_ request: Request, id: String) throws -> Response {
        var wanted: Set<Int> = []
        for text in request.uri.queryParameters.getAll("status") {
            guard let status = Int(text), (1...5).contains(status) else {
                throw InAppsRefusal(4_000_031, "Invalid status: \(text).")
            }
            wanted.insert(status)
        }
        return Self.json(
            AppStoreServerAPI.StatusResponse(
                environment: store.configuration.environment.rawValue, bundleId: store.configuration.bundleID,
                appAppleId: store.configuration.appAppleID,
                data: try store.subscriptionStatuses(anyTransactionID: id, statuses: wanted)))
    }

    // MARK: - Notifications

    /// `POST /inApps/v1/notifications/history`: the notifications that match the body's filters, 20 a page; the
    /// `paginationToken` query parameter continues a listing.
    func notificationHistory(_ request: Request) async throws -> Response {
        let body = try await Self.decode(
            AppStoreServerAPI.NotificationHistoryRequest.self, request,
            refusing: [
                "startDate": InAppsRefusal(4_000_015, "Invalid start date."),
                "endDate": InAppsRefusal(4_000_016, "Invalid end date."),
            ])
        guard let start = Self.date(body.startDate) else { throw InAppsRefusal(4_000_015, "Invalid start date.") }
        guard let end = Self.date(body.endDate) else { throw InAppsRefusal(4_000_016, "Invalid end date.") }
        var query = NotificationHistoryFilter(startDate: start, endDate: end)
        query.type = body.notificationType.map(NotificationType.init(rawValue:))
        query.subtype = body.notificationSubtype.map(NotificationSubtype.init(rawValue:))
        query.transactionID = body.transactionId
        if let only = body.onlyFailures { query.onlyFailures = only }
        let entries = try store.notificationHistory(query)
        let token = request.uri.queryParameters.get("paginationToken")
        guard let offset = token.map(Self.offset(ofRevision:)) ?? 0, offset <= entries.count else {
            throw InAppsRefusal(4_000_014, "Invalid pagination token.")
        }
        let page = entries[offset..<min(offset + Self.pageSize, entries.count)]
        let next = offset + page.count
        return Self.json(
            AppStoreServerAPI.NotificationHistoryResponse(
                paginationToken: next < entries.count ? Self.revision(ofOffset: next) : nil,
                hasMore: next < entries.count, notificationHistory: page.map(Self.item)))
    }

    // MARK: - Request bodies

    /// The request body as a `T`; a member missing or of the wrong type is refused with Apple's code for that member
    /// (`refusing`), anything else that is not the expected JSON object with Apple's general bad request.
    static func decode<T: Decodable>(_ type: T.Type, _ request: Request, refusing: [String: InAppsRefusal] = [:])
        async throws -> T
    {
        try decode(T.self, from: try await bodyBytes(request), refusing: refusing)
    }

    /// The request body's bytes, within the limit.
    static func bodyBytes(_ request: Request) async throws -> [UInt8] {
        do { return try await JSONBody.bytes(of: request, limit: bodyLimit) } catch {
            throw InAppsRefusal(4_000_000, "Bad request: \(error.reason)")
        }
    }

    /// `bytes` as a `T`, refused as ``decode(_:_:refusing:)`` says.
    static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8], refusing: [String: InAppsRefusal]) throws -> T
    {
        // The hardened reader first (bounded depth and size, every malformation named), as every body is read.
        guard case .object? = try? JSONValue(jsonBytes: bytes) else {
            throw InAppsRefusal(4_000_000, "Bad request: the body is not a JSON object.")
        }
        do { return try JSONDecoder().decode(T.self, from: Data(bytes)) } catch let error as DecodingError {
            let member: String? =
                switch error {
                case .keyNotFound(let key, let context): (context.codingPath.first ?? key).stringValue
                case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
                    context.codingPath.first?.stringValue
                @unknown default: nil
                }
            if let member, let refusal = refusing[member] { throw refusal }
            throw InAppsRefusal(4_000_000, "Bad request: the body is not the expected JSON object.")
        } catch {
            throw InAppsRefusal(4_000_000, "Bad request: the body is not the expected JSON object.")
        }
    }

    /// Apple's codes for the members of a renewal extension request.
    static let extensionRefusals = [
        "extendByDays": InAppsRefusal(4_000_009, "Invalid extendByDays."),
        "extendReasonCode": InAppsRefusal(4_000_010, "Invalid extendReasonCode."),
        "requestIdentifier": InAppsRefusal(4_000_011, "Invalid requestIdentifier."),
    ]

    /// Apple's codes for the members of a consumption request (v2).
    static let consumptionRefusals = [
        "customerConsented": InAppsRefusal(4_000_035, "customerConsented must be true."),
        "sampleContentProvided": InAppsRefusal(4_000_041, "Invalid sampleContentProvided."),
        "deliveryStatus": InAppsRefusal(4_000_036, "Invalid deliveryStatus."),
        "consumptionPercentage": InAppsRefusal(4_000_000, "consumptionPercentage is 0...100000 (milli-percent)."),
        "refundPreference": InAppsRefusal(4_000_000, "Invalid refundPreference."),
    ]

    /// Apple's codes for the members of a consumption request (v1).
    static let consumptionV1Refusals: [String: InAppsRefusal] = {
        var refusals = [
            "customerConsented": InAppsRefusal(4_000_035, "customerConsented must be true."),
            "sampleContentProvided": InAppsRefusal(4_000_041, "Invalid sampleContentProvided."),
            "appAccountToken": InAppsRefusal(4_000_033, "Invalid appAccountToken."),
        ]
        for (name, code) in [
            ("consumptionStatus", 4_000_034), ("platform", 4_000_039), ("deliveryStatus", 4_000_036),
            ("accountTenure", 4_000_032), ("playTime", 4_000_040), ("lifetimeDollarsRefunded", 4_000_038),
            ("lifetimeDollarsPurchased", 4_000_037), ("userStatus", 4_000_042), ("refundPreference", 4_000_000),
        ] {
            refusals[name] = InAppsRefusal(code, "Invalid \(name).")
        }
        return refusals
    }()

    /// `ConsumptionRequest` (v2): delivery status and refund preference by name, consumption in milli-percent.
    static func consumptionReport(_ body: ConsumptionInformation) throws -> ConsumptionReport {
        guard body.customerConsented else { throw InAppsRefusal(4_000_035, "customerConsented must be true.") }
        let deliveryStatuses: [ConsumptionInformation.DeliveryStatus: Int] = [
            .delivered: 0, .qualityIssue: 1, .wrongItem: 2, .serverOutage: 3, .other: 5,
        ]
        var report = ConsumptionReport(
            customerConsented: true, consumptionStatus: 0, platform: 1,
            sampleContentProvided: body.sampleContentProvided,
            deliveryStatus: deliveryStatuses[body.deliveryStatus] ?? 5)
        if let percentage = body.consumptionPercentage {
            guard (0...100_000).contains(percentage) else {
                throw InAppsRefusal(4_000_000, "consumptionPercentage is 0...100000 (milli-percent).")
            }
            report.consumptionPercentage = percentage
            report.consumptionStatus = percentage == 0 ? 1 : percentage == 100_000 ? 3 : 2
        }
        if let preference = body.refundPreference {
            guard preference != .grantProrated || (report.consumptionPercentage ?? 0) > 0 else {
                throw InAppsRefusal(4_000_000, "Invalid refundPreference.")
            }
            report.refundPreference = preference == .decline ? 2 : 1
        }
        return report
    }

    /// `ConsumptionRequestV1`: every field a number from Apple's ranges (the simulator checks them), read as the
    /// store's `ConsumptionReport`; the app account token, which the store does not keep, must be a UUID when given.
    static func consumptionReportV1(_ request: Request) async throws -> ConsumptionReport {
        struct Token: Decodable { var appAccountToken: String? }
        let bytes = try await bodyBytes(request)
        let report = try decode(ConsumptionReport.self, from: bytes, refusing: consumptionV1Refusals)
        guard report.customerConsented else { throw InAppsRefusal(4_000_035, "customerConsented must be true.") }
        let token = try decode(Token.self, from: bytes, refusing: consumptionV1Refusals).appAccountToken
        if let token, !token.isEmpty, UUID(uuidString: token) == nil {
            throw InAppsRefusal(4_000_033, "Invalid appAccountToken.")
        }
        return report
    }

    /// A date in epoch milliseconds, as Apple's request bodies have them.
    static func date(_ milliseconds: Int64) -> Date? {
        // A range check, not abs(): abs of the smallest Int traps, and the number is the caller's.
        guard milliseconds > -(1 << 50), milliseconds < 1 << 50 else { return nil }
        return Date(millisecondsSince1970: milliseconds)
    }

    // MARK: - Answers

    static func item(_ entry: NotificationHistoryEntry) -> AppStoreServerAPI.NotificationHistoryResponseItem {
        AppStoreServerAPI.NotificationHistoryResponseItem(
            signedPayload: entry.notification.signedPayload,
            sendAttempts: entry.sendAttempts.map {
                AppStoreServerAPI.SendAttemptItem(
                    attemptDate: milliseconds($0.date), sendAttemptResult: $0.result)
            })
    }

    static func json(_ answer: some Encodable) -> Response { JSONBody.response(answer) }

    static func milliseconds(_ date: Date) -> Int64 { date.millisecondsSince1970 }

    /// A page of a list, where the next starts and whether there is more; the revision is the page's offset.
    static func page<T>(_ items: [T], revision token: String?) throws -> (ArraySlice<T>, String, Bool) {
        guard let offset = token.map(offset(ofRevision:)) ?? 0, offset <= items.count else {
            throw InAppsRefusal(4_000_005, "Invalid revision.")
        }
        let page = items[offset..<min(offset + pageSize, items.count)]
        let next = offset + page.count
        return (page, revision(ofOffset: next), next < items.count)
    }

    /// Revisions and pagination tokens are opaque to clients; here, the offset of the next page in the list.
    static func revision(ofOffset offset: Int) -> String { "p\(offset)" }

    static func offset(ofRevision revision: String) -> Int? {
        guard revision.hasPrefix("p"), revision.count <= 12, let offset = Int(revision.dropFirst()), offset >= 0
        else { return nil }
        return offset
    }

    /// A path parameter, percent-decoded.
    static func parameter(_ name: String, _ context: ServerRequestContext) throws -> String {
        let raw = try context.parameters.require(name)
        return raw.removingPercentEncoding ?? raw
    }

    /// Apple's code for a simulator refusal: its own when it has one, else by kind.
    static func appleCode(for error: SimulatorError) -> Int {
        if let code = error.appStoreErrorCode { return code }
        switch error.code {
        case .unknownTransaction: return 4_040_010
        case .unknownAccount: return 4_040_001
        case .invalidState, .invalidArgument, .unknownRequest, .duplicateRefundRequest: return 4_000_000
        default: return 5_000_001  // a failure injected into the simulated store, which clients retry
        }
    }

    /// Apple's error body; the HTTP status is the code's first three digits.
    static func appleError(_ code: Int, _ message: String) -> Response {
        JSONBody.response(
            AppStoreServerAPI.ErrorPayload(errorCode: code, errorMessage: message),
            status: HTTPResponse.Status(code: code / 10_000))
    }

    // MARK: - Tokens

    /// Whether the request carries a token Apple would accept for the simulated app.
    func authorized(_ request: Request) -> Bool {
        guard let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer "),
            let jws = try? CompactJWS(String(header.dropFirst(7))), jws.header.algorithm == "ES256",
            let keyID = jws.header.keyID, let key = store.configuration.serverAPIKeys[keyID],
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: jws.signature),
            key.isValidSignature(signature, for: jws.signingInput),
            case .object(let claims)? = try? JSONValue(jsonBytes: jws.payload)
        else { return false }
        let now = clock().timeIntervalSince1970
        guard claims["aud"] == .string("appstoreconnect-v1"),
            claims["bid"] == .string(store.configuration.bundleID),
            case .number(let expiry)? = claims["exp"], let expires = expiry.int64Value, Double(expires) > now
        else { return false }
        if let issuer = store.configuration.serverAPIIssuerID, claims["iss"] != .string(issuer) { return false }
        // Apple's Python library sends no `iat`; when present, the token may live at most 60 minutes.
        if case .number(let issuedAt)? = claims["iat"] {
            // Subtraction that reports overflow: the claims are the caller's numbers.
            guard let issued = issuedAt.int64Value,
                case let (lifetime, false) = expires.subtractingReportingOverflow(issued),
                lifetime <= 3600, Double(issued) <= now + 60
            else {
                return false
            }
        } else if Double(expires) > now + 3600 {
            return false
        }
        return true
    }
}

/// A refusal with Apple's error code, thrown by the handlers and written as Apple's error body.
struct InAppsRefusal: Error {
    let code: Int
    let message: String
    init(_ code: Int, _ message: String) {
        self.code = code
        self.message = message
    }
}

/// The filters of a transaction history request, checked as Apple checks them.
struct HistoryFilter {
    var products: Set<String>
    var types: Set<String>
    var groups: Set<String>
    var ownership: String?
    var revoked: Bool?
    var start: Int64?
    var end: Int64?
    var descending = false

    /// The history's `productType` values (Apple's Get Transaction History) and the signed `type` each stands for.
    static let productTypes: [String: ProductType] = [
        "AUTO_RENEWABLE": .autoRenewable, "NON_RENEWABLE": .nonRenewing, "CONSUMABLE": .consumable,
        "NON_CONSUMABLE": .nonConsumable,
    ]

    init(_ request: Request) throws {
        let query = request.uri.queryParameters
        products = Set(query.getAll("productId").map { String($0) })
        var types: Set<String> = []
        for value in query.getAll("productType") {
            guard let type = Self.productTypes[String(value)] else {
                throw InAppsRefusal(4_000_022, "Invalid product type.")
            }
            types.insert(type.rawValue)
        }
        self.types = types
        groups = Set(query.getAll("subscriptionGroupIdentifier").map { String($0) })
        ownership = query.get("inAppOwnershipType")
        guard ownership == nil || ownership == "PURCHASED" || ownership == "FAMILY_SHARED" else {
            throw InAppsRefusal(4_000_026, "Invalid inAppOwnershipType.")
        }
        if let text = query.get("revoked") {
            // Apple's Python library sends True/False.
            switch text.lowercased() {
            case "true": revoked = true
            case "false": revoked = false
            default: throw InAppsRefusal(4_000_030, "Invalid revoked.")
            }
        }
        if let text = query.get("startDate") {
            guard let value = Int64(text) else { throw InAppsRefusal(4_000_015, "Invalid start date.") }
            start = value
        }
        if let text = query.get("endDate") {
            guard let value = Int64(text) else { throw InAppsRefusal(4_000_016, "Invalid end date.") }
            end = value
        }
        if let start, let end, start > end { throw InAppsRefusal(4_000_013, "startDate is after endDate.") }
        let sort: String? = query.get("sort")
        guard sort == nil || sort == "ASCENDING" || sort == "DESCENDING" else {
            throw InAppsRefusal(4_000_021, "Invalid sort.")
        }
        descending = sort == "DESCENDING"
    }

    func admits(_ transaction: SimulatorTransaction) -> Bool {
        let payload = transaction.payload
        let purchased = Int64(payload.purchaseDate?.millisecondsSince1970 ?? 0)
        return (products.isEmpty || products.contains(payload.productID ?? ""))
            && (types.isEmpty || types.contains(payload.type?.rawValue ?? ""))
            && (groups.isEmpty || groups.contains(payload.subscriptionGroupIdentifier ?? ""))
            && (ownership == nil || payload.inAppOwnershipType?.rawValue == ownership)
            && (revoked == nil || (payload.revocationDate != nil) == revoked)
            && (start.map { purchased >= $0 } ?? true) && (end.map { purchased < $0 } ?? true)
    }
}
