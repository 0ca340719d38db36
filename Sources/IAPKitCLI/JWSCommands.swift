public import ArgumentParser
import Foundation
import IAPSignedData
import IAPTrust
import X509

/// `iapkit jws ...`: StoreKit 2 and App Store Server signed data.
public struct JWSCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "jws",
        abstract: "Decode and verify signed transactions, renewal info, app transactions and notifications (JWS).",
        subcommands: [JWSDecodeCommand.self, JWSVerifyCommand.self]
    )

    public init() {}
}

/// Finds the compact JWS in a document: the document itself, or a notification body's `signedPayload`.
enum JWSInput {
    /// The JWS bytes in `bytes`: the `signedPayload` of a notification body `{"signedPayload": "..."}`, else the
    /// bytes as they are (the parser trims whitespace and says what is wrong with anything else).
    static func document(in bytes: [UInt8]) -> [UInt8] {
        guard bytes.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }) == UInt8(ascii: "{"),
            let body = try? JSONValue(jsonBytes: bytes), let signed = body["signedPayload"]?.stringValue
        else { return bytes }
        return Array(signed.utf8)
    }

    /// The JWS in `bytes` when they hold one (compact JWS text or a notification body); `nil` for anything else,
    /// such as a receipt.
    static func text(from bytes: [UInt8]) -> String? {
        let document = document(in: bytes)
        guard document.count < 1 << 20, let text = String(validating: document, as: UTF8.self) else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.hasPrefix("eyJ") && trimmed.count { $0 == "." } == 2 ? trimmed : nil
    }
}

/// `iapkit jws decode FILE... [--json]`: header and payload, without verifying anything.
public struct JWSDecodeCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Print a JWS's header (algorithm, certificates) and payload. Nothing is verified.",
        discussion: """
            A file holds a compact JWS, or a notification request body {"signedPayload": "..."}. Documents nested \
            in a notification are decoded too.
            """
    )

    @OptionGroup var input: BulkInputOptions

    @Flag(help: "Print one JSON object per document (JSON Lines).")
    var json = false

    public init() {}

    public func run() async throws {
        let status = await execute(output: StandardOutput())
        if status != 0 { throw ExitCode(status) }
    }

    /// Runs the command, writing to `output`. Returns the exit status: 0 when every document decoded.
    public func execute(output: some CommandOutput) async -> Int32 {
        let json = self.json
        return await input.run(output: output, passed: "decoded", failed: "failed", summaryToStandardError: true) {
            item in
            await CommandText.result(of: item, json: json, failure: "cannot decode", expecting: .jws) { bytes in
                let report = DecodedJWSReport(
                    file: item.name, field: nil, jws: try CompactJWS(bytes: JWSInput.document(in: bytes)))
                return .passed(json ? JSONLine.encode(report) : Self.describe(report, indent: ""))
            }
        }
    }

    static func describe(_ report: DecodedJWSReport, indent: String) -> String {
        var lines = ["\(indent)\(report.file ?? report.field ?? "JWS"): \(report.type ?? "unknown payload type")"]
        lines.append("\(indent)  alg \(report.algorithm)" + (report.keyID.map { ", kid \($0)" } ?? ""))
        for (index, certificate) in report.certificates.enumerated() {
            if let certificate {
                lines.append(
                    "\(indent)  x5c[\(index)] \(certificate.subject) (valid \(certificate.notValidBefore) to "
                        + "\(certificate.notValidAfter))")
            } else {
                lines.append("\(indent)  x5c[\(index)] not a certificate")
            }
        }
        let pretty = JSONLine.pretty(report.payload)
        lines += pretty.split(separator: "\n").map { "\(indent)  \($0)" }
        for nested in report.nested { lines.append(describe(nested, indent: indent + "  ")) }
        return lines.joined(separator: "\n")
    }
}

/// `iapkit jws verify FILE... --root CERT ...`: one verdict per file, a summary, exit 0 only if all are valid.
public struct JWSVerifyCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract:
            "Verify signed data: ES256 only, x5c of three, chain at signedDate, markers, signature, app, environment.",
        discussion: """
            The chain is validated at each document's signedDate (Apple's certificates in old documents have long \
            expired). Documents nested in a notification are verified with the same rules. Exit status: 0 when every \
            file is valid, 1 otherwise, 2 for a bad root or option.
            Example: iapkit jws verify notification.json --root AppleRootCA-G3.cer --bundle-id com.example.app \
            --app-apple-id 1234567890 --environment Production
            """
    )

    @OptionGroup var input: BulkInputOptions

    @OptionGroup var trust: TrustOptions

    @Option(name: .customLong("bundle-id"), help: "The bundle id every document must name.")
    var bundleID: String?

    @OptionGroup var signedData: SignedDataOptions

    @Option(help: "Verify as this kind instead of guessing: transaction, renewalInfo, appTransaction, notification.")
    var type: String?

    @Flag(help: "Print one JSON object per document (JSON Lines); the summary goes to standard error.")
    var json = false

    public init() {}

    public func validate() throws {
        if let type, SignedPayloadKind(rawValue: type) == nil {
            throw ValidationError("--type must be transaction, renewalInfo, appTransaction or notification.")
        }
    }

    public func run() async throws {
        let status = await execute(output: StandardOutput())
        if status != 0 { throw ExitCode(status) }
    }

    /// Runs the command, writing to `output`. Returns the exit status.
    public func execute(output: some CommandOutput) async -> Int32 {
        guard let store = trust.trustStore(output: output) else { return 2 }
        guard let verifier = signedData.verifier(trustStore: store, bundleID: bundleID, output: output) else {
            return 2
        }
        let kind = type.flatMap(SignedPayloadKind.init)
        let json = self.json
        return await input.run(output: output, passed: "valid", failed: "invalid", summaryToStandardError: json) {
            item in
            await CommandText.result(of: item, json: json, failure: "INVALID", expecting: .jws) { bytes async throws in
                let verdict = try await verifier.verify(bytes: JWSInput.document(in: bytes), as: kind)
                let text =
                    json
                    ? JSONLine.encode(JWSVerdictReport(file: item.name, field: nil, verdict: verdict))
                    : Self.describe(verdict, name: item.name, indent: "")
                return BulkResult(text: text, failureCodes: verdict.failures.map(\.code.rawValue))
            }
        }
    }

    static func describe(_ verdict: SignedDataVerdict<SignedPayload>, name: String, indent: String) -> String {
        var lines = [
            "\(indent)\(name): \(verdict.isValid ? "VALID" : "INVALID") \(verdict.payload?.kind.rawValue ?? "")"
        ]
        if let payload = verdict.payload { lines.append("\(indent)  \(summary(of: payload))") }
        let chain = CommandText.chain(verdict.chainKind, verdict.chain)
        if let time = verdict.chainValidationTime {
            lines.append("\(indent)  signed by \(chain), checked at \(time.formatted(.iso8601))")
        } else {
            lines.append("\(indent)  chain not checked")
        }
        let ownFailures = verdict.failures.filter { $0.field == nil }
        for failure in ownFailures { lines.append(indent + "  " + failure.code.rawValue + ": " + failure.reason) }
        if !verdict.skippedChecks.isEmpty {
            lines.append("\(indent)  not checked: \(CommandText.skipped(verdict.skippedChecks))")
        }
        for nested in verdict.nested {
            lines.append(describe(nested.verdict, name: nested.field, indent: indent + "  "))
        }
        return lines.joined(separator: "\n")
    }

    static func summary(of payload: SignedPayload) -> String {
        switch payload {
        case .transaction(let t):
            return [
                t.bundleID, t.productID, t.type?.rawValue, t.transactionID.map { "transaction \($0)" },
                t.environment?.rawValue,
            ].compactMap { $0 }.joined(separator: ", ")
        case .renewalInfo(let r):
            return [
                r.productID, r.originalTransactionID.map { "original transaction \($0)" },
                r.autoRenewStatus.map { $0 == .on ? "renews" : "does not renew" }, r.environment?.rawValue,
            ].compactMap { $0 }.joined(separator: ", ")
        case .appTransaction(let a):
            return [a.bundleID, a.applicationVersion.map { "version \($0)" }, a.receiptType?.rawValue]
                .compactMap { $0 }.joined(separator: ", ")
        case .notification(let n):
            let what = [n.notificationType?.rawValue, n.subtype?.rawValue].compactMap { $0 }.joined(separator: "/")
            return [what, n.notificationUUID, n.data?.bundleID, n.data?.environment?.rawValue]
                .compactMap { $0 }.joined(separator: ", ")
        }
    }
}
