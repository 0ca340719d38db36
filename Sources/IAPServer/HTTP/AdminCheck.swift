import Crypto
import Foundation
import HTTPTypes
import Hummingbird

/// The guard of the operator's surfaces (`/simulator` and `/console`): open when the server listens on loopback only
/// and no admin token is set, otherwise each request must carry the token (`Authorization: Bearer TOKEN`): 401 without
/// it, 403 with another. The token is compared as a SHA-256 digest.
struct AdminCheck: Sendable {
    /// The token's SHA-256, or nil when the surfaces are open.
    private let digest: SHA256.Digest?

    init(token: String?) {
        digest = token.map { SHA256.hash(data: Data($0.utf8)) }
    }

    func check(_ request: Request) throws(APIError) {
        guard let digest else { return }
        let given = request.headers[.authorization].flatMap { header -> String? in
            header.lowercased().hasPrefix("bearer ") ? String(header.dropFirst(7)) : nil
        }
        guard let given else {
            throw APIError(401, "adminTokenMissing", "this needs the admin token (Authorization: Bearer)")
        }
        guard SHA256.hash(data: Data(given.utf8)) == digest else {
            throw APIError(403, "adminTokenInvalid", "the admin token is not this server's")
        }
    }
}
