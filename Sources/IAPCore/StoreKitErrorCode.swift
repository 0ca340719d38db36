/// The failures StoreKit reports to an app (`StoreKitError` and `Product.PurchaseError` cases, by name), for every
/// error code type that carries them: the simulator injects them, the app-side store reports them, and a code passes
/// from one to the other unchanged.
public protocol StoreKitErrorCode: RawRepresentable where RawValue == String {
    init(rawValue: String)
}

extension StoreKitErrorCode {
    public static var networkError: Self { Self(rawValue: "networkError") }
    public static var systemError: Self { Self(rawValue: "systemError") }
    public static var notAvailableInStorefront: Self { Self(rawValue: "notAvailableInStorefront") }
    public static var notEntitled: Self { Self(rawValue: "notEntitled") }
    public static var productUnavailable: Self { Self(rawValue: "productUnavailable") }
    public static var purchaseNotAllowed: Self { Self(rawValue: "purchaseNotAllowed") }
    public static var ineligibleForOffer: Self { Self(rawValue: "ineligibleForOffer") }
    public static var invalidOfferIdentifier: Self { Self(rawValue: "invalidOfferIdentifier") }
    public static var invalidOfferPrice: Self { Self(rawValue: "invalidOfferPrice") }
    public static var invalidOfferSignature: Self { Self(rawValue: "invalidOfferSignature") }
    public static var missingOfferParameters: Self { Self(rawValue: "missingOfferParameters") }
    public static var invalidQuantity: Self { Self(rawValue: "invalidQuantity") }
    public static var unknown: Self { Self(rawValue: "unknown") }
}
