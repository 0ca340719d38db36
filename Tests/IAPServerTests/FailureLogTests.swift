import IAPCore
import Testing

@testable import IAPServer

/// A database outage answers every request with 503: the log gets one line a second for it, with the count it held
/// back, and another failure's first line is never held back by it.
@Suite struct FailureLogTests {
    @Test func aBurstOfOneFailureIsLoggedOnceASecondWithWhatWasHeldBack() {
        let clock = Locked<UInt64>(0)
        let log = FailureLog(interval: 1_000_000_000, now: { clock.withLock { $0 } })
        func at(_ milliseconds: UInt64, _ code: String) -> FailureLog.Verdict {
            clock.withLock { $0 = milliseconds * 1_000_000 }
            return log.admit(code)
        }
        #expect(at(0, "storageUnavailable") == .log(unlogged: 0))
        for millisecond in stride(from: UInt64(10), to: 1_000, by: 10) {
            #expect(at(millisecond, "storageUnavailable") == .quiet)
        }
        #expect(at(500, "storageFailed") == .log(unlogged: 0), "another code is logged at once")
        #expect(at(1_000, "storageUnavailable") == .log(unlogged: 99))
        #expect(at(1_001, "storageUnavailable") == .quiet)
        #expect(at(5_000, "storageUnavailable") == .log(unlogged: 1))
        #expect(at(9_000, "storageUnavailable") == .log(unlogged: 0), "after a quiet spell, the next is logged")
    }

    /// An outage's last second: what was held back after the last line is told by a summary once the interval
    /// passes (it waited for the next failure of the code before, which may never come), and the summary counts as
    /// the code's line.
    @Test func whatABurstHeldBackAtItsEndIsSummarizedWhenItsIntervalPasses() async throws {
        let clock = Locked<UInt64>(0)
        let sleeps = Locked<[UInt64]>([])
        let (gate, open) = AsyncStream.makeStream(of: Void.self)
        let (summaries, summary) = AsyncStream.makeStream(of: String.self)
        let log = FailureLog(
            interval: 1_000_000_000, now: { clock.withLock { $0 } },
            sleep: { nanoseconds in
                sleeps.withLock { $0.append(nanoseconds) }
                var waiting = gate.makeAsyncIterator()
                _ = await waiting.next()
            },
            summary: { code, unlogged in summary.yield("\(code) \(unlogged)") })
        func at(_ milliseconds: UInt64, _ code: String = "storageUnavailable") -> FailureLog.Verdict {
            clock.withLock { $0 = milliseconds * 1_000_000 }
            return log.admit(code)
        }
        #expect(at(0) == .log(unlogged: 0))
        #expect(at(300) == .quiet)
        #expect(at(600) == .quiet)
        // One summary is waited for, from the first failure held back to the end of the interval.
        for _ in 0..<10_000 where sleeps.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(1)) }
        try #require(sleeps.withLock { $0 } == [700_000_000])
        clock.withLock { $0 = 1_000_000_000 }
        open.yield()
        var told = summaries.makeAsyncIterator()
        #expect(await told.next() == "storageUnavailable 2")
        // The summary was the code's line: the next failure within a second is held back, and told by the next line.
        #expect(at(1_200) == .quiet)
        #expect(at(2_500) == .log(unlogged: 1))
        log.summarize("storageUnavailable")
        #expect(at(2_600) == .quiet, "nothing left to summarize; the line at 2.5 s stands")
        open.finish()
        summary.finish()
        #expect(await told.next() == nil, "no second summary")
    }

    @Test func manyCodesStayBounded() {
        let log = FailureLog(now: { 0 })
        for index in 0..<10_000 { #expect(log.admit("code\(index)") == .log(unlogged: 0)) }
        #expect(log.admit("code9999") == .quiet)
    }
}
