import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import IAPSignedData
import IAPSimulator

/// The simulator's copy of Apple's App Store Server API under `/inApps`, at Apple's paths with Apple's JSON, answered
/// from the simulator's state and signed by its PKI, so server code written against Apple's API runs against
/// `iapkit serve` unchanged. Work in progress: the token check, the transaction lookup and the v2 history so far.
///
/// Every request carries `Authorization: Bearer JWT`, checked as Apple does: ES256, signed by the key its `kid` names
/// among the simulated app's keys, `aud` "appstoreconnect-v1", `bid` the simulated app, not expired, living at most
/// 60 minutes, and `iss` the configured issuer when there is one. A token that fails gets 401 with no body.
struct InAppsRoutes: Sendable {
    let store: AppStoreSimulator
    /// The wall clock tokens are checked against (clients sign them with theirs, not with the simulated one).
    let clock: @Sendable () -> Date

    func add(to router: Router<ServerRequestContext>) {
        let group = router.group("inApps")
        group.get("v2/history/:id") { request, context -> Response in
            guard authorized(request) else { return Response(status: .unauthorized) }
            return history(request, transactionID: try context.parameters.require("id"))
        }
        group.get("v1/transactions/:id") { request, context -> Response in
            guard authorized(request) else { return Response(status: .unauthorized) }
            let id = try context.parameters.require("id")
            guard !id.isEmpty, id.allSatisfy(\.isASCIIDigit) else {
                return Self.appleError(4_000_006, "Invalid transaction id.")
            }
            do {
                let transaction = try store.transaction(id)
                return JSONBody.response(["signedTransactionInfo": transaction.jws])
            } catch {
                return Self.appleError(4_040_010, "Transaction id not found.")
            }
        }
    }

    /// `GET /inApps/v2/history/{transactionId}`: the customer's transactions, oldest purchase first (or newest with
    /// `sort=DESCENDING`), filtered as the query asks, 20 a page; `revision` is where the next page starts.
    func history(_ request: Request, transactionID id: String) -> Response {
        guard !id.isEmpty, id.allSatisfy(\.isASCIIDigit) else {
            return Self.appleError(4_000_006, "Invalid transaction id.")
        }
        let query = request.uri.queryParameters
        let account: String
        var transactions: [SimulatorTransaction]
        do {
            account = try store.account(owning: id)
            transactions = try store.transactions(account: account)
        } catch {
            return Self.appleError(4_040_010, "Transaction id not found.")
        }
        let products = Set(query.getAll("productId").map { String($0) })
        let types = Set(query.getAll("productType").map { String($0) })
        let ownership = query.get("inAppOwnershipType")
        let revoked = query.get("revoked").map { $0.lowercased() == "true" }
        let start = query.get("startDate").flatMap(Int64.init)
        let end = query.get("endDate").flatMap(Int64.init)
        transactions = transactions.filter { transaction in
            let payload = transaction.payload
            let purchased = Int64(payload.purchaseDate?.millisecondsSince1970 ?? 0)
            return (products.isEmpty || products.contains(payload.productID ?? ""))
                && (types.isEmpty || types.contains(payload.type?.rawValue ?? ""))
                && (ownership == nil || payload.inAppOwnershipType?.rawValue == ownership)
                && (revoked == nil || (payload.revocationDate != nil) == revoked)
                && (start == nil || purchased >= start!) && (end == nil || purchased < end!)
        }
        transactions.sort {
            ($0.payload.purchaseDate ?? .init(millisecondsSince1970: 0))
                < ($1.payload.purchaseDate ?? .init(millisecondsSince1970: 0))
        }
        if query.get("sort") == "DESCENDING" { transactions.reverse() }
        let offset = query.get("revision").flatMap(Self.offset(ofRevision:)) ?? 0
        guard offset <= transactions.count else { return Self.appleError(4_000_005, "Invalid revision.") }
        let page = transactions[offset..<min(offset + 20, transactions.count)]
        let next = offset + page.count
        let body = JSONValue.object(
            JSONObject([
                ("revision", .string(Self.revision(ofOffset: next))),
                ("hasMore", .bool(next < transactions.count)),
                ("bundleId", .string(store.configuration.bundleID)),
                ("appAppleId", .number(JSONNumber(store.configuration.appAppleID))),
                ("environment", .string(store.configuration.environment.rawValue)),
                ("signedTransactions", .array(page.map { .string($0.jws) })),
            ]))
        return JSONBody.response(bytes: body.jsonBytes())
    }

    /// Revisions are opaque to clients; here, the offset of the next page in the filtered, sorted list.
    static func revision(ofOffset offset: Int) -> String { "p\(offset)" }

    static func offset(ofRevision revision: String) -> Int? {
        guard revision.hasPrefix("p"), let offset = Int(revision.dropFirst()), offset >= 0 else { return nil }
        return offset
    }

    /// Apple's error body; the HTTP status is the code's first three digits.
    static func appleError(_ code: Int, _ message: String) -> Response {
        let status = HTTPResponse.Status(code: code / 10_000)
        let body = JSONValue.object(
            JSONObject([
                ("errorCode", .number(JSONNumber(Int64(code)))), ("errorMessage", .string(message)),
            ]))
        return JSONBody.response(bytes: body.jsonBytes(), status: status)
    }

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

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
