import Crypto
import Foundation
import IAPCore
import IAPSignedData

extension SimulatorCore {
    /// The public key of an In-App Purchase key by its id: a promotional-offer key or an App Store Server API key
    /// (App Store Connect makes both kinds the same way).
    func offerKey(_ keyID: String) -> P256.Signing.PublicKey? {
        configuration.promotionalOfferKeys[keyID] ?? configuration.serverAPIKeys[keyID]
    }

    /// Checks a JWS offer signature (promotional offer V2, introductory offer eligibility) as the App Store does:
    /// ES256 by the key its `kid` names, `aud`, `bid` the app, `productId` the product bought, `iat` within 24 hours,
    /// `iss` the configured issuer (when set), a nonce not used before, and a `transactionId`, when present, of this
    /// customer. Returns the claims and the nonce (spent when the purchase goes through).
    func verifiedOfferClaims(_ jws: String, audience: String, productID: String, account: String)
        throws(SimulatorError) -> (JSONObject, String)
    {
        guard let compact = try? CompactJWS(jws, maximumSize: 16 << 10), compact.header.algorithm == "ES256",
            let keyID = compact.header.keyID, let key = offerKey(keyID),
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: compact.signature),
            key.isValidSignature(signature, for: compact.signingInput),
            case .object(let claims)? = try? JSONValue(jsonBytes: compact.payload)
        else {
            throw SimulatorError(.invalidOfferSignature, "the \(audience) signature does not verify with a known key")
        }
        guard claims["aud"] == .string(audience), claims["bid"] == .string(configuration.bundleID),
            claims["productId"] == .string(productID)
        else {
            throw SimulatorError(
                .invalidOfferSignature, "the \(audience) signature is for another audience, app or product")
        }
        if let issuer = configuration.serverAPIIssuerID, claims["iss"] != .string(issuer) {
            throw SimulatorError(.invalidOfferSignature, "the \(audience) signature has another issuer")
        }
        guard case .number(let issued)? = claims["iat"], let seconds = issued.int64Value,
            abs(now.timeIntervalSince1970 - Double(seconds)) <= 86_400
        else {
            throw SimulatorError(.invalidOfferSignature, "the \(audience) signature is more than 24 hours old")
        }
        guard case .string(let nonce)? = claims["nonce"], !nonce.isEmpty, nonce.utf8.count <= 64 else {
            throw SimulatorError(.missingOfferParameters, "the \(audience) signature has no nonce")
        }
        guard !spentOfferNonces.contains(nonce.lowercased()) else {
            throw SimulatorError(.invalidOfferSignature, "the \(audience) signature's nonce was used before")
        }
        if case .string(let id)? = claims["transactionId"] {
            guard (try? self.account(anyTransactionID: id)) == account else {
                throw SimulatorError(.invalidOfferSignature, "transaction \(id) is not this customer's")
            }
        } else if audience == "introductory-offer-eligibility" {
            throw SimulatorError(.missingOfferParameters, "the eligibility signature names no transactionId")
        }
        return (claims, nonce.lowercased())
    }

    /// Whether the introductory offer applies: the developer's signed eligibility decides when the purchase carries
    /// one, the App Store's own rule otherwise. Returns the decision and the signature's nonce.
    func introductoryOfferApplies(account: String, productID: String, options: PurchaseOptions)
        throws(SimulatorError) -> (Bool, String?)
    {
        guard let jws = options.introductoryOfferEligibility else {
            return (isEligibleForIntroductoryOffer(account: account, productID: productID), nil)
        }
        let (claims, nonce) = try verifiedOfferClaims(
            jws, audience: "introductory-offer-eligibility", productID: productID, account: account)
        guard case .bool(let allowed)? = claims["allowIntroductoryOffer"] else {
            throw SimulatorError(.missingOfferParameters, "the eligibility signature has no allowIntroductoryOffer")
        }
        return (allowed, nonce)
    }
}
