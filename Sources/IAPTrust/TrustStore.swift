public import X509

/// The certificates a verifier trusts: roots for Apple-style chains, and, only when asked for by name, Xcode's
/// self-signed StoreKit test certificates.
public struct TrustStore: Sendable {
    /// Roots that Apple-style chains (leaf, intermediate, root) must end at, compared by key and signature.
    public var roots: [Certificate]
    /// Self-signed test certificates accepted as a one-certificate "chain", matched byte for byte.
    ///
    /// Xcode signs StoreKit Testing receipts and transactions with such a certificate, whose private key ships with
    /// every copy of Xcode: anyone can sign with it. Never configure one in production.
    public private(set) var insecureXcodeTestCertificates: [Certificate] = []

    /// A store that trusts these roots and nothing else.
    public init(roots: [Certificate]) {
        self.roots = roots
    }

    /// A copy of this store that also accepts data signed by Xcode's StoreKit test certificate.
    ///
    /// Anyone can produce such data: use this for local testing only.
    public func insecurelyAcceptingXcodeTestCertificates(_ certificates: [Certificate]) -> TrustStore {
        var copy = self
        copy.insecureXcodeTestCertificates += certificates
        return copy
    }
}
