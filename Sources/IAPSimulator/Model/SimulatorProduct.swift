import Crypto
public import Foundation
public import IAPCatalog
import IAPReceipts
import IAPSignedData

/// A product as a product request returns it: localized for the account's storefront, with the account's
/// introductory-offer eligibility.
public struct SimulatorProduct: Hashable, Sendable {
    public let id: String
    public let kind: ProductKind
    public let displayName: String
    public let description: String
    public let price: Decimal
    public let displayPrice: String
    public let subscriptionGroupID: String?
    public let subscriptionPeriod: SubscriptionPeriod?
    public let isFamilyShareable: Bool
    /// Whether this account would get the introductory offer if it bought now.
    public let isEligibleForIntroductoryOffer: Bool
}
