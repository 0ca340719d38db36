import Crypto
import Foundation
public import IAPTrust
import X509

/// Verifies App Store receipts: signature, certificate chain, and the caller's expectations, returning a verdict that
/// lists every failed check.
///
/// One verifier is meant to be shared (it is `Sendable`): it remembers the chains it has verified, so at steady state a
/// receipt costs its parsing, one digest and one RSA signature check.
///
/// ```swift
/// let roots = try TrustAnchorLoader.certificates(contentsOfFile: "AppleIncRootCertificate.cer")
/// let verifier = ReceiptVerifier(trustStore: TrustStore(roots: roots))
/// let verdict = try await verifier.verify(receiptBytes, policy: .init(now: Date(), bundleID: "com.example.app"))
/// if verdict.isValid { ... } else { print(verdict.failures) }
/// ```
public final class ReceiptVerifier: Sendable {
    /// Checks certificate chains and remembers the ones it verified.
    public let chains: ChainVerifier

    public init(trustStore: TrustStore, chainCacheCapacity: Int = 256) {
        self.chains = ChainVerifier(trustStore: trustStore, cacheCapacity: chainCacheCapacity)
    }

    /// Parses then verifies a binary receipt. Throws only when the bytes are not a receipt at all.
    nonisolated(nonsending) public func verify(_ bytes: some Collection<UInt8>, policy: ReceiptVerificationPolicy)
        async throws(ReceiptParsingError)
        -> ReceiptVerdict
    {
        await verify(try SignedReceipt(bytes: bytes), policy: policy)
    }

    /// Verifies a parsed receipt.
    nonisolated(nonsending) public func verify(_ signed: SignedReceipt, policy: ReceiptVerificationPolicy) async
        -> ReceiptVerdict
    {
        let receipt = signed.receipt
        let signedData = signed.signedData
        var failures: [VerificationFailure] = []
        var skipped: [String] = []

        // Signature and chain.
        var chainKind: ChainKind?
        var chain: [Certificate] = []
        var digestName: String?
        let validationTime: Date?
        switch policy.chainValidationTime {
        case .receiptCreationDate: validationTime = receipt.creationDate
        case .fixed(let time): validationTime = time
        }
        if signedData.signerInfos.count != 1 {
            failures.append(
                VerificationFailure(
                    .unexpectedSignerCount, "\(signedData.signerInfos.count) signers; a receipt has exactly one"))
        } else if let validationTime {
            let signer = signedData.signerInfos[0]
            let verification = await chains.verify(
                certificates: signedData.certificates,
                leaf: .issuerAndSerialNumber(signer.issuerAndSerialNumber),
                at: validationTime
            )
            chainKind = verification.kind
            chain = verification.chain
            failures += verification.failures
            switch CMSSignatureCheck.digestKind(of: signer, in: signedData) {
            case .failure(let failure):
                failures.append(failure)
            case .success(let kind):
                digestName = kind.rawValue
                if let key = verification.leafPublicKey {
                    failures += CMSSignatureCheck.failures(
                        signer: signer, content: signedData.content ?? [], digest: kind, key: key)
                }
            }
        } else {
            failures.append(
                VerificationFailure(.creationDateMissing, "the receipt has no creation date to validate its chain at"))
        }

        // The caller's expectations.
        if let expected = policy.bundleID {
            if receipt.bundleID != expected {
                failures.append(
                    VerificationFailure(
                        .bundleIDMismatch, "bundle id is \"\(receipt.bundleID)\", expected \"\(expected)\""))
            }
        } else {
            skipped.append("bundleId")
        }
        if let expected = policy.appVersion {
            if receipt.appVersion != expected {
                failures.append(
                    VerificationFailure(
                        .appVersionMismatch, "app version is \"\(receipt.appVersion)\", expected \"\(expected)\""))
            }
        } else {
            skipped.append("appVersion")
        }
        if let device = policy.deviceIdentifier {
            if Self.deviceHash(device: device, receipt: receipt) != receipt.sha1Hash {
                failures.append(
                    VerificationFailure(.deviceHashMismatch, "the receipt's hash does not match this device identifier")
                )
            }
        } else {
            skipped.append("deviceHash")
        }
        if let expected = policy.environments {
            // An Xcode-signed receipt is Xcode's whatever its attribute says (as the verdict's `environment` reads it).
            let claimed = chainKind == .xcodeTest ? .xcode : receipt.environment
            failures += Self.environmentFailures(claimed, chainKind: chainKind, expected: expected)
        } else {
            skipped.append("environment")
        }
        if let expiration = receipt.expirationDate, expiration < policy.now {
            failures.append(VerificationFailure(.receiptExpired, "the receipt expired at \(expiration)"))
        }

        return ReceiptVerdict(
            receipt: receipt,
            failures: failures,
            skippedChecks: skipped,
            chainKind: chainKind,
            chain: chain,
            digestAlgorithm: digestName,
            chainValidationTime: validationTime
        )
    }

    /// The receipt's environment against the expected ones; an Xcode-signed receipt needs `.xcode` among them.
    static func environmentFailures(
        _ claimed: ReceiptEnvironment?, chainKind: ChainKind?, expected: Set<ReceiptEnvironment>
    ) -> [VerificationFailure] {
        let accepted = Set(expected.map(\.normalized))
        let names = accepted.sorted().joined(separator: " or ")
        var failures: [VerificationFailure] = []
        if chainKind == .xcodeTest, !accepted.contains(ReceiptEnvironment.xcode.normalized) {
            failures.append(
                VerificationFailure(
                    .xcodeSignedNotAllowed, "signed by an Xcode test certificate, but this verifier expects \(names)"))
        }
        if let claimed, accepted.contains(claimed.normalized) { return failures }
        failures.append(
            VerificationFailure(
                .environmentMismatch,
                "the receipt's environment is \(claimed.map { "\"\($0.rawValue)\"" } ?? "missing"), not \(names)"))
        return failures
    }

    /// SHA-1(device identifier ‖ opaque value ‖ bundle id DER bytes): the hash a receipt carries in attribute 5.
    public static func deviceHash(device: [UInt8], receipt: AppReceipt) -> [UInt8] {
        var sha = Insecure.SHA1()
        sha.update(data: device)
        sha.update(data: receipt.opaqueValue)
        sha.update(data: receipt.bundleIDData)
        return Array(sha.finalize())
    }
}
