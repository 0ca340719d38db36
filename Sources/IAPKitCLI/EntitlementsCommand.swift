public import ArgumentParser
public import Foundation
import IAPCatalog
import IAPEntitlements
import IAPReceipts
import IAPSignedData
import IAPTrust

/// `iapkit entitlements FILE... --root CERT ...`: verify receipts and signed data, then say what the customer owns.
public struct EntitlementsCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "entitlements",
        abstract: "Verify a customer's receipts and signed transactions, then print what they own at a moment.",
        discussion: """
            Files may be app receipts (DER or base64), signed transactions, renewal infos, app transactions, or \
            notification bodies {"signedPayload": ...}, mixed. Each is verified with the same checks as `receipt \
            verify` and `jws verify`; only what verifies counts. Without --catalog, product types come from what the \
            records state (a receipt's type attribute, a transaction's type, an expiry date) and anything else is \
            reported as unclassified. Exit status: 0 when every file verified, 1 when one did not (the snapshot is \
            still printed from the others), 2 for a bad root, catalog or option.
            Example: iapkit entitlements receipt.der renewal.jws --root AppleIncRootCertificate.cer \
            --root AppleRootCA-G3.cer --catalog Products.storekit --at 2026-01-01T00:00:00Z
            """
    )

    @Argument(help: "Receipts and signed documents of one customer; - reads standard input.")
    var files: [String]

    @OptionGroup var trust: TrustOptions

    @Option(help: "A .storekit file or Products.plist giving product types, groups and service levels.")
    var catalog: String?

    @Option(help: "The moment to describe (RFC 3339; default: now).")
    var at: String?

    @Option(name: .customLong("bundle-id"), help: "The bundle id every receipt and document must carry.")
    var bundleID: String?

    @OptionGroup var signedData: SignedDataOptions

    @Option(
        name: .customLong("non-renewing-duration"),
        help:
            "How long non-renewing subscriptions last: PERIOD for all, or PRODUCT=PERIOD (ISO 8601, e.g. P1M). Repeatable."
    )
    var nonRenewingDurations: [String] = []

    @Flag(help: "Print one JSON object: the files' verdicts and the snapshot.")
    var json = false

    public init() {}

    public func validate() throws {
        if let at, ReceiptVerifyCommand.date(at) == nil { throw ValidationError("--at must be an RFC 3339 date.") }
        _ = try policy()
    }

    public func run() async throws {
        let status = await execute(output: StandardOutput(), currentTime: Date())
        if status != 0 { throw ExitCode(status) }
    }

    /// Runs the command, writing to `output`; `currentTime` stands in for the clock. Returns the exit status.
    public func execute(output: some CommandOutput, currentTime: Date) async -> Int32 {
        guard let store = trust.trustStore(output: output) else { return 2 }
        var loadedCatalog: Catalog?
        if let catalog {
            do {
                loadedCatalog = try Catalog.load(contentsOfFile: catalog)
            } catch {
                output.diagnostic("error: \(error.reason) [\(error.code)]")
                return 2
            }
        }
        guard let signedDataVerifier = signedData.verifier(trustStore: store, bundleID: bundleID, output: output) else {
            return 2
        }
        let moment = at.flatMap(ReceiptVerifyCommand.date) ?? currentTime
        // The same environment applies to receipts and signed data: a sandbox receipt grants nothing in Production.
        let receiptVerifier = ReceiptVerifier(
            trustStore: store,
            configuration: .init(
                bundleID: bundleID, environments: signedData.environment.map { [ReceiptEnvironment(rawValue: $0)] }))
        var bundleIDs = Set<String>()

        var history = PurchaseHistory()
        var reports: [EntitlementFileReport] = []
        for file in files {
            var report = EntitlementFileReport(file: file)
            do {
                let bytes = try InputFile.read(file)
                if let jws = JWSInput.text(from: bytes) {
                    let verdict = try await signedDataVerifier.verify(jws, as: nil)
                    report.kind = verdict.payload?.kind.rawValue
                    report.failures = verdict.failures.map {
                        .init(code: $0.code.rawValue, reason: $0.reason, field: $0.field)
                    }
                    if let added = history.add(verified: verdict), let payload = verdict.payload {
                        if let named = payload.bundleID { bundleIDs.insert(named) }
                        report.added = added
                        if added == 0, payload.kind != .appTransaction {
                            report.note =
                                "verified, but names no purchase (transaction id, product id and purchase "
                                + "date, or an original transaction id): nothing to count"
                        }
                    }
                } else {
                    let verdict = try await receiptVerifier.verify(ReceiptInput.receiptBytes(from: bytes), at: moment)
                    report.kind = "receipt"
                    report.failures = verdict.failures.map { .init(code: $0.code.rawValue, reason: $0.reason) }
                    if let added = history.add(verified: verdict) {
                        bundleIDs.insert(verdict.receipt.bundleID)
                        report.added = added
                    }
                }
            } catch {
                let (code, reason) = CommandText.codeAndReason(of: error)
                report.failures = [.init(code: code, reason: reason)]
            }
            reports.append(report)
        }

        // One customer of one app: without --bundle-id the verified documents must agree on the app.
        if bundleID == nil, bundleIDs.count > 1 {
            output.diagnostic(
                "error: the documents are for \(bundleIDs.count) apps (\(bundleIDs.sorted().joined(separator: ", "))); "
                    + "give --bundle-id to say which app's entitlements to count [severalApps]")
            return 2
        }
        // validate() has refused a bad policy already.
        let engine = EntitlementEngine(catalog: loadedCatalog, policy: (try? policy()) ?? EntitlementPolicy())
        let snapshot = engine.snapshot(of: history, at: moment)
        if json {
            output.line(JSONLine.encode(EntitlementsReport(files: reports, snapshot: snapshot)))
        } else {
            for report in reports where !report.valid {
                output.line("\(report.file): INVALID, not counted")
                for failure in report.failures { output.line("  \(failure.code): \(failure.reason)") }
            }
            for report in reports { if let note = report.note { output.line("\(report.file): \(note)") } }
            output.line(
                EntitlementText.describe(
                    snapshot, catalog: loadedCatalog, verifiedFiles: reports.count { $0.valid },
                    files: reports.count, history: history))
        }
        return reports.allSatisfy(\.valid) ? 0 : 1
    }

    /// The engine policy the `--non-renewing-duration` options describe.
    func policy() throws -> EntitlementPolicy {
        var policy = EntitlementPolicy()
        for option in nonRenewingDurations {
            let parts = option.split(separator: "=", maxSplits: 1).map(String.init)
            guard let period = SubscriptionPeriod(iso8601: parts.last ?? "") else {
                throw ValidationError("--non-renewing-duration \(option): expected PERIOD or PRODUCT=PERIOD, e.g. P1M.")
            }
            if parts.count == 2 {
                policy.nonRenewingDurations[parts[0]] = period
            } else {
                policy.defaultNonRenewingDuration = period
            }
        }
        return policy
    }
}

/// What one input file contributed.
struct EntitlementFileReport: Encodable {
    let file: String
    var kind: String?
    var failures: [ErrorReport.Detail] = []
    /// Records and renewal records taken from it.
    var added = 0
    /// Why a file that verified gave nothing.
    var note: String?
    var valid: Bool { failures.isEmpty && kind != nil }

    init(file: String) { self.file = file }

    enum Keys: String, CodingKey { case file, kind, valid, failures, added, note }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(file, forKey: .file)
        try c.encode(kind, forKey: .kind)
        try c.encode(valid, forKey: .valid)
        try c.encode(failures, forKey: .failures)
        try c.encode(added, forKey: .added)
        try c.encodeIfPresent(note, forKey: .note)
    }
}

struct EntitlementsReport: Encodable {
    let files: [EntitlementFileReport]
    let snapshot: EntitlementSnapshot
    var entitledProductIds: [String] { snapshot.entitledProductIDs.sorted() }

    enum Keys: String, CodingKey { case files, snapshot, entitledProductIds }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(files, forKey: .files)
        try c.encode(snapshot, forKey: .snapshot)
        try c.encode(entitledProductIds, forKey: .entitledProductIds)
    }
}

/// A snapshot as people read it.
enum EntitlementText {
    static func describe(
        _ snapshot: EntitlementSnapshot, catalog: Catalog?, verifiedFiles: Int, files: Int, history: PurchaseHistory
    ) -> String {
        func date(_ value: Date?) -> String { value.map { $0.formatted(.iso8601) } ?? "unknown" }
        func name(_ product: String) -> String {
            guard let found = catalog?.product(product) else { return product }
            let display = found.displayName(for: catalog?.settings.locale ?? "en_US")
            return display.isEmpty || display == product ? product : "\(product) (\(display))"
        }
        var lines = [
            "Entitlements at \(date(snapshot.moment)): \(verifiedFiles) of \(files) file\(files == 1 ? "" : "s") "
                + "verified, \(history.records.count) purchase record\(history.records.count == 1 ? "" : "s"), "
                + "\(history.renewals.count) renewal record\(history.renewals.count == 1 ? "" : "s")"
        ]
        let entitled = snapshot.entitledProductIDs.sorted()
        lines.append("  entitled now: \(entitled.isEmpty ? "nothing" : entitled.joined(separator: ", "))")

        if !snapshot.subscriptionGroups.isEmpty { lines.append("Subscriptions") }
        for group in snapshot.subscriptionGroups {
            let title =
                group.groupID.map { "group \(catalog?.group($0)?.name ?? $0)" }
                ?? "subscription \(group.originalTransactionID ?? "?") (group unknown: no catalog)"
            var state = group.state.rawValue
            if group.state == .expired, let reason = group.expirationReason { state += " (reason: \(reason.rawValue))" }
            if group.state == .revoked, let revocation = group.revocation {
                state += " (\(revocation.kind.rawValue) on \(date(revocation.date)))"
            }
            lines.append("  \(title): \(state)")
            if let product = group.currentProductID {
                let level = group.serviceLevel.map { ", level \($0)" } ?? ""
                lines.append(
                    "    \(group.state == .subscribed ? "current" : "last") \(name(product))\(level), "
                        + "\(date(group.periodStart)) to \(date(group.expiresDate))"
                        + (group.ownership == .familyShared ? ", shared by family" : ""))
            }
            if let grace = group.gracePeriodExpiresDate { lines.append("    grace period until \(date(grace))") }
            switch (group.willAutoRenew, group.renewsToProductID) {
            case (true?, let next?):
                lines.append(
                    "    renews to \(name(next))" + (group.pendingChange.map { " (\($0.rawValue) at renewal)" } ?? ""))
            case (false?, _): lines.append("    does not renew")
            default: if group.state.grantsAccess { lines.append("    renewal unknown (no renewal information)") }
            }
            lines.append(
                "    original transaction \(group.originalTransactionID ?? "?"); introductory offer "
                    + (group.introductoryOfferEligible ? "available" : "used"))
            if !group.upgradedTransactionIDs.isEmpty {
                lines.append("    upgraded away: \(group.upgradedTransactionIDs.count) period(s)")
            }
        }
        if !snapshot.nonConsumables.isEmpty { lines.append("Non-consumables") }
        for owned in snapshot.nonConsumables {
            lines.append(
                "  \(name(owned.productID)): transaction \(owned.transactionID), \(date(owned.purchaseDate))"
                    + (owned.ownership == .familyShared ? ", shared by family" : ""))
        }
        if !snapshot.consumables.isEmpty { lines.append("Consumables") }
        for balance in snapshot.consumables {
            lines.append(
                "  \(name(balance.productID)): balance \(balance.balance) (bought \(balance.purchased), consumed "
                    + "\(balance.consumed), refunded \(balance.refunded)"
                    + (balance.shortfall > 0 ? ", shortfall \(balance.shortfall)" : "") + ")")
        }
        if !snapshot.nonRenewingSubscriptions.isEmpty { lines.append("Non-renewing subscriptions") }
        for pass in snapshot.nonRenewingSubscriptions {
            let detail =
                pass.state == .durationUnknown
                ? "duration unknown (give --non-renewing-duration)"
                : "\(pass.state.rawValue), \(date(pass.startDate)) to \(date(pass.expiresDate))"
            lines.append("  \(name(pass.productID)): \(detail)")
        }
        if !snapshot.unclassified.isEmpty { lines.append("Unclassified (type unknown: give --catalog)") }
        for purchase in snapshot.unclassified {
            lines.append(
                "  \(purchase.productID): transaction \(purchase.transactionID), \(date(purchase.purchaseDate))")
        }
        if !snapshot.revokedTransactions.isEmpty { lines.append("Refunded or revoked") }
        for revoked in snapshot.revokedTransactions {
            lines.append(
                "  \(name(revoked.productID)): transaction \(revoked.transactionID), \(revoked.revocation.kind.rawValue) "
                    + "on \(date(revoked.revocation.date))")
        }
        lines.append("Original app version: \(snapshot.originalAppVersion ?? "unknown")")
        return lines.joined(separator: "\n")
    }
}
