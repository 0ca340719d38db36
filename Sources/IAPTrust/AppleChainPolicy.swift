public import SwiftASN1
public import X509

/// Apple's rules for App Store signing chains, on top of RFC 5280: exactly leaf, intermediate and root; Apple's marker
/// extension on the leaf and on the intermediate; a leaf that is not a certificate authority.
///
/// These are what stop a chain built from a self-made CA with Apple's names (the marker check and the root's key) and
/// a developer's own WWDR-issued certificate used as a signer (the leaf marker).
public struct AppleChainPolicy: VerifierPolicy {
    public let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = []

    public init() {}

    public func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) -> PolicyEvaluationResult {
        let problems = Self.problems(in: Array(chain))
        if let first = problems.first {
            return .failsToMeetPolicy(reason: first.description)
        }
        return .meetsPolicy
    }

    /// Every way the chain (leaf first) breaks Apple's rules.
    public static func problems(in chain: [Certificate]) -> [VerificationFailure] {
        var problems: [VerificationFailure] = []
        if chain.count != 3 {
            problems.append(
                VerificationFailure(
                    .unexpectedChainLength,
                    "the chain has \(chain.count) certificates; Apple's has 3 (leaf, intermediate, root)"
                )
            )
        }
        if let leaf = chain.first {
            if leaf.extensions[oid: .AppleMarker.receiptSigningLeaf] == nil {
                problems.append(
                    VerificationFailure(
                        .leafMarkerMissing,
                        "leaf \"\(leaf.subject.commonName ?? "?")\" lacks Apple's marker 1.2.840.113635.100.6.11.1"
                    )
                )
            }
            if let constraints = try? leaf.extensions.basicConstraints, case .isCertificateAuthority = constraints {
                problems.append(
                    VerificationFailure(
                        .leafIsCertificateAuthority,
                        "leaf \"\(leaf.subject.commonName ?? "?")\" is a certificate authority"
                    )
                )
            }
        }
        if chain.count >= 2, chain[1].extensions[oid: .AppleMarker.wwdrIntermediate] == nil {
            problems.append(
                VerificationFailure(
                    .intermediateMarkerMissing,
                    "intermediate \"\(chain[1].subject.commonName ?? "?")\" lacks Apple's marker "
                        + "1.2.840.113635.100.6.2.1"
                )
            )
        }
        return problems
    }
}
