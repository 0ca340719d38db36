import Foundation
import IAPCatalog
import IAPScenarios
import IAPSimulator
import IAPTestSupport
import Testing

/// The shipped examples.
enum Examples {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Examples/Florist")
    static let catalog = try! Catalog.load(contentsOfFile: folder.appendingPathComponent("Florist.storekit").path)
    static func scenario(_ name: String) throws -> Scenario {
        try Scenario.load(contentsOfFile: folder.appendingPathComponent(name).path)
    }
    static let all = ["florist-story.yaml", "florist-year.yaml", "florist-offers.json"]
}

@Suite("Scenarios")
struct ScenarioTests {
    @Test(arguments: Examples.all)
    func shippedScenariosMeetEveryExpectation(_ name: String) async throws {
        let report = try await ScenarioRunner(
            scenario: try Examples.scenario(name), catalog: Examples.catalog, pki: SimulatorTestKeys.pki
        ).run()
        #expect(report.failures.isEmpty, "\(report.failures)")
        #expect(report.checks >= 10)
        #expect(report.entries.count == (try Examples.scenario(name)).steps.count)
    }

    /// The engine, reading the signed artifacts, agrees with the simulator after every step of every shipped
    /// scenario, for every account the step touched.
    @Test(arguments: Examples.all)
    func theEngineAgreesAfterEveryStep(_ name: String) async throws {
        let report = try await ScenarioRunner(
            scenario: try Examples.scenario(name), catalog: Examples.catalog, pki: SimulatorTestKeys.pki,
            crossChecksEveryStep: true
        ).run()
        #expect(report.failures.isEmpty, "\(report.failures)")
    }

    @Test func aSimulatorStartsFromACatalogFile() throws {
        let store = try AppStoreSimulator(
            catalogFile: Examples.folder.appendingPathComponent("Florist.storekit").path, pki: SimulatorTestKeys.pki)
        try store.createAccount("ana")
        let products = try store.products(["com.example.florist.vip.gold"], account: "ana")
        #expect(products.first?.displayName == "VIP Gold")
        #expect(products.first?.subscriptionGroupID == "21000001")
        #expect(throws: (any Error).self) {
            try AppStoreSimulator(catalogFile: "/nonexistent.storekit", pki: SimulatorTestKeys.pki)
        }
    }

    @Test func theStoryReadsLikeAStory() async throws {
        let report = try await ScenarioRunner(
            scenario: try Examples.scenario("florist-story.yaml"), catalog: Examples.catalog,
            pki: SimulatorTestKeys.pki
        ).run()
        let text = report.timelineText()
        for line in [
            "lily asks to buy chocolates; the purchase waits for approval",
            "the parent declines chocolates for lily; no transaction",
            "→ notification SUBSCRIBED/INITIAL_BUY (lily)",
            "rosa upgrades from vip.silver to vip.gold at once",
            "rosa has: VIP vip.gold inGracePeriod until 2026-05-05 09:00",
            "→ notification DID_RENEW/BILLING_RECOVERY (rosa)",
            "→ notification REFUND (rosa)",
            "lily has: VIP vip.gold expired (family); flowers; installation ×1",
            "All 47 expectations met.",
        ] {
            #expect(text.contains(line), "missing: \(line)")
        }
    }

    @Test func failedExpectationsAndUnexpectedErrorsAreReported() async throws {
        let scenario = try Scenario.parse(
            """
            name: wrong on purpose
            start: 2026-01-01
            steps:
              - createAccount: ana
              - buy: flowers
                account: ana
                quantity: 2
                expectError: invalidQuantity
              - buy: flowers
                account: ana
                expectError: networkError
              - expect: ana
                entitled: [chocolates]
                balance: { installation: 1 }
                subscription: { state: subscribed }
              - buy: nothing-like-it
                account: ana
              - note: never reached
            """)
        let report = try await ScenarioRunner(
            scenario: scenario, catalog: Examples.catalog, pki: SimulatorTestKeys.pki
        ).run()
        #expect(!report.passed)
        let failures = report.failures
        #expect(failures.contains { $0.hasPrefix("step 3: expected the error networkError, but the step succeeded") })
        #expect(failures.contains("step 4: ana should have chocolates"))
        #expect(failures.contains("step 4: ana has 0 installation, expected 1"))
        #expect(failures.contains("step 4: ana's subscription state is none, expected subscribed"))
        #expect(failures.contains { $0.hasPrefix("step 5: stopped:") && $0.contains("nothing-like-it") })
        #expect(report.entries.count == 5, "the run stops at the step that could not run")
        #expect(!failures.contains { $0.hasPrefix("step 2") }, "the expected error was met")
    }

    @Test func malformedScenariosGetClearErrors() {
        let cases: [(String, String)] = [
            ("steps: []", "missing 'name'"),
            ("name: x\nsteps:\n  - buy: flowers\n    acount: ana", "unknown key 'acount'"),
            ("name: x\nsteps:\n  - buy: flowers\n    refund: flowers", "exactly one action"),
            ("name: x\nsteps:\n  - account: ana", "exactly one action"),
            ("name: x\nsteps:\n  - buy: [1, 2]", "takes a text value"),
            ("name: x\nsteps: 3", "line 2: steps must be a list"),
            ("{{{{", "not YAML"),
            ("", "no YAML document"),
        ]
        for (text, message) in cases {
            do {
                _ = try Scenario.parse(text)
                Issue.record("accepted: \(text)")
            } catch {
                #expect(error.reason.contains(message), "\(text) → \(error.reason)")
            }
        }
    }

    @Test func badValuesStopTheRunWithAMessage() async throws {
        let cases: [(String, String)] = [
            ("  - advance: soon", "is not a duration"),
            ("  - advanceTo: yesterday", "is not an ISO 8601 date"),
            ("  - buy: vip\n    account: ana", "no product 'vip'"),
            ("  - fail: everything\n    error: networkError", "is not one of"),
            ("  - refund: flowers", "needs 'account"),
            ("  - approve: ana", "nothing is pending"),
            ("  - createAccount: bob\n    storefront: ATLANTIS", "unknown storefront"),
        ]
        for (step, message) in cases {
            let scenario = try Scenario.parse("name: x\nsteps:\n  - createAccount: ana\n" + step)
            let report = try await ScenarioRunner(
                scenario: scenario, catalog: Examples.catalog, pki: SimulatorTestKeys.pki
            ).run()
            #expect(
                report.failures.contains { $0.contains("stopped") && $0.contains(message) },
                "\(step) → \(report.failures)")
        }
        let badStart = try Scenario.parse("name: x\nstart: someday\nsteps: []")
        await #expect(throws: ScenarioError.self) {
            try await ScenarioRunner(scenario: badStart, catalog: Examples.catalog, pki: SimulatorTestKeys.pki).run()
        }
    }

    /// Seeded fuzzing: mutated copies of the shipped scenarios never crash or hang the parser or the runner.
    @Test func mutatedScenariosNeverCrash() async throws {
        var random = SeededGenerator(seed: 0x5CE_0A41)
        let sources = try Examples.all.map {
            try String(contentsOf: Examples.folder.appendingPathComponent($0), encoding: .utf8)
        }
        let alphabet = Array(" :-[]{}\n\"'#0123456789abcxyzP.,".utf8)
        var parsed = 0
        for round in 0..<120 {
            var bytes = Array(sources[round % sources.count].utf8)
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let position = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[position] = alphabet.randomElement(using: &random)!
                case 1: bytes.remove(at: position)
                default: bytes.insert(alphabet.randomElement(using: &random)!, at: position)
                }
            }
            guard let scenario = try? Scenario.parse(String(decoding: bytes, as: UTF8.self)) else { continue }
            parsed += 1
            if round % 4 == 0 {
                _ = try? await ScenarioRunner(scenario: scenario, catalog: Examples.catalog, pki: SimulatorTestKeys.pki)
                    .run()
            }
        }
        #expect(parsed > 0)
    }
}
