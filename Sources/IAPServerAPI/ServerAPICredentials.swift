public import Crypto
import Foundation
import IAPCore

/// What Apple's App Store Server API needs to know who is calling: an in-app purchase key from App Store Connect
/// (its id and the `.p8` private key), the team's issuer id, and the app's bundle id.
public struct ServerAPICredentials: Sendable {
    public var keyID: String
    public var issuerID: String
    public var bundleID: String
    public var privateKey: P256.Signing.PrivateKey

    public init(keyID: String, issuerID: String, bundleID: String, privateKey: P256.Signing.PrivateKey) {
        self.keyID = keyID
        self.issuerID = issuerID
        self.bundleID = bundleID
        self.privateKey = privateKey
    }

    /// Credentials with the key read from the `.p8` file App Store Connect gives (PEM, PKCS#8).
    public init(keyID: String, issuerID: String, bundleID: String, p8 pem: String) throws(ServerAPIError) {
        let key: P256.Signing.PrivateKey
        do { key = try P256.Signing.PrivateKey(pemRepresentation: pem) } catch {
            throw ServerAPIError(.invalidKey, "the .p8 key is not a P-256 private key in PEM: \(error)")
        }
        self.init(keyID: keyID, issuerID: issuerID, bundleID: bundleID, privateKey: key)
    }
}
