import Foundation
import IAPCore

/// Runs many callers' lookups as few statements: each trip to PostgreSQL costs a server about 0.1 ms of CPU before the
/// statement does any work, and PostgreSQL its own share, so one statement answering eight lookups costs much less than
/// eight (see docs/scale.md). Nothing waits to fill a batch: while fewer than `lanes` batches are in flight a caller's
/// lookup goes at once, alone; otherwise it waits for a lane, and the caller that gets the lane next takes every lookup
/// waiting by then (up to `batchLimit`), runs them as one batch and hands each caller its answer. Under light load
/// that is one lookup a statement, as before; under load the batches grow with the queue.
///
/// Bounded: no more than `batchLimit` lookups wait; one that comes when that many do runs at once, alone. So a caller
/// waits at most for the batch in flight and then its own, each as bounded as a statement is (the connect and
/// statement timeouts). A batch that fails fails each of its callers with the same error, and the lane is handed on as
/// after a success.
///
/// With `apart`, two items it says must not share a statement never do: the later one waits for the next batch, in
/// its place in the queue.
final class Coalescer<Item: Sendable, Answer: Sendable>: Sendable {
    /// Runs one batch: one answer per item, in the items' order.
    typealias Batch = @Sendable ([Item]) async throws -> [Answer]

    private enum Turn {
        /// The caller runs these items (its own first) as one batch.
        case lead([Waiting])
        /// Another caller's batch answered.
        case answered(Result<Answer, any Error>)
    }

    private struct Waiting {
        let item: Item
        let continuation: CheckedContinuation<Turn, Never>?
    }

    private struct State {
        var lanesInUse = 0
        var queue: [Waiting] = []
        var batches = 0
        var items = 0
    }

    private let state = Locked(State())
    private let lanes: Int
    private let batchLimit: Int
    private let batch: Batch
    private let apart: (@Sendable (Item, Item) -> Bool)?

    /// At most `lanes` batches in flight, each of at most `batchLimit` items none of which `apart` keeps apart, run by
    /// `batch`.
    init(
        lanes: Int, batchLimit: Int, apart: (@Sendable (Item, Item) -> Bool)? = nil, batch: @escaping Batch
    ) {
        precondition(lanes > 0 && batchLimit > 0)
        self.lanes = lanes
        self.batchLimit = batchLimit
        self.apart = apart
        self.batch = batch
    }

    /// How many batches ran and how many items they carried, since the start.
    var counts: (batches: Int, items: Int) { state.withLock { ($0.batches, $0.items) } }

    /// How many lookups wait for a lane now.
    var queued: Int { state.withLock { $0.queue.count } }

    /// The answer to `item`, from a batch of its own or one it shares with other callers' items.
    func answer(_ item: Item) async throws -> Answer {
        let (leadsAtOnce, alone) = state.withLock { state in
            guard state.lanesInUse < lanes else { return (false, state.queue.count >= batchLimit) }
            state.lanesInUse += 1
            return (true, false)
        }
        if alone {
            let answers = try await batch([item])
            precondition(answers.count == 1, "a batch answers each of its items")
            return answers[0]
        }
        let turn: Turn =
            if leadsAtOnce {
                .lead([Waiting(item: item, continuation: nil)])
            } else {
                await withCheckedContinuation { continuation in
                    // A lane may have come free since the check above: then this caller leads at once.
                    let leads = state.withLock { state in
                        if state.lanesInUse < lanes {
                            state.lanesInUse += 1
                            return true
                        }
                        state.queue.append(Waiting(item: item, continuation: continuation))
                        return false
                    }
                    if leads { continuation.resume(returning: .lead([Waiting(item: item, continuation: nil)])) }
                }
            }
        switch turn {
        case .answered(let result):
            return try result.get()
        case .lead(let waiting):
            return try await lead(waiting)
        }
    }

    /// Runs `waiting` as one batch, answers the others, and hands the lane on. Returns the leader's own answer (the
    /// first item).
    private func lead(_ waiting: [Waiting]) async throws -> Answer {
        let result: Result<[Answer], any Error>
        do {
            let answers = try await batch(waiting.map(\.item))
            precondition(answers.count == waiting.count, "a batch answers each of its items")
            result = .success(answers)
        } catch {
            result = .failure(error)
        }
        let next: [Waiting] = state.withLock { state in
            state.batches += 1
            state.items += waiting.count
            guard !state.queue.isEmpty else {
                state.lanesInUse -= 1
                return []
            }
            guard let apart else {
                let taken = Array(state.queue.prefix(batchLimit))
                state.queue.removeFirst(taken.count)
                return taken
            }
            var taken: [Waiting] = []
            var left: [Waiting] = []
            for waiting in state.queue {
                if taken.count < batchLimit, !taken.contains(where: { apart($0.item, waiting.item) }) {
                    taken.append(waiting)
                } else {
                    left.append(waiting)
                }
            }
            state.queue = left
            return taken
        }
        if let leader = next.first?.continuation { leader.resume(returning: .lead(next)) }
        for (index, other) in waiting.enumerated().dropFirst() {
            other.continuation?.resume(returning: .answered(result.map { $0[index] }))
        }
        return try result.get()[0]
    }
}
