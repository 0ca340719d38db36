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
        func release() async throws {
            try await CoalescerTests.waitUntil("the first batch to wait") { gate.withLock { $0 != nil } }
            gate.withLock { $0.take() }?.resume()
        }
    }

    /// Waits (yielding) until `condition` holds; a failed test, not a hang, after 10 s.
    static func waitUntil(_ what: String, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            try #require(ContinuousClock.now < deadline, "waited 10 s for \(what)")
            await Task.yield()
        }
    }

    @Test func lookupsThatWaitForTheLaneRunAsOneBatchAndEachGetsItsAnswer() async throws {
        let recorder = Recorder()
        let coalescer = Coalescer<Int, String>(lanes: 1, batchLimit: 16) { try await recorder.run($0) }
        let answers = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            // The first takes the lane and is held; the next ten queue behind it.
            group.addTask { (0, try await coalescer.answer(0)) }
            try await Self.waitUntil("the first batch") { !recorder.batches.withLock { $0.isEmpty } }
            for item in 1...10 { group.addTask { (item, try await coalescer.answer(item)) } }
            try await Self.waitUntil("10 waiting") { coalescer.queued >= 10 }
            try await recorder.release()
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

    @Test func aFailedBatchFailsItsCallersOnlyAndTheLaneGoesOn() async throws {
        let recorder = Recorder()
        recorder.failing.withLock { $0 = [3] }
        let coalescer = Coalescer<Int, String>(lanes: 1, batchLimit: 8) { try await recorder.run($0) }
        let results = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
            group.addTask { (0, (try? await coalescer.answer(0)) != nil) }
            try await Self.waitUntil("the first batch") { !recorder.batches.withLock { $0.isEmpty } }
            for item in 1...6 { group.addTask { (item, (try? await coalescer.answer(item)) != nil) } }
            try await Self.waitUntil("6 waiting") { coalescer.queued >= 6 }
            try await recorder.release()
            var results: [Int: Bool] = [:]
            for try await (item, answered) in group { results[item] = answered }
            return results
        }
        let batches = recorder.batches.withLock { $0 }
        let failedBatch = Set(try #require(batches.first { $0.contains(3) }))
        for item in 0...6 { #expect(results[item] == !failedBatch.contains(item), "\(item) in \(batches)") }
        // Every lookup ran, once.
        #expect(batches.flatMap { $0 }.sorted() == Array(0...6))
        // And the lane is free again: a lone lookup runs at once.
        #expect(try await coalescer.answer(9) == "answer 9")
    }

    @Test func aLookupThatFindsTheQueueFullRunsAtOnceAlone() async throws {
        let recorder = Recorder()
        let coalescer = Coalescer<Int, String>(lanes: 1, batchLimit: 2) { try await recorder.run($0) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { _ = try await coalescer.answer(0) }
            try await Self.waitUntil("the first batch") { !recorder.batches.withLock { $0.isEmpty } }
            for item in 1...2 { group.addTask { _ = try await coalescer.answer(item) } }
            try await Self.waitUntil("2 waiting") { coalescer.queued >= 2 }
            // The first batch is still held and two wait: the next one does not join them.
            #expect(try await coalescer.answer(3) == "answer 3")
            #expect(recorder.batches.withLock { $0 } == [[0], [3]])
            try await recorder.release()
            try await group.waitForAll()
        }
        #expect(recorder.batches.withLock { $0.map(Set.init) } == [[0], [3], [1, 2]])
    }

    @Test func underTheLaneLimitEveryLookupGoesAtOnceAlone() async throws {
        let coalescer = Coalescer<Int, Int>(lanes: 4, batchLimit: 16) { items in items.map { $0 * 2 } }
        for item in 0..<20 { #expect(try await coalescer.answer(item) == item * 2) }
        #expect(coalescer.counts == (20, 20))
    }

    /// Items the `apart` rule keeps apart never share a batch: the later one waits for the next, in its place in the
    /// queue, and every caller still gets its own answer.
    @Test func itemsKeptApartGoToLaterBatchesInTheirOrder() async throws {
        let recorder = Recorder()
        let coalescer = Coalescer<Int, String>(lanes: 1, batchLimit: 16, apart: { $0 % 3 == $1 % 3 }) {
            try await recorder.run($0)
        }
        let answers = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            group.addTask { (0, try await coalescer.answer(0)) }
            try await Self.waitUntil("the first batch") { !recorder.batches.withLock { $0.isEmpty } }
            for item in 1...7 {
                group.addTask { (item, try await coalescer.answer(item)) }
                try await Self.waitUntil("\(item) waiting") { coalescer.queued >= item }
            }
            try await recorder.release()
            var answers: [Int: String] = [:]
            for try await (item, answer) in group { answers[item] = answer }
            return answers
        }
        #expect(answers == Dictionary(uniqueKeysWithValues: (0...7).map { ($0, "answer \($0)") }))
        #expect(recorder.batches.withLock { $0 } == [[0], [1, 2, 3], [4, 5, 6], [7]])
    }
}
