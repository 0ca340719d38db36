import ArgumentParser
import IAPTrust
import X509

/// The options every verify command shares: the roots to trust and the Xcode escape hatch.
struct TrustOptions: ParsableArguments {
    @Option(
        name: .customLong("root"),
        help: """
            A trusted root certificate (DER or PEM): AppleIncRootCertificate.cer for receipts, AppleRootCA-G3.cer for \
            signed data. Repeatable.
            """)
    var roots: [String] = []

    @Flag(
        name: .customLong("allow-xcode"),
        help:
            "INSECURE, for local testing: also accept data signed by a --root that is one of Xcode's StoreKit test certificates."
    )
    var allowXcode = false

    func validate() throws {
        guard !roots.isEmpty else { throw ValidationError("Give at least one --root certificate.") }
    }

    /// The trust store the options describe, or nil after reporting why a root could not be loaded.
    func trustStore(output: some CommandOutput) -> TrustStore? {
        var certificates: [Certificate] = []
        for path in roots {
            do {
                certificates += try TrustAnchorLoader.certificates(contentsOfFile: path)
            } catch {
                output.diagnostic("error: \(error.reason) [\(error.code)]")
                return nil
            }
        }
        var store = TrustStore(roots: certificates)
        if allowXcode {
            output.diagnostic(
                "warning: --allow-xcode accepts data anyone with Xcode can sign; never use it in production")
            store = store.insecurelyAcceptingXcodeTestCertificates(certificates)
        }
        return store
    }
}
