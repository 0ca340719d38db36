import Foundation
import IAPCore
import IAPScenarios
import Testing

/// Scenario files built to stall the YAML reader (wide mappings, alias bombs, aliases as complex keys, deep nesting,
/// too many aliases): each is read, or refused with a coded error naming the line, in work linear in its size.
struct HostileScenarioTests {
    func outcome(_ text: String) -> (scenario: Scenario?, error: ScenarioError?, steps: Int) {
        let ((scenario, error), steps) = WorkMeter.measure { () -> (Scenario?, ScenarioError?) in
            do { return (try Scenario.parse(text), nil) } catch { return (nil, error as? ScenarioError) }
        }
        return (scenario, error, steps)
    }

    /// A scenario with `keys` unknown top-level keys and as many steps: Yams' keyed lookup made this O(n²).
    static func wide(_ keys: Int) -> String {
        var text = "name: wide\n"
        for index in 0..<keys { text += "unknown\(index): \(index)\n" }
        text += "steps:\n"
        for index in 0..<keys { text += "  - {note: n\(index), account: a\(index)}\n" }
        return text
    }

    @Test func wideMappingsAndLongStepListsAreReadInLinearWork() throws {
        let (small, _, smallSteps) = outcome(Self.wide(2_500))
        let (large, _, largeSteps) = outcome(Self.wide(10_000))
        #expect(small?.steps.count == 2_500 && large?.steps.count == 10_000)
        #expect(Double(largeSteps) <= 4.5 * Double(smallSteps), "\(smallSteps) -> \(largeSteps)")
    }

    @Test func aliasBombsAreRefusedByWhatTheyStandFor() {
        var text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for level in 1...9 {
            text += "a\(level): &a\(level) [\(Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", "))]\n"
        }
        let (_, error, steps) = outcome(text + "name: bomb\nsteps: *a9\n")
        #expect(error?.code == .limitExceeded)
        #expect(
            error?.reason.hasPrefix("line 6:") == true,
            "the line of a5, whose aliases cross the bound: \(String(describing: error))")
        #expect(steps < 1_000, "refused before anything is expanded: \(steps)")
    }

    @Test func aliasesUsedAsComplexKeysAreRefusedWithoutHashingThem() {
        var text = "k0: &k0 [x, x]\n"
        for level in 1..<30 { text += "k\(level): &k\(level) [*k\(level - 1), *k\(level - 1)]\n" }
        let (_, bomb, steps) = outcome(text + "? *k29\n: value\nname: keys\nsteps: []\n")
        #expect(bomb?.code == .limitExceeded)
        #expect(steps < 1_000, "\(steps)")
        let (_, complex, _) = outcome("name: x\n? [a, b]\n: c\nsteps: []\n")
        #expect(complex?.code == .complexKey)
        #expect(complex?.reason.hasPrefix("line 2:") == true, "\(String(describing: complex))")
        let (_, mapping, _) = outcome("name: x\nsteps:\n  - ? {a: b}\n    : c\n")
        #expect(mapping?.code == .complexKey)
    }

    @Test func tooManyAliasesTooDeepAndDuplicatesAreRefusedByLine() {
        let many =
            "x: &x 1\nname: many\nlist: [" + Array(repeating: "*x", count: 10_001).joined(separator: ", ")
            + "]\nsteps: []\n"
        #expect(outcome(many).error?.code == .limitExceeded)
        var deep = "name: deep\nsteps: []\nnested:\n"
        for level in 0..<70 { deep += String(repeating: "  ", count: level + 1) + "k:\n" }
        let (_, tooDeep, _) = outcome(deep)
        #expect(tooDeep?.code == .limitExceeded)
        #expect(tooDeep?.reason.hasPrefix("line ") == true)
        let flow = "name: deep\nsteps: " + String(repeating: "[", count: 5_000) + String(repeating: "]", count: 5_000)
        #expect(outcome(flow).error?.code == .limitExceeded)
        let (_, duplicate, _) = outcome("name: x\nsteps: []\nname: y\n")
        #expect(duplicate?.code == .duplicateKey)
        #expect(duplicate?.reason.hasPrefix("line 3:") == true, "\(String(describing: duplicate))")
    }

    @Test func anchorsAliasesAndMergeKeysStillWork() throws {
        let text = """
            name: merge
            defaults: &ana {account: ana, quantity: 2}
            steps:
              - createAccount: ana
              - <<: *ana
                buy: installation
              - {<<: [*ana], buy: flowers, quantity: 1}
              - expect: ana
                entitled: &entitled [flowers]
              - {expect: ana, entitled: *entitled, balance: {installation: 2}}
            """
        let scenario = try Scenario.parse(text)
        #expect(scenario.steps.count == 5)
        #expect(scenario.steps[1].account == "ana" && scenario.steps[1].quantity == 2)
        #expect(scenario.steps[2].quantity == 1, "an explicit key wins over a merged one")
        #expect(scenario.steps[4].entitled == ["flowers"])
        // YAML 1.1 booleans, numbers with underscores, null, and quoted text stay as Yams read them.
        let values = try Scenario.parse(
            "name: v\nseed: 1_000\ngracePeriod: yes\nsteps:\n  - {buy: '42', askToBuy: off, price: 1.5, account: ~}")
        #expect(values.seed == 1_000 && values.gracePeriod == true)
        #expect(values.steps[0].value == "42" && values.steps[0].askToBuy == false && values.steps[0].account == nil)
        #expect(throws: ScenarioError.self) { try Scenario.parse("name: v\nsteps:\n  - {buy: x, price: nan}") }
    }

    /// The hand-made files kept in Tests/Regressions/scenario (Scripts/regression-inputs.py) and their outcomes.
    @Test(arguments: [
        ("alias-laughs.yaml", "limitExceeded"), ("alias-complex-key.yaml", "limitExceeded"),
        ("complex-key.yaml", "complexKey"), ("duplicate-key.yaml", "duplicateKey"), ("merge-keys.yaml", "read"),
        ("many-keys.yaml", "read"),
    ])
    func regressionFilesHaveTheirOutcome(name: String, expected: String) throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Regressions/scenario/\(name)")
        let (scenario, error, _) = outcome(String(decoding: try Data(contentsOf: file), as: UTF8.self))
        #expect((scenario != nil ? "read" : error?.code.rawValue) == expected, "\(String(describing: error))")
    }
}
