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

    @Test func manyCodesStayBounded() {
        let log = FailureLog(now: { 0 })
        for index in 0..<10_000 { #expect(log.admit("code\(index)") == .log(unlogged: 0)) }
        #expect(log.admit("code9999") == .quiet)
    }
}
