import Crypto
import Foundation
import HTTPTypes
import Hummingbird

/// The API-key check of the customer endpoints: 401 without a key, 403 with a wrong one. Keys are compared as SHA-256
/// digests, so the time taken does not say how much of a guess was right.
struct APIKeyCheck: Sendable {
    private let digests: [SHA256.Digest]

    init(keys: [String]) {
        digests = keys.filter { !$0.isEmpty }.map { SHA256.hash(data: Array($0.utf8)) }
    }

    func check(_ request: Request) throws(APIError) {
        let presented: String?
        if let authorization = request.headers[.authorization], authorization.lowercased().hasPrefix("bearer ") {
            presented = String(authorization.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        } else if let name = HTTPField.Name("X-API-Key") {
            presented = request.headers[name]
        } else {
            presented = nil
        }
        guard let presented, !presented.isEmpty else {
            throw APIError(401, "apiKeyMissing", "send an API key: Authorization: Bearer KEY, or X-API-Key: KEY")
        }
        let digest = SHA256.hash(data: Array(presented.utf8))
        var matched = false
        for known in digests where known == digest { matched = true }
        guard matched else { throw APIError(403, "apiKeyInvalid", "the API key is not one this server accepts") }
    }
}
