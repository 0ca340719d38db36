import Crypto
public import Foundation
public import IAPCatalog
import IAPEntitlements
import IAPSignedData

/// One step of a run as the timeline tells it.
public struct TimelineEntry: Sendable {
    public let step: Int
    public let date: Date
    /// The step in words (`buy flowers for ana`).
    public let title: String
    public let events: [StoreEvent]
    public let notifications: [IssuedNotification]
    /// What each account touched by the step has afterwards, in words.
    public let holdings: [(account: String, summary: String)]
    /// Expectations of this step that failed.
    public let failures: [String]
}

/// What running a scenario gave: the timeline, the failed expectations and the simulator (with every artifact).
public struct ScenarioReport: Sendable {
    public let scenario: Scenario
    public let entries: [TimelineEntry]
    public let simulator: AppStoreSimulator
    /// How many expectations were checked (each `expect` key, each `expectError`, each engine cross-check).
    public let checks: Int
    public var failures: [String] { entries.flatMap { entry in entry.failures.map { "step \(entry.step): \($0)" } } }
    public var passed: Bool { failures.isEmpty }
}

/// Runs a scenario against a fresh simulator on a frozen clock.
///
/// At every `expect` step the runner also asks the entitlement engine: it verifies the account's signed
/// transactions and renewal infos with the simulator's roots and checks that the snapshot they give matches the
/// simulator's own view; a disagreement is a failed expectation.
public struct ScenarioRunner: Sendable {
    public let scenario: Scenario
    public let catalog: Catalog
    public let pki: SimulatorPKI
    /// Cross-check the engine against the simulator after every step for every account the step touched, not only
    /// at `expect` steps.
    public var crossChecksEveryStep: Bool

    public init(scenario: Scenario, catalog: Catalog, pki: SimulatorPKI, crossChecksEveryStep: Bool = false) {
        self.scenario = scenario
        self.catalog = catalog
        self.pki = pki
        self.crossChecksEveryStep = crossChecksEveryStep
    }

    /// The simulator configuration the scenario asks for.
    public func configuration() throws(ScenarioError) -> SimulatorConfiguration {
        var configuration = SimulatorConfiguration()
        if let start = scenario.start {
            guard let date = ScenarioValues.date(start) else {
                throw ScenarioError("start: '\(start)' is not an ISO 8601 date")
            }
            configuration.start = date
        }
        if let bundleID = scenario.bundleID { configuration.bundleID = bundleID }
        if let environment = scenario.environment {
            guard ["Sandbox", "Production", "Xcode"].contains(environment) else {
                throw ScenarioError("environment: '\(environment)' is not Sandbox, Production or Xcode")
            }
            configuration.environment = AppStoreEnvironment(rawValue: environment)
        }
        if let rate = scenario.timeRate {
            guard let timeRate = TimeRate.named(rate) else {
                throw ScenarioError(
                    "timeRate: '\(rate)' is not one of \(TimeRate.all.map(\.name).joined(separator: ", "))")
            }
            configuration.timeRate = timeRate
        }
        configuration.billingGracePeriodEnabled = scenario.gracePeriod
        if let seed = scenario.seed { configuration.seed = seed }
        configuration.maximumEventsPerAdvance = 200_000
        let resolver = ScenarioValues(catalog: catalog)
        for (code, grant) in scenario.offerCodes ?? [:] {
            configuration.offerCodes[code] = OfferCodeGrant(
                productID: try resolver.product(grant.product), offerID: grant.offer)
        }
        for (keyID, pem) in scenario.promotionalOfferKeys ?? [:] {
            guard let key = try? P256.Signing.PrivateKey(pemRepresentation: pem) else {
                throw ScenarioError("promotionalOfferKeys.\(keyID): not a PEM P-256 private key")
            }
            configuration.promotionalOfferKeys[keyID] = key.publicKey
        }
        return configuration
    }

    /// Runs every step in order; a step that throws unexpectedly ends the run with that failure. `prepare` sees the
    /// simulator before the first step (to attach notification sinks or a webhook).
    public func run(prepare: (AppStoreSimulator) -> Void = { _ in }) async throws(ScenarioError) -> ScenarioReport {
        let configuration = try configuration()
        let store: AppStoreSimulator
        do { store = try AppStoreSimulator(catalog: catalog, configuration: configuration, pki: pki) } catch {
            throw ScenarioError("cannot start the simulator: \(error)")
        }
        prepare(store)
        var run = ScenarioRun(
            scenario: scenario, store: store, values: ScenarioValues(catalog: catalog), configuration: configuration)
        run.crossChecksEveryStep = crossChecksEveryStep
        for (index, step) in scenario.steps.enumerated() {
            let entry = await run.perform(step, number: index + 1)
            run.entries.append(entry)
            if entry.failures.contains(where: { $0.hasPrefix(ScenarioRun.abortMarker) }) { break }
        }
        return ScenarioReport(scenario: scenario, entries: run.entries, simulator: store, checks: run.checks)
    }
}

/// Reading a scenario's values: products by short name, groups by name, durations, dates.
struct ScenarioValues: Sendable {
    let catalog: Catalog
    /// The dotted prefix every product id of the catalog shares (`com.example.florist.`), or "".
    let sharedPrefix: String

    init(catalog: Catalog) {
        self.catalog = catalog
        let ids = catalog.products.map(\.id)
        var prefix = ids.first?.split(separator: ".").dropLast().map(String.init) ?? []
        for id in ids {
            let parts = id.split(separator: ".").map(String.init)
            while !prefix.isEmpty && !(parts.count > prefix.count && Array(parts.prefix(prefix.count)) == prefix) {
                prefix.removeLast()
            }
        }
        sharedPrefix = prefix.isEmpty ? "" : prefix.joined(separator: ".") + "."
    }

    /// A product id, or its unique last dot-separated part(s): `flowers`, `vip.gold`.
    func product(_ name: String) throws(ScenarioError) -> String {
        if catalog.product(name) != nil { return name }
        let matches = catalog.products.map(\.id).filter { $0.hasSuffix("." + name) }
        guard matches.count == 1 else {
            throw ScenarioError(
                matches.isEmpty
                    ? "no product '\(name)' in the catalog" : "'\(name)' could be \(matches.joined(separator: " or "))")
        }
        return matches[0]
    }

    /// A group id or name; the only group when nil.
    func group(_ name: String?) throws(ScenarioError) -> String {
        guard let name else {
            guard catalog.subscriptionGroups.count == 1 else { throw ScenarioError("say which subscription group") }
            return catalog.subscriptionGroups[0].id
        }
        guard let group = catalog.subscriptionGroups.first(where: { $0.id == name || $0.name == name }) else {
            throw ScenarioError("no subscription group '\(name)'")
        }
        return group.id
    }

    /// The shortest readable name of a product: its id without the shared prefix.
    func short(_ productID: String) -> String {
        sharedPrefix.isEmpty || !productID.hasPrefix(sharedPrefix)
            ? productID : String(productID.dropFirst(sharedPrefix.count))
    }

    /// A sentence with every product id written short.
    func shorten(_ text: String) -> String {
        sharedPrefix.isEmpty ? text : text.replacingOccurrences(of: sharedPrefix, with: "")
    }

    /// `P3D`, `P2W`, `P1M`, `P1Y` (calendar) or `90s`, `15m`, `2h`, `3d` (exact).
    static func duration(_ text: String, from start: Date) -> TimeInterval? {
        if let period = SubscriptionPeriod(iso8601: text) { return period.advance(start).timeIntervalSince(start) }
        guard let unit = text.last, let number = Double(text.dropLast()), number >= 0, number <= 1e9 else { return nil }
        switch unit {
        case "s": return number
        case "m": return number * 60
        case "h": return number * 3600
        case "d": return number * 86_400
        default: return nil
        }
    }

    static func date(_ text: String) -> Date? {
        (try? Date(text, strategy: .iso8601)) ?? (try? Date(text + "T00:00:00Z", strategy: .iso8601))
    }
}
