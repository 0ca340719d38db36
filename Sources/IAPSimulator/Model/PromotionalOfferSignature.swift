public import Crypto
public import Foundation
import IAPCatalog
import IAPReceipts
import IAPSignedData

/// The parameters of a signed promotional offer, as `Product.PurchaseOption.promotionalOffer` takes them.
///
/// Apple's format: an ECDSA P-256 SHA-256 signature (DER, base64) over the bundle id, key id, product id, offer id,
/// application username (the app account token, lowercased), nonce (lowercased) and timestamp (ms), joined by
/// U+2063 (invisible separator).
public struct PromotionalOfferSignature: Hashable, Sendable, Codable {
    public var offerID: String
    public var keyID: String
    public var nonce: UUID
    public var timestamp: Int64
    public var signature: String

    public init(offerID: String, keyID: String, nonce: UUID, timestamp: Int64, signature: String) {
        self.offerID = offerID
        self.keyID = keyID
        self.nonce = nonce
        self.timestamp = timestamp
        self.signature = signature
    }

    /// The bytes the signature covers.
    public static func message(
        bundleID: String, keyID: String, productID: String, offerID: String, appAccountToken: UUID?, nonce: UUID,
        timestamp: Int64
    ) -> [UInt8] {
        let parts = [
            bundleID, keyID, productID, offerID, appAccountToken?.uuidString.lowercased() ?? "",
            nonce.uuidString.lowercased(), String(timestamp),
        ]
        return Array(parts.joined(separator: "\u{2063}").utf8)
    }

    /// Signs an offer as a developer's server does; tests and scenarios use it with the key they configured.
    public static func sign(
        key: P256.Signing.PrivateKey, bundleID: String, keyID: String, productID: String, offerID: String,
        appAccountToken: UUID?, nonce: UUID, timestamp: Int64
    ) throws -> PromotionalOfferSignature {
        let message = Self.message(
            bundleID: bundleID, keyID: keyID, productID: productID, offerID: offerID,
            appAccountToken: appAccountToken, nonce: nonce, timestamp: timestamp)
        let signature = try key.signature(for: message).derRepresentation.base64EncodedString()
        return PromotionalOfferSignature(
            offerID: offerID, keyID: keyID, nonce: nonce, timestamp: timestamp, signature: signature)
    }
}
