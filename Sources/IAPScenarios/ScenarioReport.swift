public import Foundation
public import IAPSimulator

/// How one step of a scenario ended.
public enum StepOutcome: Hashable, Sendable {
    /// The step was carried out.
    case done
    /// The store refused the step with the error the scenario expected (`expectError`).
    case refusedAsExpected(SimulatorError.Code)
    /// The step could not be carried out (an unexpected refusal, or a scenario mistake); the run stops after it.
    case stopped(code: String, reason: String)

    /// Whether the run goes on after this step.
    public var stopsTheRun: Bool {
        if case .stopped = self { true } else { false }
    }
}

/// One step of a run as the timeline tells it.
public struct TimelineEntry: Sendable {
    public let step: Int
    public let date: Date
    /// The step in words (`buy flowers for ana`).
    public let title: String
    /// How the step ended.
    public let outcome: StepOutcome
    public let events: [SimulatorEvent]
    public let notifications: [SimulatorNotification]
    /// What each account touched by the step has afterwards, in words.
    public let holdings: [(account: String, summary: String)]
    /// Expectations of this step that failed (a stopped step's reason among them).
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
