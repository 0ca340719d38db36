import Foundation

/// What the simulator's transitions hand to the outside world (notifications to sinks, transactions to update
/// streams), queued while the state lock is held and delivered after it is released, in the order they were made.
///
/// Delivery never runs under the lock, so a sink may call back into the simulator (as a server's notification endpoint
/// does). One caller delivers at a time: a caller that finds delivery under way leaves its items to that caller, which
/// takes every batch queued until the queue is empty; so the order is the state's order, whatever the threads.
struct Outbox {
    typealias Sink = @Sendable (SimulatorNotification) -> Void

    /// One thing to hand out, with the receivers registered when it was made.
    enum Delivery {
        case notification(SimulatorNotification, sinks: [Sink])
        case transaction(SimulatorTransaction, streams: [AsyncStream<SimulatorTransaction>.Continuation])

        func deliver() {
            switch self {
            case .notification(let notification, let sinks): for sink in sinks { sink(notification) }
            case .transaction(let transaction, let streams):
                // A listener whose buffer is full has fallen behind: it is ended, and gets the unfinished
                // transactions again when it reconnects, as StoreKit redelivers them.
                for stream in streams {
                    if case .dropped = stream.yield(transaction) { stream.finish() }
                }
            }
        }
    }

    private var queue: [Delivery] = []
    private var delivering = false

    mutating func post(_ delivery: Delivery) { queue.append(delivery) }

    /// The batch this caller should deliver now: none when the queue is empty or another caller is delivering (it
    /// will deliver these too).
    mutating func takeFirstBatch() -> [Delivery] {
        guard !delivering, !queue.isEmpty else { return [] }
        delivering = true
        defer { queue = [] }
        return queue
    }

    /// After a batch was delivered: the next one, or none, which ends this caller's turn.
    mutating func takeNextBatch() -> [Delivery] {
        guard !queue.isEmpty else {
            delivering = false
            return []
        }
        defer { queue = [] }
        return queue
    }
}
