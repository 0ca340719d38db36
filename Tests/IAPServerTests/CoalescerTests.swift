import Foundation
import IAPCore
import Synchronization
import Testing

@testable import IAPServer

/// ``Coalescer``: lookups that come while every lane is busy run together, each caller gets its own answer, and a
/// failed batch fails exactly its callers.
@Suite struct CoalescerTests {
    /// A batch function that records each batch and holds the first one until `release` is called.
    final class Recorder: Sendable {
        let batches = Mutex<[[Int]]>([])
        let gate = Mutex<CheckedContinuation<Void, Never>?>(nil)
        let failing = Mutex<Set<Int>>([])

        func run(_ items: [Int]) async throws -> [String] {
            let first = batches.withLock { batches in
                batches.append(items)
                return batches.count == 1
            }
            if first { await withCheckedContinuation { continuation in gate.withLock { $0 = continuation } } }
            if !failing.withLock({ $0.isDisjoint(with: items) }) { throw StorageError(code: "failed", reason: "x") }
            return items.map { "answer \($0)" }
        }

        /// Lets the held first batch finish, once it is waiting.
        func release() async {
            while true {
                if let continuation = gate.withLock({ $0.take() }) {
                    continuation.resume()
                    return
                }
                await Task.yield()
            }
        }
    }

    @Test func lookupsThatWaitForTheLaneRunAsOneBatchAndEachGetsItsAnswer() async throws {
        let recorder = Recorder()
        let coalescer = Coalescer<Int, String>(lanes: 1, batchLimit: 16) { try await recorder.run($0) }
        let answers = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            // The first takes the lane and is held; the next ten queue behind it.
            group.addTask { (0, try await coalescer.answer(0)) }
            while recorder.batches.withLock({ $0.isEmpty }) { await Task.yield() }
            for item in 1...10 { group.addTask { (item, try await coalescer.answer(item)) } }
            while coalescer.queued < 10 { await Task.yield() }
            await recorder.release()
            var answers: [Int: String] = [:]
            for try await (item, answer) in group { answers[item] = answer }
            return answers
        }
        #expect(answers == Dictionary(uniqueKeysWithValues: (0...10).map { ($0, "answer \($0)") }))
        let batches = recorder.batches.withLock { $0 }
        #expect(batches.first == [0])
        #expect(batches.dropFirst().map { Set($0) } == [Set(1...10)], "\(batches)")
        #expect(coalescer.counts == (2, 11))
    }

    @Test func aBatchLimitSplitsTheQueue() async throws {
        let recorder = Recorder()
        let coalescer = Coalescer<Int, String>(lanes: 1, batchLimit: 4) { try await recorder.run($0) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { _ = try await coalescer.answer(0) }
            while recorder.batches.withLock({ $0.isEmpty }) { await Task.yield() }
            for item in 1...10 {
                group.addTask {
                    let answer = try await coalescer.answer(item)
                    #expect(answer == "answer \(item)")
                }
            }
            while coalescer.queued < 10 { await Task.yield() }
            await recorder.release()
            try await group.waitForAll()
        }
        let sizes = recorder.batches.withLock { $0.map(\.count) }
        #expect(sizes == [1, 4, 4, 2])
    }

    @Test func aFailedBatchFailsItsCallersOnlyAndTheLaneGoesOn() async throws {
        let recorder = Recorder()
        recorder.failing.withLock { $0 = [3] }
        let coalescer = Coalescer<Int, String>(lanes: 1, batchLimit: 4) { try await recorder.run($0) }
        let results = await withTaskGroup(of: (Int, Bool).self) { group in
            group.addTask { (0, (try? await coalescer.answer(0)) != nil) }
            while recorder.batches.withLock({ $0.isEmpty }) { await Task.yield() }
            for item in 1...6 { group.addTask { (item, (try? await coalescer.answer(item)) != nil) } }
            while coalescer.queued < 6 { await Task.yield() }
            await recorder.release()
            var results: [Int: Bool] = [:]
            for await (item, answered) in group { results[item] = answered }
            return results
        }
        let batches = recorder.batches.withLock { $0 }
        let failedBatch = Set(try #require(batches.first { $0.contains(3) }))
        for item in 0...6 { #expect(results[item] == !failedBatch.contains(item), "\(item) in \(batches)") }
        // Every lookup ran, in the order the lane was handed on.
        #expect(batches.flatMap { $0 }.sorted() == Array(0...6))
        // And the lane is free again: a lone lookup runs at once.
        #expect(try await coalescer.answer(9) == "answer 9")
    }

    @Test func underTheLaneLimitEveryLookupGoesAtOnceAlone() async throws {
        let coalescer = Coalescer<Int, Int>(lanes: 4, batchLimit: 16) { items in items.map { $0 * 2 } }
        for item in 0..<20 { #expect(try await coalescer.answer(item) == item * 2) }
        #expect(coalescer.counts == (20, 20))
    }
}
