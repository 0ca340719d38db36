public import Crypto
public import Foundation
public import IAPCore

/// A promotional offer signed by the developer's server, as StoreKit's
/// `Product.PurchaseOption.promotionalOffer(offerID:keyID:nonce:signature:timestamp:)` takes it: the one type the
/// app side sends, the local App Store checks, and a developer's server (the App Store Server API's key) signs.
///
/// Apple's format: an ECDSA P-256 SHA-256 signature (DER, base64) over the bundle id, key id, product id, offer id,
/// application username (the app account token, lowercased), nonce (lowercased) and timestamp (ms), joined by
/// U+2063 (invisible separator). In JSON it is `{"offerId", "keyId", "nonce", "timestamp", "signature"}`.
public struct PromotionalOffer: Hashable, Sendable, Codable, KnownFields {
    public var offerID: String
    public var keyID: String
    public var nonce: UUID
    /// Milliseconds since 1970.
    public var timestamp: Int64
    /// The base64 DER ECDSA signature.
    public var signature: String

    public init(offerID: String, keyID: String, nonce: UUID, timestamp: Int64, signature: String) {
        self.offerID = offerID
        self.keyID = keyID
        self.nonce = nonce
        self.timestamp = timestamp
        self.signature = signature
    }

    public typealias Fields = CodingKeys
    public enum CodingKeys: String, CodingKey, CaseIterable {
        case offerID = "offerId"
        case keyID = "keyId"
        case nonce, timestamp, signature
    }

    /// The bytes the signature covers; `appAccountToken` is the application username (empty when there is none).
    public static func message(
        bundleID: String, keyID: String, productID: String, offerID: String, appAccountToken: String, nonce: UUID,
        timestamp: Int64
    ) -> [UInt8] {
        let parts = [
            bundleID, keyID, productID, offerID, appAccountToken.lowercased(), nonce.uuidString.lowercased(),
            String(timestamp),
        ]
        return Array(parts.joined(separator: "\u{2063}").utf8)
    }

    /// Signs an offer as a developer's server does, with the In-App Purchase key `key` whose id is `keyID`.
    public static func sign(
        key: P256.Signing.PrivateKey, bundleID: String, keyID: String, productID: String, offerID: String,
        appAccountToken: UUID?, nonce: UUID, timestamp: Int64
    ) throws -> PromotionalOffer {
        let message = Self.message(
            bundleID: bundleID, keyID: keyID, productID: productID, offerID: offerID,
            appAccountToken: appAccountToken?.uuidString ?? "", nonce: nonce, timestamp: timestamp)
        let signature = try key.signature(for: message).derRepresentation.base64EncodedString()
        return PromotionalOffer(
            offerID: offerID, keyID: keyID, nonce: nonce, timestamp: timestamp, signature: signature)
    }

    /// Whether the signature is `key`'s over this offer for `productID` in `bundleID`, bought with
    /// `appAccountToken`.
    public func isSigned(
        by key: P256.Signing.PublicKey, bundleID: String, productID: String, appAccountToken: UUID?
    ) -> Bool {
        guard let der = Data(base64Encoded: signature),
            let ecdsa = try? P256.Signing.ECDSASignature(derRepresentation: der)
        else { return false }
        let message = Self.message(
            bundleID: bundleID, keyID: keyID, productID: productID, offerID: offerID,
            appAccountToken: appAccountToken?.uuidString ?? "", nonce: nonce, timestamp: timestamp)
        return key.isValidSignature(ecdsa, for: message)
    }
}
