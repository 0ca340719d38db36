public import ArgumentParser
import Foundation
import IAPCatalog
import IAPScenarios
import IAPSimulator
import IAPSimulatorDelivery

/// `iapkit simulate SCENARIO [--catalog F] [--out DIR] [--pki DIR]`: runs a scenario on the local App Store.
public struct SimulateCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Run a scenario file on the local App Store and write every artifact it signs.",
        discussion: """
            A scenario (JSON or YAML) names a catalog and lists steps, one action each, run in order on a frozen \
            clock that only the advance steps move (renewals, retries and expiries on the way happen in order):

              name: Ana's month
              catalog: Florist.storekit          # relative to the scenario; --catalog overrides
              start: 2026-01-01T09:00:00Z
              steps:
                - createAccount: ana             # storefront: FRA, askToBuy: true, appAccountToken: UUID
                - buy: vip.gold                  # a product id or its unique last part(s)
                  account: ana                   # quantity: 3, interrupted: true, cancel: true, as: LABEL,
                                                 # promotionalOffer: ID + keyID: K, winBackOffer: ID
                - advance: P1M                   # P3D P2W P1M P1Y, or 90s 15m 2h 3d; advanceTo: DATE
                - expect: ana                    # entitled: [..], notEntitled: [..], balance: {installation: 2},
                  entitled: [vip.gold]           # subscription: {group, state, product, autoRenew, renewsTo},
                  subscription: {state: subscribed}   # pending: N, notifications: [DID_RENEW, ...]

            Actions: createAccount, addDevice, joinFamily (value: family, account), leaveFamily, buy, approve / \
            decline (an account's oldest pending purchase, or a label), redeemOfferCode, advance, advanceTo, \
            billingIssue / billingFixed (account), autoRenewOff / autoRenewOn (account, group), changePrice \
            (product, price, requiresConsent), acceptPriceIncrease, refund (label or product + account, \
            percentage), requestRefund (reason), reportConsumption (consumptionStatus), grantRefund / declineRefund, \
            finish (label, product, or all + account), restore, deleteTransaction, clear, fail (operation, error: \
            CODE or none), expect, note. Any step may say expectError: CODE. Top-level keys: name, description, \
            catalog, start, bundleID, environment (Sandbox, Production, Xcode), timeRate (realTime, \
            monthlyRenewalEveryThirtySeconds, ...), gracePeriod, seed, offerCodes {CODE: {product, offer}}, \
            promotionalOfferKeys {KEYID: PEM}.

            Every expect step also verifies the account's signed transactions and renewal infos with the \
            simulator's roots and checks that the entitlement engine reading them agrees with the simulator.

            With --out DIR: DIR/receipts/*.der, DIR/jws/*.jws (transactions, renewal infos, app transactions), \
            DIR/notifications/*.json (request bodies), DIR/roots/receipt-root.der, DIR/roots/jws-root.der and \
            DIR/timeline.txt. With --webhook URL every notification is also POSTed as Apple posts it \
            ({"signedPayload": ...}; success is HTTP 200; failures retried on Apple's schedule divided by \
            --retry-compression). Exit status: 0 all expectations met, 1 one failed or a step could not run, 2 the \
            scenario, catalog or PKI cannot be read.
            """
    )

    @Argument(help: "The scenario file (JSON or YAML).")
    var scenario: String

    @Option(help: "The catalog (.storekit or Products.plist); overrides the scenario's.")
    var catalog: String?

    @Option(help: "Write every artifact, the roots and the timeline into this folder.")
    var out: String?

    @Option(
        help: "Sign with the authority saved in this folder (made and saved with its keys if the folder is absent).")
    var pki: String?

    @Option(help: "Also POST every notification to this URL, as the App Store does, retrying failures.")
    var webhook: String?

    @Option(help: "Divide Apple's retry schedule (1, 12, 24, 48, 72 hours) by this for --webhook.")
    var retryCompression: Double = 3600

    public init() {}

    public func validate() throws {
        if let webhook, URL(string: webhook)?.scheme.map({ ["http", "https"].contains($0) }) != true {
            throw ValidationError("--webhook needs an http or https URL")
        }
        if retryCompression < 1 { throw ValidationError("--retry-compression must be at least 1") }
    }

    public func run() async throws {
        let status = await execute(output: StandardOutput())
        if status != 0 { throw ExitCode(status) }
    }

    /// Runs the scenario, printing the timeline to `output`. Returns the exit status.
    public func execute(output: some CommandOutput) async -> Int32 {
        let loaded: Scenario
        let catalogValue: Catalog
        let authority: SimulatorPKI
        do {
            loaded = try Scenario.load(contentsOfFile: scenario)
            let base = URL(fileURLWithPath: scenario).deletingLastPathComponent()
            guard let path = catalog ?? loaded.catalog.map({ base.appendingPathComponent($0).path }) else {
                output.diagnostic("error: the scenario names no catalog; pass --catalog")
                return 2
            }
            catalogValue = try Catalog.load(contentsOfFile: path)
            authority = try SimulatorPKI.loadOrCreate(folder: pki)
        } catch {
            output.diagnostic("error: \(error)")
            return 2
        }
        let report: ScenarioReport
        let delivery = webhook.flatMap(URL.init(string:)).map {
            WebhookDelivery(url: $0, schedule: .apple(compressedBy: retryCompression))
        }
        do {
            report = try await ScenarioRunner(scenario: loaded, catalog: catalogValue, pki: authority).run {
                delivery?.attach(to: $0)
            }
        } catch {
            output.diagnostic("error: \(error)")
            return 2
        }
        if let delivery {
            await delivery.drain()
            let attempts = delivery.attempts
            let delivered = Set(attempts.filter(\.succeeded).map(\.notificationUUID)).count
            let total = Set(attempts.map(\.notificationUUID)).count
            output.line(
                "Webhook \(delivery.url.absoluteString): \(delivered) of \(total) notifications delivered, "
                    + "\(attempts.count) attempts.")
            if delivered != total { output.diagnostic("warning: some notifications were not delivered") }
        }
        let timeline = report.timelineText()
        output.line(timeline.hasSuffix("\n") ? String(timeline.dropLast()) : timeline)
        if let out {
            do {
                let written = try write(report, timeline: timeline, to: URL(fileURLWithPath: out))
                output.line("Wrote \(written) files to \(out).")
            } catch {
                output.diagnostic("error: cannot write to \(out): \(error)")
                return 2
            }
        }
        return report.passed ? 0 : 1
    }

    private func write(_ report: ScenarioReport, timeline: String, to folder: URL) throws -> Int {
        let manager = FileManager.default
        for sub in ["receipts", "jws", "notifications", "roots"] {
            try manager.createDirectory(at: folder.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        try report.simulator.pki.export(to: folder)
        var count = 2
        for artifact in report.simulator.artifacts {
            let path: String
            switch artifact.kind {
            case .receipt: path = "receipts/\(artifact.name).der"
            case .notification: path = "notifications/\(artifact.name).json"
            case .transaction, .renewalInfo, .appTransaction: path = "jws/\(artifact.name).jws"
            }
            try Data(artifact.bytes).write(to: folder.appendingPathComponent(path))
            count += 1
        }
        try Data(timeline.utf8).write(to: folder.appendingPathComponent("timeline.txt"))
        return count + 1
    }
}
