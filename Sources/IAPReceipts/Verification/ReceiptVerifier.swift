import Crypto
public import Foundation
public import IAPTrust
import X509

/// Verifies App Store receipts: signature, certificate chain, and the app's expectations, returning a verdict that
/// lists every failed check.
///
/// A verifier is made for one app (its ``Configuration``: bundle id, accepted environments) and is meant to be shared
/// (it is `Sendable`): it remembers the chains it has verified, so at steady state a receipt costs its parsing, one
/// digest and one RSA signature check. Time and the device are inputs of each call. Bytes that are not a receipt at
/// all throw ``ReceiptParsingError``; anything that parses gets a verdict.
///
/// ```swift
/// let roots = try TrustAnchorLoader.certificates(contentsOfFile: "AppleIncRootCertificate.cer")
/// let verifier = ReceiptVerifier(
///     trustStore: TrustStore(roots: roots),
///     configuration: .init(bundleID: "com.example.app", environments: [.production]))
/// let verdict = try await verifier.verify(receiptBytes, at: Date())
/// if verdict.isValid { ... } else { print(verdict.failures) }
/// ```
public final class ReceiptVerifier: Sendable {
    /// What the app expects of its receipts. Expected values come from the caller (hard-coded in the app, or the
    /// server's configuration), never from a file the user can edit such as Info.plist.
    public struct Configuration: Sendable, Hashable {
        /// When the certificate chain is validated.
        public enum ChainValidationTime: Sendable, Hashable {
            /// At the receipt's creation date (attribute 12): Apple's certificates in old receipts have long expired.
            case receiptCreationDate
            /// At the time each verification is made at.
            case verificationTime
            /// At a fixed time.
            case fixed(Date)
        }

        /// The bundle id receipts must carry; nil skips the check (and the verdict says so).
        public var bundleID: String?
        /// The app version (`CFBundleVersion`) receipts must carry, if checked (an app checking its own receipt).
        public var appVersion: String?
        /// The environments receipts may come from (their signed attribute 0), compared in Apple's words:
        /// ``ReceiptEnvironment/sandbox`` also matches `ProductionSandbox`. Nil skips the check (and the verdict says
        /// so); a server should always set it, because any TestFlight tester gets genuine Apple-signed sandbox receipts
        /// for free purchases. Xcode-signed receipts are refused unless ``ReceiptEnvironment/xcode`` is listed,
        /// whatever the trust store accepts.
        public var environments: Set<ReceiptEnvironment>?
        /// When the certificate chain is validated.
        public var chainValidationTime: ChainValidationTime

        public init(
            bundleID: String? = nil, appVersion: String? = nil, environments: Set<ReceiptEnvironment>? = nil,
            chainValidationTime: ChainValidationTime = .receiptCreationDate
        ) {
            self.bundleID = bundleID
            self.appVersion = appVersion
            self.environments = environments
            self.chainValidationTime = chainValidationTime
        }
    }

    /// What this verifier expects of receipts.
    public let configuration: Configuration
    /// Checks certificate chains and remembers the ones it verified.
    private let chains: ChainVerifier

    public init(trustStore: TrustStore, configuration: Configuration = Configuration(), cacheCapacity: Int = 256) {
        self.configuration = configuration
        self.chains = ChainVerifier(trustStore: trustStore, cacheCapacity: cacheCapacity)
    }

    /// How many verified chains are remembered now.
    public var cachedChainCount: Int { chains.cachedChainCount }

    /// Parses then verifies a binary receipt at `now` (the time its expiration is judged at), checking the device
    /// hash when `deviceIdentifier` is given (see ``deviceIdentifier(_:)``). Throws only when the bytes are not a
    /// receipt at all.
    nonisolated(nonsending) public func verify(
        _ bytes: some Collection<UInt8>, at now: Date, deviceIdentifier: [UInt8]? = nil
    ) async throws(ReceiptParsingError) -> ReceiptVerdict {
        await verify(try SignedReceipt(bytes: bytes), at: now, deviceIdentifier: deviceIdentifier)
    }

    /// Verifies a parsed receipt at `now`, checking the device hash when `deviceIdentifier` is given.
    nonisolated(nonsending) public func verify(
        _ signed: SignedReceipt, at now: Date, deviceIdentifier: [UInt8]? = nil
    ) async -> ReceiptVerdict {
        let policy = configuration
        let receipt = signed.receipt
        let signedData = signed.signedData
        var failures: [VerificationFailure] = []
        var skipped: [SkippedCheck] = []

        // Signature and chain.
        var chainKind: ChainKind?
        var chain: [Certificate] = []
        var digestName: String?
        let validationTime: Date?
        switch policy.chainValidationTime {
        case .receiptCreationDate: validationTime = receipt.creationDate
        case .verificationTime: validationTime = now
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
            skipped.append(SkippedCheck(.bundleID, "no expected bundle id configured"))
        }
        if let expected = policy.appVersion {
            if receipt.appVersion != expected {
                failures.append(
                    VerificationFailure(
                        .appVersionMismatch, "app version is \"\(receipt.appVersion)\", expected \"\(expected)\""))
            }
        } else {
            skipped.append(SkippedCheck(.appVersion, "no expected app version configured"))
        }
        if let device = deviceIdentifier {
            if Self.deviceHash(device: device, receipt: receipt) != receipt.sha1Hash {
                failures.append(
                    VerificationFailure(.deviceHashMismatch, "the receipt's hash does not match this device identifier")
                )
            }
        } else {
            skipped.append(SkippedCheck(.deviceHash, "no device identifier given"))
        }
        if let expected = policy.environments {
            // An Xcode-signed receipt is Xcode's whatever its attribute says (as the verdict's `environment` reads it).
            let claimed = chainKind == .xcodeTest ? .xcode : receipt.environment
            failures += Self.environmentFailures(claimed, chainKind: chainKind, expected: expected)
        } else {
            skipped.append(SkippedCheck(.environment, "no expected environments configured"))
        }
        if let expiration = receipt.expirationDate, expiration < now {
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

    /// The device identifier bytes of a UUID (`identifierForVendor` on iOS): its 16 bytes.
    public static func deviceIdentifier(_ uuid: UUID) -> [UInt8] {
        withUnsafeBytes(of: uuid.uuid) { Array($0) }
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
