import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import IAPSignedData
import IAPSimulator

/// The simulator's copy of Apple's App Store Server API under `/inApps`, at Apple's paths with Apple's JSON, answered
/// from the simulator's state and signed by its PKI, so server code written against Apple's API runs against
/// `iapkit serve` unchanged. Work in progress: the token check and the transaction lookup so far.
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
            guard let issued = issuedAt.int64Value, expires - issued <= 3600, Double(issued) <= now + 60 else {
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
