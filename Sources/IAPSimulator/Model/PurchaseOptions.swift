import Crypto
public import Foundation
import IAPCatalog
import IAPReceipts
public import IAPSignedData

/// Options of one purchase, as StoreKit's `Product.PurchaseOption`s give them.
public struct PurchaseOptions: Sendable, Codable {
    /// How many (consumables; others must be 1).
    public var quantity: Int
    /// The app's identifier for the customer, written into the transaction (the account's token when nil).
    public var appAccountToken: UUID?
    /// A promotional offer with its signature, or a win-back offer.
    public var offer: OfferChoice?
    /// The purchase is interrupted (the customer must act outside the app) and stays pending until resolved.
    public var interrupted: Bool
    /// The customer cancels the purchase sheet.
    public var userCancels: Bool
    /// The developer's signed introductory-offer eligibility (a JWS, `aud` "introductory-offer-eligibility"): when
    /// present, it decides whether the introductory offer applies.
    public var introductoryOfferEligibility: String?

    public init(
        quantity: Int = 1, appAccountToken: UUID? = nil, offer: OfferChoice? = nil, interrupted: Bool = false,
        userCancels: Bool = false
    ) {
        self.quantity = quantity
        self.appAccountToken = appAccountToken
        self.offer = offer
        self.interrupted = interrupted
        self.userCancels = userCancels
    }
}

/// An offer the purchase asks for.
public enum OfferChoice: Hashable, Sendable, Codable {
    /// A promotional offer, signed by the developer's server with a promotional-offer key.
    case promotional(PromotionalOffer)
    /// A promotional offer V2: the compact JWS the developer's server signed (`aud` "promotional-offer").
    case promotionalV2(String)
    /// A win-back offer (for customers whose subscription lapsed).
    case winBack(offerID: String)
}
