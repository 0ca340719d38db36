public import X509

/// The certificates a verifier trusts: roots for Apple-style chains, and, only when asked for by name, Xcode's
/// self-signed StoreKit test certificates.
///
/// The two lists never overlap: a certificate listed as an Xcode test certificate is removed from the roots. Xcode's
/// signed-data certificate is a certificate authority whose private key ships with Xcode, so anyone could issue a
/// leaf with Apple's markers under it; as a root it would make such a chain pass as an Apple chain.
public struct TrustStore: Sendable {
    /// Roots that Apple-style chains (leaf, intermediate, root) must end at, compared by key and signature; a chain's
    /// presented root must also be one of these (its bytes, or its name and key with a signature by that key).
    public private(set) var roots: [Certificate]
    /// Self-signed test certificates accepted as a one-certificate "chain", matched byte for byte.
    ///
    /// Xcode signs StoreKit Testing receipts and transactions with such a certificate, whose private key ships with
    /// every copy of Xcode: anyone can sign with it. Never configure one in production.
    public private(set) var insecureXcodeTestCertificates: [Certificate] = []

    /// A store that trusts these roots and nothing else.
    public init(roots: [Certificate]) {
        self.roots = roots
    }

    /// A copy of this store that also accepts data signed by exactly these self-signed certificates (Xcode's StoreKit
    /// test certificates), and no longer counts any of them as a root.
    ///
    /// Anyone can produce such data: use this for local testing only. Verifiers still refuse it wherever the caller
    /// expects Production or Sandbox data.
    public func insecurelyAcceptingXcodeTestCertificates(_ certificates: [Certificate]) -> TrustStore {
        var copy = self
        copy.insecureXcodeTestCertificates += certificates
        copy.roots.removeAll { certificates.contains($0) }
        return copy
    }
}
