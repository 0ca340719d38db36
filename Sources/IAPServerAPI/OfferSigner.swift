import Crypto
public import Foundation
import IAPSignedData

/// The signatures a developer's server makes for offers, as Apple's server libraries make them, with an In-App
/// Purchase key from App Store Connect:
/// - promotional offer signatures (StoreKit 1's `SKPaymentDiscount`, StoreKit 2's promotional-offer option): ECDSA
///   P-256 over the bundle id, key id, product id, offer id, app account token (lowercased), nonce (lowercased) and
///   timestamp joined by U+2063, DER, base64;
/// - the JWS forms: promotional offer V2 (`aud` "promotional-offer") and introductory-offer eligibility (`aud`
///   "introductory-offer-eligibility"), each with `iss`, `bid`, `iat` and a fresh `nonce`.
///
/// Time and nonces are inputs (`clock`, `nonces`), so tests sign the same bytes every run.
public struct OfferSigner: Sendable {
    public let credentials: ServerAPICredentials
    private let clock: @Sendable () -> Date
    private let nonces: @Sendable () -> UUID
    private let signer: JWSSigner

    public init(
        credentials: ServerAPICredentials, clock: @escaping @Sendable () -> Date = Date.init,
        nonces: @escaping @Sendable () -> UUID = UUID.init
    ) {
        self.credentials = credentials
        self.clock = clock
        self.nonces = nonces
        signer = JWSSigner(privateKey: credentials.privateKey, keyID: credentials.keyID)
    }

    /// A promotional offer signature (V1), base64 of the DER ECDSA signature.
    /// - Parameters:
    ///   - productID: the subscription.
    ///   - offerID: the promotional offer's identifier in App Store Connect.
    ///   - appAccountToken: the app account token the purchase will carry (the application username), or "".
    ///   - nonce: a fresh UUID for this signature.
    ///   - timestamp: epoch milliseconds; the offer is usable for 24 hours from it.
    public func promotionalOfferSignature(
        productID: String, offerID: String, appAccountToken: String = "", nonce: UUID, timestamp: Int64
    ) throws(ServerAPIError) -> String {
        let message = PromotionalOffer.message(
            bundleID: credentials.bundleID, keyID: credentials.keyID, productID: productID, offerID: offerID,
            appAccountToken: appAccountToken, nonce: nonce, timestamp: timestamp)
        do { return try credentials.privateKey.signature(for: message).derRepresentation.base64EncodedString() } catch {
            throw ServerAPIError(.signingFailed, "the offer could not be signed: \(error)")
        }
    }

    /// A promotional offer V2 signature (compact JWS).
    /// - Parameters:
    ///   - productID: the subscription.
    ///   - offerID: the promotional offer's identifier.
    ///   - transactionID: any transaction id of the customer (recommended; an app transaction id works too).
    public func promotionalOfferV2(productID: String, offerID: String, transactionID: String? = nil)
        throws(ServerAPIError) -> String
    {
        var claims: [(String, JSONValue)] = [("productId", .string(productID)), ("offerIdentifier", .string(offerID))]
        if let transactionID { claims.append(("transactionId", .string(transactionID))) }
        return try sign(audience: "promotional-offer", claims)
    }

    /// An introductory offer eligibility signature (compact JWS): whether the customer may have the introductory
    /// offer, whatever the App Store would decide.
    /// - Parameters:
    ///   - productID: the subscription.
    ///   - allowIntroductoryOffer: whether the introductory offer applies.
    ///   - transactionID: any transaction id of the customer.
    public func introductoryOfferEligibility(productID: String, allowIntroductoryOffer: Bool, transactionID: String)
        throws(ServerAPIError) -> String
    {
        try sign(
            audience: "introductory-offer-eligibility",
            [
                ("productId", .string(productID)), ("allowIntroductoryOffer", .bool(allowIntroductoryOffer)),
                ("transactionId", .string(transactionID)),
            ])
    }

    private func sign(audience: String, _ claims: [(String, JSONValue)]) throws(ServerAPIError) -> String {
        let common: [(String, JSONValue)] = [
            ("bid", .string(credentials.bundleID)), ("iss", .string(credentials.issuerID)),
            ("aud", .string(audience)),
            ("iat", .number(JSONNumber(Int64(clock().timeIntervalSince1970.rounded(.down))))),
            ("nonce", .string(nonces().uuidString.lowercased())),
        ]
        do { return try signer.sign(payload: JSONValue.object(JSONObject(claims + common)).jsonBytes()) } catch {
            throw ServerAPIError(.signingFailed, "the offer could not be signed: \(error)")
        }
    }
}
