import Crypto
import Foundation
import IAPServerAPI
import IAPSignedData
import IAPTestSupport
import Synchronization
import Testing

/// The bearer tokens: Apple's header and claims, a signature the key's public half verifies, reuse until the renewal
/// margin, and Apple's 60-minute ceiling.
@Suite struct ServerAPITokensTests {
    static let key = TestJWS.key("server-api")
    static let credentials = ServerAPICredentials(
        keyID: "ABC123DEFG", issuerID: "57246542-96fe-1a63-e053-0824d011072a", bundleID: "com.example.florist",
        privateKey: key)

    /// A clock the test moves.
    final class TestClock: Sendable {
        private let moment = Mutex(Date(timeIntervalSince1970: 1_767_225_600))
        var now: Date { moment.withLock { $0 } }
        func advance(by seconds: TimeInterval) { moment.withLock { $0 += seconds } }
    }

    static func claims(_ token: String) throws -> [String: Any] {
        let jws = try CompactJWS(token)
        return try #require(try JSONSerialization.jsonObject(with: Data(jws.payload)) as? [String: Any])
    }

    @Test func aTokenHasApplesHeaderAndClaimsAndVerifies() async throws {
        let clock = TestClock()
        let tokens = ServerAPITokens(credentials: Self.credentials, lifetime: 300, clock: { clock.now })
        let token = try await tokens.token()
        let jws = try CompactJWS(token)
        #expect(jws.header.algorithm == "ES256")
        #expect(jws.header.keyID == "ABC123DEFG")
        #expect(jws.header.fields["typ"] == .string("JWT"))
        let claims = try Self.claims(token)
        #expect(claims["iss"] as? String == "57246542-96fe-1a63-e053-0824d011072a")
        #expect(claims["aud"] as? String == "appstoreconnect-v1")
        #expect(claims["bid"] as? String == "com.example.florist")
        #expect(claims["iat"] as? Int == 1_767_225_600)
        #expect(claims["exp"] as? Int == 1_767_225_900)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: jws.signature)
        #expect(Self.key.publicKey.isValidSignature(signature, for: jws.signingInput))
    }

    @Test func aTokenIsReusedUntilItNearsItsExpiry() async throws {
        let clock = TestClock()
        let tokens = ServerAPITokens(
            credentials: Self.credentials, lifetime: 300, renewalMargin: 60, clock: { clock.now })
        let first = try await tokens.token()
        clock.advance(by: 239)
        #expect(try await tokens.token() == first, "61 s left: still good")
        clock.advance(by: 1)
        let second = try await tokens.token()
        #expect(second != first, "60 s left: renewed")
        #expect(try Self.claims(second)["iat"] as? Int == 1_767_225_840)
    }

    @Test func aLifetimeBeyondApplesLimitIsCutToSixtyMinutes() async throws {
        let clock = TestClock()
        let tokens = ServerAPITokens(credentials: Self.credentials, lifetime: 24 * 3600, clock: { clock.now })
        let claims = try Self.claims(try await tokens.token())
        let issued = try #require(claims["iat"] as? Int)
        let expires = try #require(claims["exp"] as? Int)
        #expect(expires - issued == 3600)
    }

    @Test func aP8KeyIsReadAndAnythingElseRefusedWithACode() throws {
        let pem = Self.key.pemRepresentation
        let credentials = try ServerAPICredentials(keyID: "K", issuerID: "I", bundleID: "B", p8: pem)
        #expect(credentials.privateKey.rawRepresentation == Self.key.rawRepresentation)
        for bad in ["", "-----BEGIN PRIVATE KEY-----\nnot base64\n-----END PRIVATE KEY-----", "hello"] {
            #expect(throws: ServerAPIError(.invalidKey, "")) {
                _ = try ServerAPICredentials(keyID: "K", issuerID: "I", bundleID: "B", p8: bad)
            }
        }
    }
}
