import Foundation
import IAPReceipts
import IAPSignedData
import IAPTrust
import SwiftASN1
import X509

/// What the inspector page shows for a pasted or uploaded document: its kind, every field decoded, and the verdict of
/// every check, made with the verifiers of the app the document names (Apple's roots for a configured app, the
/// simulator's for the simulated one).
///
/// It takes whatever a developer has at hand: a compact JWS (transaction, renewal information, app transaction,
/// notification), a notification body (`{"signedPayload": ...}`), a `verifyReceipt` request body
/// (`{"receipt-data": ...}`), or a receipt in base64.
struct DocumentInspector: Sendable {
    let service: ValidationService

    /// One check of a verification, in the order checks run, with the failure codes that mean it failed and the
    /// skipped-check codes that mean it was not made.
    struct Check {
        let name: String
        let failures: Set<String>
        let skips: Set<String>
        /// Whether this check stands for the documents nested in this one: it claims every failure that names a field.
        var nested = false
        /// Failures of earlier checks that mean this one could not be made (no leaf key to check a signature with).
        var unmadeAfter: Set<String> = []
    }

    /// What leaves a verifier without a leaf key: then no signature was checked.
    static let noLeafKey: Set<String> = [
        "malformedCertificate", "tooManyCertificates", "signerCertificateNotFound", "certificateChainMissing",
        "signedDateMissing", "creationDateMissing", "unexpectedSignerCount", "unsupportedSignatureAlgorithm",
    ]

    static let jwsChecks: [Check] = [
        Check(
            name: "Header: ES256, no foreign key source, a certificate chain",
            failures: [
                "algorithmNotAllowed", "headerMemberNotAllowed", "certificateChainMissing", "unsupportedKeyType",
            ],
            skips: []),
        Check(
            name: "Certificate chain to a trusted root, valid at the signed date",
            failures: [
                "chainUntrusted", "certificateExpired", "certificateNotYetValid", "leafMarkerMissing",
                "intermediateMarkerMissing", "leafIsCertificateAuthority", "unexpectedChainLength",
                "xcodeSignedNotAllowed", "malformedCertificate", "tooManyCertificates", "signedDateMissing",
            ],
            skips: ["chainAndSignature"]),
        Check(
            name: "Signature by the leaf certificate", failures: ["signatureInvalid"],
            skips: ["signature", "chainAndSignature"], unmadeAfter: noLeafKey),
        Check(name: "Bundle id", failures: ["bundleIdMismatch"], skips: ["bundleId"]),
        Check(name: "App Apple id", failures: ["appAppleIdMismatch"], skips: []),
        Check(name: "Environment", failures: ["environmentMismatch"], skips: ["environment"]),
        Check(
            name: "Nested documents (a notification's transaction and renewal information)",
            failures: ["malformedDocument", "renewalInfoMismatch"], skips: [], nested: true),
    ]

    static let receiptChecks: [Check] = [
        Check(
            name: "PKCS #7 structure: one signer, SHA-1 or SHA-256 with RSA, data content",
            failures: ["contentTypeMismatch", "unsupportedSignatureAlgorithm", "unexpectedSignerCount"], skips: []),
        Check(
            name: "Certificate chain to a trusted root",
            failures: [
                "chainUntrusted", "certificateExpired", "certificateNotYetValid", "leafMarkerMissing",
                "intermediateMarkerMissing", "leafIsCertificateAuthority", "unexpectedChainLength",
                "xcodeSignedNotAllowed", "malformedCertificate", "tooManyCertificates", "signerCertificateNotFound",
            ],
            skips: ["chainAndSignature"]),
        Check(
            name: "Signature over the receipt", failures: ["signatureInvalid", "messageDigestMismatch"],
            skips: ["signature", "chainAndSignature"], unmadeAfter: noLeafKey),
        Check(name: "Bundle id", failures: ["bundleIdMismatch"], skips: ["bundleId"]),
        Check(name: "App version", failures: ["appVersionMismatch"], skips: ["appVersion"]),
        Check(name: "Device hash", failures: ["deviceHashMismatch"], skips: ["deviceHash"]),
        Check(name: "Environment", failures: ["environmentMismatch"], skips: ["environment"]),
        Check(name: "Creation and expiration dates", failures: ["creationDateMissing", "receiptExpired"], skips: []),
    ]

    /// Inspects `text`; throws a 400 with a stable code when it is no document at all.
    func inspect(_ text: String) async throws(APIError) -> JSONValue {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw .badRequest("missingDocument", "paste a receipt, a JWS or a notification") }
        if trimmed.hasPrefix("{") {
            let body: JSONValue
            do { body = try JSONValue(jsonBytes: Array(trimmed.utf8)) } catch {
                throw .badRequest(error.code.rawValue, "the JSON does not parse: \(error.reason)")
            }
            if let payload = body["signedPayload"]?.stringValue { return try await jws(payload, source: "body") }
            if let data = body["receipt-data"]?.stringValue { return try await receipt(data) }
            throw .badRequest(
                "unknownDocument",
                "the JSON has neither 'signedPayload' (a notification) nor 'receipt-data' (a receipt)")
        }
        if trimmed.split(separator: ".", omittingEmptySubsequences: false).count == 3 {
            return try await jws(trimmed, source: nil)
        }
        return try await receipt(trimmed)
    }

    // MARK: - Signed data

    private func jws(_ text: String, source: String?) async throws(APIError) -> JSONValue {
        let compact: CompactJWS
        do { compact = try CompactJWS(text) } catch {
            throw .badRequest(error.code.rawValue, "not a compact JWS: \(error.reason)")
        }
        guard let kind = SignedPayloadKind.detect(payload: compact.payload) else {
            throw .badRequest("unknownPayloadType", "the payload is not a known App Store document")
        }
        let named = (try? JSONValue(jsonBytes: compact.payload)).flatMap(Self.bundleID(in:))
        var answer = JSONObject()
        answer["kind"] = .string(kind.rawValue)
        answer["header"] = Self.header(compact.header)
        guard let app = servedApp(named: named) else {
            return .object(
                unverified(
                    answer, payload: (try? JSONValue(jsonBytes: compact.payload)) ?? .null, named: named))
        }
        let verdict: SignedDataVerdict<SignedPayload>
        do { verdict = try await app.signedData.verify(text, as: kind) } catch {
            throw .badRequest(error.code.rawValue, error.reason)
        }
        answer["app"] = .string(app.configuration.bundleID)
        answer["valid"] = .bool(verdict.isValid)
        answer["checks"] = Self.checks(
            Self.jwsChecks, failures: verdict.failures.map { ($0.code.rawValue, $0.reason, $0.field) },
            skipped: verdict.skippedChecks.map { ($0.code.rawValue, $0.reason) })
        answer["chain"] = Self.chain(verdict.chainKind, verdict.chain)
        answer["advice"] = Self.advice(failures: verdict.failures.map(\.code.rawValue), app: app.configuration.bundleID)
        answer["fields"] = verdict.payload?.json ?? (try? JSONValue(jsonBytes: compact.payload)) ?? .null
        answer["nested"] = .array(
            verdict.nested.map { nested in
                var object = JSONObject()
                object["field"] = .string(nested.field)
                object["kind"] = nested.verdict.payload.map { .string($0.kind.rawValue) } ?? .null
                object["valid"] = .bool(nested.verdict.isValid)
                object["fields"] = nested.verdict.payload?.json ?? .null
                return .object(object)
            })
        return .object(answer)
    }

    /// A document for no app this server serves: decoded, not verified, and said so.
    private func unverified(_ answer: JSONObject, payload: JSONValue, named: String?) -> JSONObject {
        var answer = answer
        answer["valid"] = .bool(false)
        answer["app"] = .null
        answer["checks"] = .array([
            Self.row(
                "Known app", "failed",
                "the document is for \(named ?? "no named app"); this server serves "
                    + service.bundleIDs.sorted().joined(separator: ", ")
                    + ", so it has no roots or rules to check it by",
                code: "unknownApp")
        ])
        answer["advice"] = .string(
            "To check documents of \(named ?? "this app"), serve the app: start iapkit serve with --config FILE "
                + "naming it (\"apps\": [\"mine\"], \"app\": {\"mine\": {\"bundleId\": \"\(named ?? "BUNDLE_ID")\", "
                + "\"roots\": [\"AppleRootCA-G3.cer\", \"AppleIncRootCertificate.cer\"]}}), Apple's root certificates "
                + "downloaded from apple.com/certificateauthority. Documents made by iapkit simulate name the bundle "
                + "id it was given (--bundle-id).")
        answer["fields"] = payload
        answer["nested"] = .array([])
        return answer
    }

    /// The served app whose rules check a document naming `named`: that app, or the only app when the document
    /// names none; nil when it names an app this server does not serve.
    private func servedApp(named: String?) -> ServedApp? {
        if let named { return service.bundleIDs.contains(named) ? try? service.app(bundleID: named) : nil }
        return service.bundleIDs.count == 1 ? try? service.app(bundleID: nil) : nil
    }

    /// What to do about failures that come from this server's configuration rather than from the document: a
    /// chain to a root the app does not trust.
    static func advice(failures: [String], app: String) -> JSONValue {
        guard failures.contains("chainUntrusted") else { return .null }
        return .string(
            "The certificate chain leads to a root \(app) does not trust here. A document from the App Store needs "
                + "Apple's root in the app's roots (--config: app.NAME.roots, AppleRootCA-G3.cer for signed data, "
                + "AppleIncRootCertificate.cer for receipts). A document from another run of the local App Store "
                + "verifies only with that run's authority: start iapkit serve and iapkit simulate with the same "
                + "--pki DIR.")
    }

    private static func bundleID(in payload: JSONValue) -> String? {
        payload["bundleId"]?.stringValue ?? payload["data"]?["bundleId"]?.stringValue
            ?? payload["appData"]?["bundleId"]?.stringValue
    }

    private static func header(_ header: JWSHeader) -> JSONValue {
        var object = JSONObject()
        object["alg"] = .string(header.algorithm)
        if let keyID = header.keyID { object["kid"] = .string(keyID) }
        object["x5c"] = .array(
            (header.certificateChain ?? []).map { der in
                guard let certificate = try? Certificate(derEncoded: der) else { return .string("(not a certificate)") }
                return certificateJSON(certificate)
            })
        return .object(object)
    }

    // MARK: - Receipts

    private func receipt(_ base64: String) async throws(APIError) -> JSONValue {
        let compact = base64.filter { !$0.isWhitespace }
        guard let bytes = Data(base64Encoded: compact) else {
            throw .badRequest(
                "unknownDocument", "this is neither a compact JWS, nor JSON, nor a receipt in base64")
        }
        let signed: SignedReceipt
        do { signed = try SignedReceipt(bytes: bytes) } catch {
            throw .badRequest(error.code.rawValue, "not an App Store receipt: \(error.reason)")
        }
        var answer = JSONObject()
        answer["kind"] = .string("receipt")
        let now = service.now
        let fields = LegacyReceiptJSON.receipt(signed.receipt, requestDate: now)
        guard let app = servedApp(named: signed.receipt.bundleID) else {
            return .object(unverified(answer, payload: fields, named: signed.receipt.bundleID))
        }
        let verdict = await app.receipts.verify(signed, at: now)
        answer["app"] = .string(app.configuration.bundleID)
        answer["valid"] = .bool(verdict.isValid)
        answer["checks"] = Self.checks(
            Self.receiptChecks, failures: verdict.failures.map { ($0.code.rawValue, $0.reason, $0.field) },
            skipped: verdict.skippedChecks.map { ($0.code.rawValue, $0.reason) })
        answer["chain"] = Self.chain(verdict.chainKind, verdict.chain)
        answer["advice"] = Self.advice(failures: verdict.failures.map(\.code.rawValue), app: app.configuration.bundleID)
        answer["digest"] = verdict.digestAlgorithm.map { .string($0) } ?? .null
        answer["fields"] = fields
        answer["nested"] = .array([])
        return .object(answer)
    }

    // MARK: - Checks

    /// Every check with its status: failed (with each reason), skipped (with why), or passed. A failure no check
    /// claims is listed on its own, so nothing the verifier said is hidden.
    static func checks(
        _ checks: [Check], failures: [(code: String, reason: String, field: String?)],
        skipped: [(code: String, reason: String)]
    ) -> JSONValue {
        var rows: [JSONValue] = []
        var claimed = Set<String>()
        for check in checks {
            let failed = failures.filter {
                check.nested
                    ? ($0.field != nil || check.failures.contains($0.code))
                    : ($0.field == nil && check.failures.contains($0.code))
            }
            let skips = skipped.filter { check.skips.contains($0.code) }
            if !failed.isEmpty {
                for failure in failed { claimed.insert(failure.code + (failure.field ?? "")) }
                rows.append(
                    Self.row(
                        check.name, "failed",
                        failed.map { ($0.field.map { "\($0): " } ?? "") + $0.reason }.joined(separator: "; "),
                        code: failed.map(\.code).joined(separator: ", ")))
            } else if !skips.isEmpty {
                rows.append(
                    Self.row(
                        check.name, "skipped", skips.map(\.reason).joined(separator: "; "),
                        code: skips.map(\.code).joined(separator: ", ")))
            } else if let blocker = failures.first(where: { $0.field == nil && check.unmadeAfter.contains($0.code) }) {
                rows.append(Self.row(check.name, "skipped", "not made: \(blocker.reason)", code: nil))
            } else {
                rows.append(Self.row(check.name, "passed", nil, code: nil))
            }
        }
        for failure in failures where !claimed.contains(failure.code + (failure.field ?? "")) {
            rows.append(Self.row(failure.code, "failed", failure.reason, code: failure.code))
        }
        return .array(rows)
    }

    private static func row(_ name: String, _ status: String, _ detail: String?, code: String?) -> JSONValue {
        var object = JSONObject()
        object["name"] = .string(name)
        object["status"] = .string(status)
        if let detail { object["detail"] = .string(detail) }
        if let code { object["code"] = .string(code) }
        return .object(object)
    }

    private static func chain(_ kind: ChainKind?, _ certificates: [Certificate]) -> JSONValue {
        var object = JSONObject()
        let trust =
            switch kind {
            case .apple: "a trusted root"
            case .xcodeTest: "Xcode's StoreKit test certificate (insecure)"
            case nil: "untrusted"
            }
        object["trust"] = .string(trust)
        object["certificates"] = .array(certificates.map(certificateJSON))
        return .object(object)
    }

    private static func certificateJSON(_ certificate: Certificate) -> JSONValue {
        var object = JSONObject()
        object["subject"] = .string(certificate.subject.commonName ?? certificate.subject.description)
        object["issuer"] = .string(certificate.issuer.commonName ?? certificate.issuer.description)
        object["notValidBefore"] = .string(DateFormat.text(certificate.notValidBefore))
        object["notValidAfter"] = .string(DateFormat.text(certificate.notValidAfter))
        object["sha256"] = .string(TrustAnchorLoader.sha256Fingerprint(of: certificate))
        return .object(object)
    }
}
