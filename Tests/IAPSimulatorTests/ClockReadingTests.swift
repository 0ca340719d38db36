import Foundation
import IAPSimulator
import IAPTestSupport
import Synchronization
import Testing

/// `currentTime` reads the simulated moment without running what is due, so a server that takes the simulator's
/// time for its own checks never waits on a clock move.
@Suite struct ClockReadingTests {
    @Test func aFrozenClockReadsWhereTheLastMoveLeftIt() throws {
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        let store = try AppStoreSimulator(
            catalog: FloristCatalog.catalog,
            configuration: SimulatorConfiguration(bundleID: "com.example.florist", start: start),
            pki: SimulatorTestKeys.pki)
        #expect(store.currentTime == start)
        try store.advance(by: 86_400)
        #expect(store.currentTime == start + 86_400)
        #expect(try store.now == store.currentTime)
    }

    @Test func aRunningClockIsReadWithoutRunningWhatIsDue() throws {
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        let wall = Mutex(start)
        let store = try AppStoreSimulator(
            catalog: FloristCatalog.catalog,
            configuration: SimulatorConfiguration(bundleID: "com.example.florist", start: start),
            pki: SimulatorTestKeys.pki, clock: .running(wallClock: { wall.withLock { $0 } }))
        try store.createAccount("ana")
        _ = try store.purchase(FloristCatalog.gold, account: "ana")
        let before = store.statistics.transactions
        wall.withLock { $0 = start + 40 * 86_400 }  // a renewal is due
        #expect(store.currentTime == start + 40 * 86_400, "the time moves with the wall clock")
        #expect(store.statistics.transactions == before, "but reading it ran nothing")
        _ = try store.now  // the simulator's own calls catch up
        #expect(store.statistics.transactions > before)
    }
}
