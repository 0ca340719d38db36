import Foundation
import IAPCore
import Testing

@testable import IAPServer

/// `GET /health` answers whatever the database does: its count waits at most its patience, and one count serves
/// every caller that comes while it runs.
@Suite("the health probe of the database")
struct StorageCountsProbeTests {
    @Test func aCountThatHangsIsAnsweredUnreachableInTimeAndSharedByCallers() async throws {
        let started = Locked(0)
        let release = AsyncStream.makeStream(of: Void.self)
        let probe = StorageCountsProbe(patience: .milliseconds(200)) {
            started.withLock { $0 += 1 }
            for await _ in release.stream { break }
            return StorageCounts(transactions: 1, notifications: 2, customers: 3)
        }
        // The count answers only when released: every caller is told "unreachable" by its patience.
        let answers = await withTaskGroup(of: StorageCounts?.self) { group in
            for _ in 0..<20 { group.addTask { await probe.answer() } }
            return await group.reduce(into: [StorageCounts?]()) { $0.append($1) }
        }
        #expect(answers.count == 20 && answers.allSatisfy { $0 == nil }, "unreachable, to every caller")
        #expect(started.withLock { $0 } == 1, "one count for all of them")
        // The count answers: the next caller is told (and a new count starts for the one after).
        release.continuation.yield()
        release.continuation.finish()
        var counts: StorageCounts?
        for _ in 0..<50 where counts == nil {
            counts = await probe.answer()
        }
        #expect(counts == StorageCounts(transactions: 1, notifications: 2, customers: 3))
    }
}
