public import X509

/// What kind of trust a verified chain rests on.
public enum ChainKind: String, Hashable, Sendable, Codable {
    /// Leaf, intermediate and root, the root one of the configured roots, with Apple's markers.
    case apple
    /// A single self-signed Xcode StoreKit test certificate, accepted because the trust store asked for it.
    case xcodeTest
}

/// Which presented certificate signed the document.
public enum LeafSelector: Hashable, Sendable {
    /// The first certificate (JWS `x5c` order).
    case first
    /// The certificate with this issuer and serial number: the DER bytes of a CMS `IssuerAndSerialNumber`.
    case issuerAndSerialNumber(ArraySlice<UInt8>)
}

/// The outcome of checking a certificate chain: the signer's key when the signer could be found, and every failure.
///
/// The leaf key is returned even when the chain fails, so a caller can still report separately whether the signature
/// itself holds.
public struct ChainVerification: Sendable {
    /// The signing certificate's public key, if the signing certificate was found and parsed.
    public var leafPublicKey: Certificate.PublicKey?
    /// The chain that was validated, leaf first (empty when none could be built).
    public var chain: [Certificate]
    /// The kind of trust the chain rests on, when it is trusted.
    public var kind: ChainKind?
    /// Every failed check; empty when the chain is trusted.
    public var failures: [VerificationFailure]

    /// True when a chain to a trusted anchor was verified and nothing failed.
    public var isTrusted: Bool { failures.isEmpty && kind != nil && leafPublicKey != nil }

    public init(
        leafPublicKey: Certificate.PublicKey?,
        chain: [Certificate],
        kind: ChainKind?,
        failures: [VerificationFailure]
    ) {
        self.leafPublicKey = leafPublicKey
        self.chain = chain
        self.kind = kind
        self.failures = failures
    }
}
