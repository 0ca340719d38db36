public import Foundation
import IAPCore
import IAPSignedData

/// The bearer tokens the App Store Server API asks for: ES256 JWTs with the key id in the header and `iss`, `iat`,
/// `exp`, `aud` ("appstoreconnect-v1") and `bid` as claims, signed with the App Store Connect key.
///
/// A token is reused until shortly before it expires, so a busy client signs about once per ``lifetime`` instead of
/// once per request. Apple refuses a token that lives longer than 60 minutes; its own libraries make 5-minute ones.
/// The clock is an input, so tests decide what time it is.
public actor ServerAPITokens {
    /// Apple's limit on `exp - iat`.
    public static let longestLifetime: TimeInterval = 3600

    public let credentials: ServerAPICredentials
    /// How long each token is valid (at most ``longestLifetime``).
    public let lifetime: TimeInterval
    /// A token is replaced when less than this is left of it.
    public let renewalMargin: TimeInterval
    private let clock: @Sendable () -> Date
    private let signer: JWSSigner
    private var current: (token: String, expires: Date)?

    public init(
        credentials: ServerAPICredentials, lifetime: TimeInterval = 20 * 60, renewalMargin: TimeInterval = 60,
        clock: @escaping @Sendable () -> Date = Date.init
    ) {
        self.credentials = credentials
        self.lifetime = min(max(lifetime, 2 * renewalMargin), Self.longestLifetime)
        self.renewalMargin = renewalMargin
        self.clock = clock
        signer = JWSSigner(privateKey: credentials.privateKey, keyID: credentials.keyID)
    }

    /// A valid token: the current one while it has more than ``renewalMargin`` left, else a new one.
    public func token() throws(ServerAPIError) -> String {
        let now = clock()
        if let current, current.expires.timeIntervalSince(now) > renewalMargin { return current.token }
        let issued = Int64(now.timeIntervalSince1970.rounded(.down))
        let expires = issued + Int64(lifetime)
        let claims = JSONObject([
            ("iss", .string(credentials.issuerID)),
            ("iat", .number(JSONNumber(issued))),
            ("exp", .number(JSONNumber(expires))),
            ("aud", .string("appstoreconnect-v1")),
            ("bid", .string(credentials.bundleID)),
        ])
        let token: String
        do { token = try signer.sign(payload: JSONValue.object(claims).jsonBytes()) } catch {
            throw ServerAPIError(.signingFailed, "the token could not be signed: \(error)")
        }
        current = (token, Date(timeIntervalSince1970: TimeInterval(expires)))
        return token
    }
}
