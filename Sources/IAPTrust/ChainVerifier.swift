public import Foundation
import IAPCore
import SwiftASN1
@_spi(DisableValidityCheck) public import X509

/// Verifies the certificate chains that sign App Store data, at a validation time the caller chooses, and remembers
/// chains it has verified so that each is verified only once.
///
/// Apple-style chains are checked with swift-certificates' `Verifier` (RFC 5280 at the validation time) plus
/// ``AppleChainPolicy``; the root is one of the trust store's roots, matched by name, then key and signature.
/// Xcode's one-certificate chains are accepted only when the trust store lists that exact certificate.
///
/// The work of one verification is bounded before any chain is built: at most
/// ``maximumPresentedCertificates`` certificates are looked at (a set of look-alike certificates makes a general path
/// search exponential), and every certificate presented must end up in the verified chain, the presented root being a
/// trusted one (the same bytes, or the same name and key and signed by that key). So no input can vary an unverified
/// certificate to defeat the cache, or pass with one.
public final class ChainVerifier: Sendable {
    /// The most certificates a document may present: Apple's receipts and signed data carry leaf, intermediate and
    /// root; Xcode's carry one.
    public static let maximumPresentedCertificates = 3

    /// What this verifier trusts.
    public let trustStore: TrustStore
    private let cache: VerifiedChainCache

    /// - Parameters:
    ///   - trustStore: the roots chains must end in.
    ///   - cacheCapacity: how many distinct verified chains to remember.
    public init(trustStore: TrustStore, cacheCapacity: Int = 256) {
        self.trustStore = trustStore
        self.cache = VerifiedChainCache(capacity: cacheCapacity)
    }

    /// How many verified chains are remembered now.
    public var cachedChainCount: Int { cache.count }

    /// Checks that the presented certificates (DER, any order after the leaf) chain the signer to a trusted anchor,
    /// valid at `time`.
    nonisolated(nonsending) public func verify(
        certificates: [ArraySlice<UInt8>],
        leaf selector: LeafSelector,
        at time: Date
    ) async -> ChainVerification {
        let key = VerifiedChainCache.Key(selector: selector, certificates: certificates)
        if let cached = cache.lookup(key, at: time) {
            return cached
        }
        let verification = await verifyUncached(certificates: certificates, selector: selector, at: time)
        if verification.isTrusted, !verification.chain.isEmpty {
            cache.insert(
                key,
                VerifiedChainCache.Entry(
                    verification: verification,
                    validFrom: verification.chain.map(\.notValidBefore).max()!,
                    validUntil: verification.chain.map(\.notValidAfter).min()!
                )
            )
        }
        return verification
    }

    nonisolated(nonsending) private func verifyUncached(
        certificates rawCertificates: [ArraySlice<UInt8>],
        selector: LeafSelector,
        at time: Date
    ) async -> ChainVerification {
        guard rawCertificates.count <= Self.maximumPresentedCertificates else {
            return failure(
                .tooManyCertificates,
                "\(rawCertificates.count) certificates presented; App Store documents carry at most "
                    + "\(Self.maximumPresentedCertificates)")
        }
        var certificates: [Certificate] = []
        for (index, raw) in rawCertificates.enumerated() {
            guard let certificate = try? Certificate(derEncoded: Array(raw)) else {
                return failure(.malformedCertificate, "certificate \(index) is not a well-formed X.509 certificate")
            }
            certificates.append(certificate)
        }
        guard let leafIndex = Self.leafIndex(in: certificates, selector: selector) else {
            return failure(
                .signerCertificateNotFound, "the signing certificate is not among the \(certificates.count) presented")
        }
        let leaf = certificates[leafIndex]
        var others = certificates
        others.remove(at: leafIndex)

        if certificates.count == 1, leaf.issuer == leaf.subject {
            return verifySelfSigned(leaf, at: time)
        }

        var verifier = Verifier(rootCertificates: CertificateStore(trustStore.roots)) {
            RFC5280Policy.withValidityCheckDisabled()
        }

        // Apple's chains carry their root: with three certificates, one must be a trusted root, so a junk third
        // certificate is refused here, before any path is searched.
        if certificates.count == Self.maximumPresentedCertificates, !others.contains(where: isTrustedRoot) {
            return ChainVerification(
                leafPublicKey: leaf.publicKey, chain: [], kind: nil,
                failures: [
                    VerificationFailure(
                        .chainUntrusted,
                        "none of the presented certificates is a trusted root (Apple's chains carry theirs)")
                ])
        }
        // One path search, with RFC 5280's rules but not its validity dates, then Apple's rules and the dates on the
        // path it found: the same verdict as a strict search (with at most three certificates, one of them the root,
        // there is one path), and a chain that fails costs one search, not a strict one and another to explain it.
        WorkMeter.tick()  // one path search
        guard
            case .validCertificate(let validated) = await verifier.validate(
                leaf: leaf, intermediates: CertificateStore(others))
        else {
            var failures = [
                VerificationFailure(
                    .chainUntrusted, "no chain from \"\(leaf.subject.commonName ?? "?")\" to a trusted root")
            ]
            let presented = [leaf] + others.filter { $0.subject == leaf.issuer }.prefix(1)
            failures += AppleChainPolicy.problems(in: presented).filter { $0.code != .unexpectedChainLength }
            return ChainVerification(leafPublicKey: leaf.publicKey, chain: [], kind: nil, failures: failures)
        }
        let chain = Array(validated)
        // Every presented certificate must be part of what was verified: nothing unverified rides along.
        if let extra = others.first(where: { !chain.contains($0) && !isTrustedRoot($0) }) {
            return ChainVerification(
                leafPublicKey: leaf.publicKey, chain: [], kind: nil,
                failures: [
                    VerificationFailure(
                        .chainUntrusted,
                        "the presented certificate \"\(extra.subject.commonName ?? "?")\" is not part of the chain")
                ])
        }
        let failures = AppleChainPolicy.problems(in: chain) + Self.validityProblems(in: chain, at: time)
        return ChainVerification(
            leafPublicKey: leaf.publicKey, chain: chain, kind: failures.isEmpty ? .apple : nil, failures: failures)
    }

    /// Whether a presented certificate is one of the trusted roots: the same bytes, or (a re-issued copy) the same
    /// name and key with a signature that key makes, so nobody without the root's key can vary it.
    private func isTrustedRoot(_ certificate: Certificate) -> Bool {
        trustStore.roots.contains { root in
            root == certificate
                || (root.subject == certificate.subject && root.publicKey == certificate.publicKey
                    && root.publicKey.isValidSignature(certificate.signature, for: certificate))
        }
    }

    private func verifySelfSigned(_ certificate: Certificate, at time: Date) -> ChainVerification {
        let isConfigured = trustStore.insecureXcodeTestCertificates.contains(certificate)
        var failures: [VerificationFailure] = []
        if !isConfigured {
            let name = certificate.subject.commonName ?? "?"
            if name.hasPrefix("StoreKit") {
                failures.append(
                    VerificationFailure(
                        .xcodeSignedNotAllowed,
                        "signed by Xcode's StoreKit test certificate \"\(name)\", which this verifier does not accept"
                    )
                )
            } else {
                failures.append(
                    VerificationFailure(.chainUntrusted, "signed by an untrusted self-signed certificate \"\(name)\""))
            }
        }
        failures += Self.validityProblems(in: [certificate], at: time)
        return ChainVerification(
            leafPublicKey: certificate.publicKey,
            chain: [certificate],
            kind: isConfigured && failures.isEmpty ? .xcodeTest : nil,
            failures: failures
        )
    }

    private func failure(_ code: VerificationFailure.Code, _ reason: String) -> ChainVerification {
        ChainVerification(leafPublicKey: nil, chain: [], kind: nil, failures: [VerificationFailure(code, reason)])
    }

    static func leafIndex(in certificates: [Certificate], selector: LeafSelector) -> Int? {
        switch selector {
        case .first:
            return certificates.isEmpty ? nil : 0
        case .issuerAndSerialNumber(let der):
            guard let identifier = try? IssuerAndSerialNumber(derEncoded: der) else { return nil }
            return certificates.firstIndex {
                $0.issuer == identifier.issuer && $0.serialNumber == identifier.serialNumber
            }
        }
    }

    /// The certificates of the chain that are not valid at `time`, each as a failure.
    public static func validityProblems(in chain: [Certificate], at time: Date) -> [VerificationFailure] {
        chain.compactMap { certificate in
            let name = certificate.subject.commonName ?? "?"
            if time > certificate.notValidAfter {
                return VerificationFailure(
                    .certificateExpired,
                    "\"\(name)\" expired \(certificate.notValidAfter), before the validation time \(time)"
                )
            }
            if time < certificate.notValidBefore {
                return VerificationFailure(
                    .certificateNotYetValid,
                    "\"\(name)\" is valid only from \(certificate.notValidBefore), after the validation time \(time)"
                )
            }
            return nil
        }
    }
}
