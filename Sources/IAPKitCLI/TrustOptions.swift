import ArgumentParser
import IAPTrust
import X509

/// The options every verify command shares: the roots to trust and the Xcode escape hatch.
///
/// Xcode's test certificates are named on their own option, never among the roots: Xcode's signed-data certificate is
/// a certificate authority whose key ships with Xcode, and a root it would be able to vouch for an Apple-shaped chain.
struct TrustOptions: ParsableArguments {
    @Option(
        name: .customLong("root"),
        help: """
            A trusted root certificate (DER or PEM): AppleIncRootCertificate.cer for receipts, AppleRootCA-G3.cer for \
            signed data. Repeatable.
            """)
    var roots: [String] = []

    @Option(
        name: .customLong("insecure-xcode-cert"),
        help: """
            INSECURE, for local testing: also accept documents signed by exactly this Xcode StoreKit test certificate \
            (StoreKitTestCertificate.cer). Never a root; refused wherever --environment names another environment. \
            Repeatable.
            """)
    var xcodeCertificates: [String] = []

    func validate() throws {
        guard !roots.isEmpty || !xcodeCertificates.isEmpty else {
            throw ValidationError("Give at least one --root certificate (or --insecure-xcode-cert).")
        }
    }

    /// The trust store the options describe, or nil after reporting why a root could not be loaded.
    func trustStore(output: some CommandOutput) -> TrustStore? {
        func load(_ paths: [String]) -> [Certificate]? {
            var certificates: [Certificate] = []
            for path in paths {
                do {
                    certificates += try TrustAnchorLoader.certificates(contentsOfFile: path)
                } catch {
                    output.diagnostic("error: \(error.reason) [\(error.code)]")
                    return nil
                }
            }
            return certificates
        }
        guard let rootCertificates = load(roots), let xcode = load(xcodeCertificates) else { return nil }
        var store = TrustStore(roots: rootCertificates)
        if !xcode.isEmpty {
            output.diagnostic(
                "warning: --insecure-xcode-cert accepts data anyone with Xcode can sign; never use it in production")
            store = store.insecurelyAcceptingXcodeTestCertificates(xcode)
        }
        return store
    }
}
