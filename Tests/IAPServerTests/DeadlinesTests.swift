import IAPCore
import NIOCore
import NIOEmbedded
import Testing

@testable import IAPServer

/// The waits a PostgreSQL database bounds (``Deadlines``): an answer that lags is told once, and again only when
/// re-armed; a cut ends every wait that can be cut at once, a lease's too, even before its user waits.
@Suite struct DeadlinesTests {
    struct Cut: Error {}
    struct TimedOut: Error {}

    @Test(.timeLimit(.minutes(1))) func aLaggingAnswerIsToldOnceAndACutEndsItAtOnce() async throws {
        let deadlines = Deadlines(tick: .milliseconds(10))
        defer { deadlines.stop() }
        let told = Locked(0)
        deadlines.whenAnswersLag(after: .milliseconds(50)) { told.withLock { $0 += 1 } }
        let loop = NIOAsyncTestingEventLoop()
        let before = ContinuousClock.now
        let answered = loop.makePromise(of: Int.self)
        answered.succeed(1)
        _ = try await deadlines.value(
            of: answered.futureResult, within: .seconds(3600), expired: { TimedOut() }, onExpiry: {})
        #expect(deadlines.answered(since: before))
        let closed = Locked(false)
        let never = loop.makePromise(of: Int.self)
        let waiting = Task {
            try await deadlines.value(
                of: never.futureResult, within: .seconds(3600), expired: { TimedOut() },
                onExpiry: { closed.withLock { $0 = true } })
        }
        while told.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(200))
        #expect(told.withLock { $0 } == 1, "told once, however long it lags")
        deadlines.rearmLags()
        while told.withLock({ $0 }) == 1 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(!deadlines.answered(since: ContinuousClock.now))
        deadlines.cut(with: Cut())
        await #expect(throws: Cut.self) { try await waiting.value }
        #expect(closed.withLock { $0 }, "the cut statement's connection is closed")
        #expect(deadlines.waiting.entries == 0)
        never.succeed(2)  // an answer after the cut changes nothing
    }

    /// A cut between a lease's start and its user's wait (the wait registered, `take()` not yet called) ends the wait
    /// when it comes, and a connection offered later is not held for it.
    @Test func aLeaseCutBeforeItsUserWaitsFailsAtOnce() async throws {
        let handoff = ConnectionHandoff()
        #expect(handoff.abandon(Cut()), "the lease is to be cancelled")
        await #expect(throws: Cut.self) { _ = try await handoff.take() }
        #expect(!handoff.abandon(Cut()), "once")
    }
}
