import Crypto
import Foundation
public import IAPCatalog
import IAPEntitlements
import IAPSignedData
public import IAPSimulator

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
                throw ScenarioError(.invalidValue, "start: '\(start)' is not an ISO 8601 date")
            }
            configuration.start = date
        }
        if let bundleID = scenario.bundleID { configuration.bundleID = bundleID }
        if let environment = scenario.environment {
            guard ["Sandbox", "Production", "Xcode"].contains(environment) else {
                throw ScenarioError(.invalidValue, "environment: '\(environment)' is not Sandbox, Production or Xcode")
            }
            configuration.environment = AppStoreEnvironment(rawValue: environment)
        }
        if let rate = scenario.timeRate {
            guard let timeRate = TimeRate.named(rate) else {
                throw ScenarioError(
                    .invalidValue,
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
                throw ScenarioError(.invalidValue, "promotionalOfferKeys.\(keyID): not a PEM P-256 private key")
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
            throw ScenarioError(.simulatorUnavailable, "cannot start the simulator: \(error)")
        }
        prepare(store)
        var run = ScenarioRun(
            scenario: scenario, store: store, values: ScenarioValues(catalog: catalog), configuration: configuration)
        run.crossChecksEveryStep = crossChecksEveryStep
        for (index, step) in scenario.steps.enumerated() {
            let entry = await run.perform(step, number: index + 1)
            run.entries.append(entry)
            if entry.outcome.stopsTheRun { break }
        }
        return ScenarioReport(scenario: scenario, entries: run.entries, simulator: store, checks: run.checks)
    }
}
