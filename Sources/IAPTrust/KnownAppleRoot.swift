/// Apple's published root certificates, known by name and SHA-256 fingerprint.
///
/// The root files themselves are not shipped with IAPKit: users download them from
/// https://www.apple.com/certificateauthority/ and pass them in. The fingerprints let IAPKit refuse a file that carries
/// one of these names but is not the real certificate.
public struct KnownAppleRoot: Hashable, Sendable {
    /// The subject common name the root carries.
    public let commonName: String
    /// The SHA-256 fingerprint of the root's DER bytes, lowercase hex.
    public let sha256Fingerprint: String
    /// What the root is used for in the App Store.
    public let use: String

    /// "Apple Root CA": the root of App Store receipts (RSA, 2006-2035).
    public static let appleIncRoot = KnownAppleRoot(
        commonName: "Apple Root CA",
        sha256Fingerprint: "b0b1730ecbc7ff4505142c49f1295e6eda6bcaed7e2c68c5be91b5a11001f024",
        use: "App Store receipts (StoreKit 1)"
    )
    /// "Apple Root CA - G3": the root of StoreKit 2 and App Store Server signed data (EC P-384, 2014-2039).
    public static let appleRootCAG3 = KnownAppleRoot(
        commonName: "Apple Root CA - G3",
        sha256Fingerprint: "63343abfb89a6a03ebb57e9b3f5fa7be7c4f5c756f3017b3a8c488c3653e9179",
        use: "StoreKit 2 and App Store Server Notifications (JWS)"
    )
    /// "Apple Root CA - G2" (RSA, 2014-2039).
    public static let appleRootCAG2 = KnownAppleRoot(
        commonName: "Apple Root CA - G2",
        sha256Fingerprint: "c2b9b042dd57830e7d117dac55ac8ae19407d38e41d88f3215bc3a890444a050",
        use: "Apple services"
    )
    /// "Apple Root Certificate Authority", the Apple Computer root (RSA, 2005-2025).
    public static let appleComputerRoot = KnownAppleRoot(
        commonName: "Apple Root Certificate Authority",
        sha256Fingerprint: "0d83b611b648a1a75eb8558400795375cad92e264ed8e9d7a757c1f5ee2bb22d",
        use: "legacy Apple services"
    )

    /// Every root IAPKit knows by fingerprint.
    public static let all: [KnownAppleRoot] = [.appleIncRoot, .appleRootCAG3, .appleRootCAG2, .appleComputerRoot]

    /// The known root whose name a certificate with this common name claims, if any.
    public static func claimed(byCommonName name: String) -> KnownAppleRoot? {
        all.first { $0.commonName == name }
    }
}
