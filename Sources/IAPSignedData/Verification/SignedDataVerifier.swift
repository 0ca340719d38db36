import Crypto
import Foundation
public import IAPCore
public import IAPTrust
import X509

/// Verifies the App Store's signed documents (StoreKit 2 transactions, renewal information, app transactions, and App
/// Store Server Notifications V2 with the documents inside them).
///
/// Checks, in order: `alg` is ES256 and the header names no other key source; `x5c` holds exactly three
/// certificates; they chain to a configured root (compared by key and signature, not name) at the payload's signed
/// date, with Apple's marker OIDs on leaf and intermediate; the signature verifies with the leaf's key; then the bundle
/// id, the app Apple id and the environment match the configuration. Every failed check is reported. Text that is not
/// a document at all throws ``SignedDataParsingError``; anything that parses gets a verdict.
///
/// A verifier is made for one app (its ``Configuration``), as a `ReceiptVerifier` is. A chain verified once is
/// remembered (by its exact bytes, inside its validity window), so steady-state cost is one P-256 signature check and
/// one payload decode per document. One verifier is safe to share between tasks.
public final class SignedDataVerifier: Sendable {
    /// Which app and environments documents must be for.
    public struct Configuration: Sendable, Hashable {
        /// The bundle id transactions, app transactions and notifications must name. Nil skips the check (and the
        /// verdict says so): servers should always set it.
        public var bundleID: String?
        /// The app's Apple id: required for Production, checked wherever a payload names one.
        public var appAppleID: Int64?
        /// The environments payloads may name; nil skips the check (and the verdict says so). Xcode-signed data is
        /// accepted only when the trust store lists the Xcode certificate
        /// (`TrustStore/insecurelyAcceptingXcodeTestCertificates(_:)`) and this is nil or contains `.xcode`.
        public var environments: Set<AppStoreEnvironment>?

        public init(bundleID: String? = nil, appAppleID: Int64? = nil, environments: Set<AppStoreEnvironment>? = nil) {
            self.bundleID = bundleID
            self.appAppleID = appAppleID
            self.environments = environments
        }
    }

    /// Why a verifier could not be made.
    public struct ConfigurationError: CodedError, Sendable {
        public let code: String
        public let reason: String
    }

    /// What this verifier expects of documents.
    public let configuration: Configuration
    /// Checks certificate chains and remembers the ones it verified.
    private let chains: ChainVerifier
    private let headerCache = JWSHeaderCache()
    private let signatures: SignatureMemory

    /// - Parameters:
    ///   - trustStore: the roots documents must chain to.
    ///   - configuration: which app and environments documents must be for.
    ///   - cacheCapacity: how many distinct verified chains to remember.
    ///   - signatureMemory: how many verified signatures to remember (40 bytes each, at most 1,048,576), so the same
    ///     document verified again skips its P-256 check; 0 (the default) remembers none. A server that sees the same
    ///     documents again (apps post them at every launch) should.
    /// - Throws: ``ConfigurationError`` `appAppleIdRequired` when Production is accepted without an app Apple id.
    public init(
        trustStore: TrustStore, configuration: Configuration = Configuration(), cacheCapacity: Int = 256,
        signatureMemory: Int = 0
    ) throws(ConfigurationError) {
        if configuration.environments?.contains(.production) == true, configuration.appAppleID == nil {
            throw ConfigurationError(
                code: "appAppleIdRequired", reason: "a Production verifier needs the app's Apple id to check")
        }
        self.configuration = configuration
        self.chains = ChainVerifier(trustStore: trustStore, cacheCapacity: cacheCapacity)
        self.signatures = SignatureMemory(capacity: signatureMemory)
    }

    /// How many verified chains are remembered now.
    public var cachedChainCount: Int { chains.cachedChainCount }

    /// How many signatures this verifier has checked with P-256 so far (not answered from its signature memory).
    public var signatureChecks: Int { signatures.checks }

    // MARK: Entry points

    /// Verifies a signed transaction (`signedTransactionInfo`, StoreKit 2's `jwsRepresentation`).
    nonisolated(nonsending) public func verifyTransaction(_ jws: String) async throws(SignedDataParsingError)
        -> SignedDataVerdict<TransactionPayload>
    {
        await verifyDocument(try parse(jws, as: TransactionPayload.self))
    }

    /// Verifies signed renewal information on its own.
    ///
    /// Renewal information names no bundle id, so this verdict cannot say which app it is for (it lists that among
    /// its skipped checks). Prefer ``verifyRenewalInfo(_:for:)`` with the verified transaction it belongs to.
    nonisolated(nonsending) public func verifyRenewalInfo(_ jws: String) async throws(SignedDataParsingError)
        -> SignedDataVerdict<RenewalInfoPayload>
    {
        await verifyDocument(try parse(jws, as: RenewalInfoPayload.self))
    }

    /// Verifies signed renewal information and ties it to a verified transaction: both must have the same original
    /// transaction id, so the renewal information is for this app.
    nonisolated(nonsending) public func verifyRenewalInfo(
        _ jws: String, for transaction: TransactionPayload
    ) async throws(SignedDataParsingError) -> SignedDataVerdict<RenewalInfoPayload> {
        Self.tie(await verifyDocument(try parse(jws, as: RenewalInfoPayload.self)), to: transaction)
    }

    /// Verifies a signed app transaction.
    nonisolated(nonsending) public func verifyAppTransaction(_ jws: String) async throws(SignedDataParsingError)
        -> SignedDataVerdict<AppTransactionPayload>
    {
        await verifyDocument(try parse(jws, as: AppTransactionPayload.self))
    }

    /// Verifies an App Store Server Notification V2 (`signedPayload`), and the transaction, renewal information or app
    /// transaction it carries, with the same rules.
    nonisolated(nonsending) public func verifyNotification(_ jws: String) async throws(SignedDataParsingError)
        -> SignedDataVerdict<NotificationPayload>
    {
        await verifyNotification(try parse(jws, as: NotificationPayload.self))
    }

    /// Verifies a document of any kind, found from its payload (see ``SignedPayloadKind/detect(payload:)``), or of
    /// the kind given. Throws `unknownPayloadType` when no kind is given and the payload looks like none.
    nonisolated(nonsending) public func verify(
        _ jws: String, as kind: SignedPayloadKind? = nil
    ) async throws(SignedDataParsingError) -> SignedDataVerdict<SignedPayload> {
        try await verify(bytes: Array(jws.utf8), as: kind)
    }

    /// Verifies a document given as the bytes of its compact JWS (as read from a file: surrounding whitespace is
    /// ignored), of the kind given or found from its payload.
    nonisolated(nonsending) public func verify(
        bytes jws: [UInt8], as kind: SignedPayloadKind? = nil
    ) async throws(SignedDataParsingError) -> SignedDataVerdict<SignedPayload> {
        let compact = try CompactJWS(bytes: jws, headerCache: headerCache)
        guard let kind = kind ?? SignedPayloadKind.detect(payload: compact.payload) else {
            throw SignedDataParsingError(.unknownPayloadType, "the payload is not a known App Store document")
        }
        switch kind {
        case .transaction:
            return await verifyDocument(try decode(compact, as: TransactionPayload.self)).mapPayload {
                .transaction($0)
            }
        case .renewalInfo:
            return await verifyDocument(try decode(compact, as: RenewalInfoPayload.self)).mapPayload {
                .renewalInfo($0)
            }
        case .appTransaction:
            return await verifyDocument(try decode(compact, as: AppTransactionPayload.self)).mapPayload {
                .appTransaction($0)
            }
        case .notification:
            return await verifyNotification(try decode(compact, as: NotificationPayload.self)).mapPayload {
                .notification($0)
            }
        }
    }

    // MARK: The checks

    nonisolated(nonsending) private func verifyNotification(_ document: ParsedDocument<NotificationPayload>) async
        -> SignedDataVerdict<NotificationPayload>
    {
        let outer = await verifyDocument(document)
        guard let notification = outer.payload else { return outer }
        var nested: [NestedVerdict] = []
        var transaction: TransactionPayload?
        if let signed = notification.data?.signedTransactionInfo {
            let verdict = await verifyNested(signed, as: TransactionPayload.self)
            transaction = verdict.verifiedPayload
            nested.append(
                NestedVerdict(field: "data.signedTransactionInfo", verdict: verdict.mapPayload { .transaction($0) }))
        }
        if let signed = notification.data?.signedRenewalInfo {
            var verdict = await verifyNested(signed, as: RenewalInfoPayload.self)
            if let transaction { verdict = Self.tie(verdict, to: transaction) }
            nested.append(
                NestedVerdict(field: "data.signedRenewalInfo", verdict: verdict.mapPayload { .renewalInfo($0) }))
        }
        if let signed = notification.appData?.signedAppTransactionInfo {
            let verdict = await verifyNested(signed, as: AppTransactionPayload.self)
            nested.append(
                NestedVerdict(
                    field: "appData.signedAppTransactionInfo", verdict: verdict.mapPayload { .appTransaction($0) }))
        }
        var failures = outer.failures
        for item in nested { failures += item.verdict.failures.map { $0.nested(in: item.field) } }
        return SignedDataVerdict(
            payload: notification, header: outer.header, failures: failures, skippedChecks: outer.skippedChecks,
            chainKind: outer.chainKind, chain: outer.chain, chainValidationTime: outer.chainValidationTime,
            nested: nested)
    }

    /// A document inside another: one that does not parse is a failure of the document that holds it.
    nonisolated(nonsending) private func verifyNested<Payload: VerifiablePayload>(
        _ text: String, as type: Payload.Type
    ) async -> SignedDataVerdict<Payload> {
        do {
            return await verifyDocument(try parse(text, as: Payload.self))
        } catch {
            return SignedDataVerdict(
                payload: nil, header: nil,
                failures: [VerificationFailure(.malformedDocument, "\(error.code): \(error.reason)")],
                skippedChecks: [], chainKind: nil, chain: [], chainValidationTime: nil, nested: [])
        }
    }

    /// A compact JWS with its payload decoded as one document type.
    struct ParsedDocument<Payload: VerifiablePayload> {
        let jws: CompactJWS
        let payload: Payload
    }

    /// Splits and decodes a compact JWS once; the header comes from the cache when it was seen recently.
    private func parseCompact(_ text: String) throws(SignedDataParsingError) -> CompactJWS {
        try CompactJWS(bytes: Array(text.utf8), headerCache: headerCache)
    }

    private func decode<Payload: VerifiablePayload>(_ jws: CompactJWS, as type: Payload.Type)
        throws(SignedDataParsingError) -> ParsedDocument<Payload>
    {
        let payload = try jws.decodePayload(as: Payload.self)
        if let key = Payload.foreignKeys.first(where: { payload.additionalFields[$0] != nil }) {
            throw SignedDataParsingError(
                .wrongPayloadType, "the payload holds \(key), which this kind of document never has: it is another kind"
            )
        }
        return ParsedDocument(jws: jws, payload: payload)
    }

    private func parse<Payload: VerifiablePayload>(_ text: String, as type: Payload.Type)
        throws(SignedDataParsingError) -> ParsedDocument<Payload>
    {
        try decode(try parseCompact(text), as: Payload.self)
    }

    nonisolated(nonsending) private func verifyDocument<Payload: VerifiablePayload>(
        _ document: ParsedDocument<Payload>
    ) async -> SignedDataVerdict<Payload> {
        let jws = document.jws
        let payload = document.payload
        var failures: [VerificationFailure] = []
        var skipped: [SkippedCheck] = []

        // 1. The algorithm, and no other key source.
        let algorithmAllowed = jws.header.algorithm == "ES256"
        if !algorithmAllowed {
            failures.append(
                VerificationFailure(.algorithmNotAllowed, "alg is \"\(jws.header.algorithm)\"; only ES256 is accepted"))
        }
        for member in JWSHeader.refusedMembers where jws.header.fields[member] != nil {
            failures.append(
                VerificationFailure(.headerMemberNotAllowed, "the header has \"\(member)\", which is never used"))
        }

        // 2-4. The chain at the signed date, then the signature with the leaf's key.
        var chain = ChainVerification(leafPublicKey: nil, chain: [], kind: nil, failures: [])
        var validationTime: Date?
        let leafCertificate = jws.header.certificateChain?.first ?? []
        if let certificates = jws.header.certificateChain {
            if certificates.count != 3, certificates.count != 1 {
                failures.append(
                    VerificationFailure(.unexpectedChainLength, "x5c has \(certificates.count) certificates, not 3"))
                skipped.append(SkippedCheck(.chainAndSignature, "the x5c chain does not have 3 certificates"))
            } else if let date = payload.chainValidationDate {
                validationTime = date.date
                chain = await chains.verify(
                    certificates: certificates.map { $0[...] }, leaf: .first, at: date.date)
                failures += chain.failures
                // One certificate is Xcode's shape; anything else presented alone is a chain of the wrong length.
                if certificates.count == 1, !chain.isTrusted,
                    !chain.failures.contains(where: { $0.code == .xcodeSignedNotAllowed })
                {
                    failures.append(VerificationFailure(.unexpectedChainLength, "x5c has 1 certificate, not 3"))
                }
                if chain.kind == .xcodeTest, let environments = configuration.environments,
                    !environments.contains(.xcode)
                {
                    failures.append(
                        VerificationFailure(
                            .xcodeSignedNotAllowed,
                            "signed by an Xcode test certificate, but this verifier is for \(Self.names(environments))")
                    )
                }
            } else {
                failures.append(
                    VerificationFailure(.signedDateMissing, "the payload has no signedDate to check the chain at"))
                skipped.append(SkippedCheck(.chainAndSignature, "no signed date"))
            }
        } else {
            failures.append(VerificationFailure(.certificateChainMissing, "the header has no x5c certificate chain"))
        }
        if let leafKey = chain.leafPublicKey {
            if !algorithmAllowed {
                skipped.append(SkippedCheck(.signature, "alg is not ES256"))
            } else if let key = P256.Signing.PublicKey(leafKey) {
                if !signatures.isValid(
                    jws.signature, of: jws.signingInput, leaf: leafCertificate[...], key: key,
                    remember: chain.isTrusted)
                {
                    failures.append(
                        VerificationFailure(
                            .signatureInvalid, "the ES256 signature does not verify with the leaf's key"))
                }
            } else {
                failures.append(VerificationFailure(.unsupportedKeyType, "the leaf's key is not a P-256 key"))
            }
        }

        // 5. What the payload claims.
        failures += claimFailures(of: payload, skipped: &skipped)

        return SignedDataVerdict(
            payload: payload, header: jws.header, failures: failures, skippedChecks: skipped, chainKind: chain.kind,
            chain: chain.chain, chainValidationTime: validationTime, nested: [])
    }

    private func claimFailures(of payload: some VerifiablePayload, skipped: inout [SkippedCheck])
        -> [VerificationFailure]
    {
        var failures: [VerificationFailure] = []
        switch (payload.claimedBundleID, configuration.bundleID) {
        case (.none, _):
            skipped.append(
                SkippedCheck(.bundleID, "renewal information names none; tie it to a verified transaction"))
        case (.some, nil):
            skipped.append(SkippedCheck(.bundleID, "no expected bundle id configured"))
        case (.some(let bundleID), let expected?) where bundleID != expected:
            let claimed = bundleID.map { "\"\($0)\"" } ?? "missing"
            failures.append(VerificationFailure(.bundleIDMismatch, "the bundle id is \(claimed), not \"\(expected)\""))
        case (.some, .some): break
        }
        if case .some(let appAppleID) = payload.claimedAppAppleID, let expected = configuration.appAppleID,
            appAppleID != expected, appAppleID != nil || configuration.environments?.contains(.production) == true
        {
            let claimed = appAppleID.map(String.init) ?? "missing"
            failures.append(VerificationFailure(.appAppleIDMismatch, "the app Apple id is \(claimed), not \(expected)"))
        }
        if let expected = configuration.environments {
            if !(payload.claimedEnvironment.map(expected.contains) ?? false) {
                let claimed = payload.claimedEnvironment?.rawValue ?? "missing"
                failures.append(
                    VerificationFailure(
                        .environmentMismatch, "the environment is \(claimed), not \(Self.names(expected))"))
            }
        } else {
            skipped.append(SkippedCheck(.environment, "no expected environments configured"))
        }
        return failures
    }

    private static func names(_ environments: Set<AppStoreEnvironment>) -> String {
        environments.map(\.rawValue).sorted().joined(separator: " or ")
    }

    private static func tie(
        _ verdict: SignedDataVerdict<RenewalInfoPayload>, to transaction: TransactionPayload
    ) -> SignedDataVerdict<RenewalInfoPayload> {
        var failures = verdict.failures
        let renewalOriginal = verdict.payload?.originalTransactionID
        if verdict.payload != nil, renewalOriginal != transaction.originalTransactionID {
            failures.append(
                VerificationFailure(
                    .renewalInfoMismatch,
                    "the renewal information is for original transaction \(renewalOriginal ?? "none"), "
                        + "the transaction's is \(transaction.originalTransactionID ?? "none")"))
        }
        return SignedDataVerdict(
            payload: verdict.payload, header: verdict.header, failures: failures,
            skippedChecks: verdict.skippedChecks.filter { $0.code != .bundleID }, chainKind: verdict.chainKind,
            chain: verdict.chain, chainValidationTime: verdict.chainValidationTime, nested: verdict.nested)
    }
}
