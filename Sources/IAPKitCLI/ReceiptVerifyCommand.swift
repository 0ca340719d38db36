public import ArgumentParser
public import Foundation
import IAPReceipts
import IAPTrust
import X509

/// `iapkit receipt verify FILE... --root CERT ...`: one verdict per file, a summary, exit 0 only if all are valid.
public struct ReceiptVerifyCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify receipts: signature, certificate chain, bundle id, version, device hash, expiration.",
        discussion: """
            The chain is validated at each receipt's creation date, as Apple's certificates in old receipts have long \
            expired. Exit status: 0 when every file is valid, 1 otherwise.
            Example: iapkit receipt verify *.der --root AppleIncRootCertificate.cer --bundle-id com.example.app
            """
    )

    @OptionGroup var input: BulkInputOptions

    @OptionGroup var trust: TrustOptions

    @Option(name: .customLong("bundle-id"), help: "The bundle id every receipt must carry.")
    var bundleID: String?

    @Option(name: .customLong("app-version"), help: "The app version (CFBundleVersion) every receipt must carry.")
    var appVersion: String?

    @Option(
        help: """
            An environment every receipt may come from: Production, Sandbox (also ProductionSandbox) or Xcode. \
            Repeatable. Without it the environment is not checked, and each verdict says so.
            """)
    var environment: [String] = []

    @Option(name: .customLong("device-id"), help: "The device identifier (a UUID) the receipts' hash must match.")
    var deviceID: String?

    @Option(
        name: .customLong("chain-time"), help: "When to validate chains: creation (default), now, or an RFC 3339 date.")
    var chainTime = "creation"

    @Option(name: .customLong("now"), help: "The time expiration is judged at (RFC 3339; default: the current time).")
    var now: String?

    @Flag(help: "Print one JSON object per document (JSON Lines); the summary goes to standard error.")
    var json = false

    public init() {}

    public func validate() throws {
        if let deviceID, UUID(uuidString: deviceID) == nil { throw ValidationError("--device-id must be a UUID.") }
        if chainTime != "creation", chainTime != "now", Self.date(chainTime) == nil {
            throw ValidationError("--chain-time must be creation, now or an RFC 3339 date.")
        }
        if let now, Self.date(now) == nil {
            throw ValidationError("--now must be an RFC 3339 date.")
        }
        _ = try Self.environments(environment)
    }

    /// The receipt environments `--environment` values name; nil when none is given (not checked).
    static func environments(_ names: [String]) throws -> Set<ReceiptEnvironment>? {
        guard !names.isEmpty else { return nil }
        let known: [ReceiptEnvironment] = [.production, .sandbox, .productionSandbox, .xcode]
        return Set(
            try names.map { name in
                guard let environment = known.first(where: { $0.rawValue == name }) else {
                    throw ValidationError("--environment \(name): expected Production, Sandbox or Xcode.")
                }
                return environment
            })
    }

    public func run() async throws {
        let status = await execute(output: StandardOutput(), currentTime: Date())
        if status != 0 { throw ExitCode(status) }
    }

    /// Runs the command, writing to `output`; `currentTime` stands in for the clock. Returns the exit status.
    public func execute(output: some CommandOutput, currentTime: Date) async -> Int32 {
        guard let store = trust.trustStore(output: output) else { return 2 }
        let verifier = ReceiptVerifier(trustStore: store, configuration: configuration(currentTime: currentTime))
        let moment = now.flatMap(Self.date) ?? currentTime
        let device = deviceID.flatMap { UUID(uuidString: $0) }.map(ReceiptVerifier.deviceIdentifier)

        let json = self.json
        return await input.run(output: output, passed: "valid", failed: "invalid", summaryToStandardError: json) {
            item in
            await CommandText.result(
                of: item, json: json, failure: "INVALID", expecting: .receipt,
                errorJSON: { JSONLine.encode(VerdictReport(file: $0, parseFailure: $1)) }
            ) { bytes async throws in
                let verdict = try await verifier.verify(
                    ReceiptInput.receiptBytes(from: bytes), at: moment, deviceIdentifier: device)
                let text =
                    json
                    ? JSONLine.encode(VerdictReport(file: item.name, verdict: verdict))
                    : Self.describe(verdict, file: item.name)
                return BulkResult(text: text, failureCodes: verdict.failures.map(\.code.rawValue))
            }
        }
    }

    /// An RFC 3339 date option; `nil` when the text is not one (``validate()`` has refused those already).
    static func date(_ text: String) -> Date? {
        (try? ReceiptDate.parse(Array(text.utf8))) ?? nil
    }

    func configuration(currentTime: Date) -> ReceiptVerifier.Configuration {
        let chainValidation: ReceiptVerifier.Configuration.ChainValidationTime
        switch chainTime {
        case "creation": chainValidation = .receiptCreationDate
        case "now": chainValidation = .verificationTime
        default: chainValidation = Self.date(chainTime).map { .fixed($0) } ?? .verificationTime
        }
        return ReceiptVerifier.Configuration(
            bundleID: bundleID, appVersion: appVersion, environments: (try? Self.environments(environment)) ?? nil,
            chainValidationTime: chainValidation)
    }

    static func describe(_ verdict: ReceiptVerdict, file: String) -> String {
        let receipt = verdict.receipt
        let purchases = receipt.inAppPurchases.count
        var text = file
        text.reserveCapacity(file.utf8.count + 400)
        text += verdict.isValid ? ": VALID\n  " : ": INVALID\n  "
        text += receipt.bundleID
        text += " "
        text += receipt.appVersion
        text += ", "
        text += verdict.environment?.normalized ?? "unknown environment"
        text += ", "
        text += String(purchases)
        text += purchases == 1 ? " in-app purchase" : " in-app purchases"
        text += "\n  signed with "
        text += verdict.digestAlgorithm ?? "?"
        text += " by "
        text += CommandText.chain(verdict.chainKind, verdict.chain)
        text += ", checked at "
        text += ReceiptText.date(verdict.chainValidationTime)
        for failure in verdict.failures {
            text += "\n  " + failure.code.rawValue + ": " + failure.reason
        }
        if !verdict.skippedChecks.isEmpty {
            text += "\n  not checked: " + CommandText.skipped(verdict.skippedChecks)
        }
        return text
    }
}

/// The JSON view of one verdict.
struct VerdictReport: Encodable {
    let file: String
    let valid: Bool
    let failures: [String]
    let reasons: [ErrorReport.Detail]
    let environment: String?
    let bundleId: String?
    let chain: String?
    let digest: String?
    let skippedChecks: [ErrorReport.Detail]

    init(file: String, verdict: ReceiptVerdict) {
        self.file = file
        valid = verdict.isValid
        failures = verdict.failures.map(\.code.rawValue)
        reasons = verdict.failures.map { .init(code: $0.code.rawValue, reason: $0.reason) }
        environment = verdict.environment?.normalized
        bundleId = verdict.receipt.bundleID
        chain = verdict.chainKind?.rawValue
        digest = verdict.digestAlgorithm
        skippedChecks = verdict.skippedChecks.map { .init(code: $0.code.rawValue, reason: $0.reason) }
    }

    init(file: String, parseFailure: ErrorReport.Detail) {
        self.file = file
        valid = false
        failures = [parseFailure.code]
        reasons = [parseFailure]
        environment = nil
        bundleId = nil
        chain = nil
        digest = nil
        skippedChecks = []
    }

    enum Keys: String, CodingKey {
        case file, valid, failures, reasons, environment, bundleId, chain, digest, skippedChecks
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(file, forKey: .file)
        try c.encode(valid, forKey: .valid)
        try c.encode(failures, forKey: .failures)
        try c.encode(reasons, forKey: .reasons)
        try c.encode(environment, forKey: .environment)
        try c.encode(bundleId, forKey: .bundleId)
        try c.encode(chain, forKey: .chain)
        try c.encode(digest, forKey: .digest)
        try c.encode(skippedChecks, forKey: .skippedChecks)
    }
}
