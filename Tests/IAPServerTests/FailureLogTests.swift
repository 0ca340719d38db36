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

    /// An outage's last second: what was held back after the last line is told by a summary when no line followed
    /// (before, it waited for the code's next failure, which may never come). While failures go on, the lines tell
    /// them and no summary comes between.
    @Test func whatABurstHeldBackAtItsEndIsSummarizedWhenNoLineFollows() {
        let clock = Locked<UInt64>(0)
        let scheduled = Locked<[(in: UInt64, work: @Sendable () -> Void)]>([])
        let summaries = Locked<[String]>([])
        let log = FailureLog(
            interval: 1_000_000_000, now: { clock.withLock { $0 } },
            schedule: { nanoseconds, work in scheduled.withLock { $0.append((nanoseconds, work)) } },
            summary: { code, unlogged in summaries.withLock { $0.append("\(code) \(unlogged)") } })
        func at(_ milliseconds: UInt64, _ code: String = "storageUnavailable") -> FailureLog.Verdict {
            clock.withLock { $0 = milliseconds * 1_000_000 }
            return log.admit(code)
        }
        /// Runs what is scheduled, at its time.
        func runScheduled(from milliseconds: UInt64) {
            let due = scheduled.withLock { list in
                let taken = list
                list = []
                return taken
            }
            for item in due {
                clock.withLock { $0 = milliseconds * 1_000_000 + item.in }
                item.work()
            }
        }
        // A burst that ends: one summary, half an interval after the next line was due.
        #expect(at(0) == .log(unlogged: 0))
        #expect(at(300) == .quiet)
        #expect(at(600) == .quiet)
        #expect(scheduled.withLock { $0.map(\.in) } == [1_200_000_000], "one summary, from the first held back")
        runScheduled(from: 300)
        #expect(summaries.withLock { $0 } == ["storageUnavailable 2"])
        #expect(at(1_600) == .log(unlogged: 0), "the next failure is a line of its own, with its reason")
        // A burst that goes on: each line tells what was held back, and the summary due meanwhile stays quiet.
        #expect(at(1_900) == .quiet)
        #expect(at(2_700) == .log(unlogged: 1))
        runScheduled(from: 1_900)
        #expect(summaries.withLock { $0 } == ["storageUnavailable 2"], "no summary while lines tell the count")
        #expect(at(2_800) == .quiet)
        runScheduled(from: 2_800)
        #expect(summaries.withLock { $0 } == ["storageUnavailable 2", "storageUnavailable 1"])
    }

    /// Without a summary, nothing is scheduled: the count waits for the next line.
    @Test func withoutASummaryNothingIsScheduled() {
        let scheduled = Locked(0)
        let log = FailureLog(now: { 0 }, schedule: { _, _ in scheduled.withLock { $0 += 1 } })
        #expect(log.admit("code") == .log(unlogged: 0))
        #expect(log.admit("code") == .quiet)
        #expect(scheduled.withLock { $0 } == 0)
    }

    @Test func manyCodesStayBounded() {
        let log = FailureLog(now: { 0 })
        for index in 0..<10_000 { #expect(log.admit("code\(index)") == .log(unlogged: 0)) }
        #expect(log.admit("code9999") == .quiet)
    }
}
