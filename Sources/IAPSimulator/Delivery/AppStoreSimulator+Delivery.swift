public import Foundation
import IAPCatalog
import IAPCore
import IAPReceipts
import IAPSignedData
import Synchronization

/// How what the simulator makes leaves it: notification sinks and `Transaction.updates` listeners.
extension AppStoreSimulator {
    /// Calls `sink` with every notification issued from now on, in order, after the simulator has released its state
    /// (so the sink may call back into it, as a server's notification endpoint does). A caller on one task has had
    /// its notifications delivered when its call returns; with callers on several tasks, one delivers for all.
    public func addNotificationSink(_ sink: @escaping @Sendable (SimulatorNotification) -> Void) {
        state.withLock { $0.core.notificationSinks.append(sink) }
    }

    /// The transaction updates one device of the account sees (`Transaction.updates`): first every unfinished
    /// transaction (redelivery at launch, signed as it is read), then each transaction issued or changed from now on,
    /// except what a purchase made on `device` itself returns (as in StoreKit, the app gets that from `purchase()`).
    /// Each call is one listener; end it by dropping the sequence.
    ///
    /// Listeners are bounded by ``updateLimits``: an account's oldest listener is ended when it has too many, a new
    /// one is refused (`systemError`) when the simulator has too many in all, and one that falls more than a buffer
    /// behind is ended (reconnecting delivers the unfinished transactions again).
    public func transactionUpdates(account: String, device: UUID? = nil) throws(SimulatorError) -> TransactionUpdates {
        let limits = updateLimits
        let (stream, continuation) = AsyncStream.makeStream(
            of: SimulatorTransaction.self, bufferingPolicy: .bufferingOldest(limits.buffer))
        let key = UUID()
        // Listeners ended to make room are finished after the lock is released: finishing runs their termination
        // handler, which takes the lock.
        let (unfinished, ended) = try withCore {
            (core) throws(SimulatorError) -> ([UInt64], [AsyncStream<SimulatorTransaction>.Continuation]) in
            let holder = try core.account(account)
            if let device, holder.device(device) == nil {
                throw SimulatorError(.unknownDevice, "device \(device) does not belong to \(account)")
            }
            var listeners = core.updateStreams[account] ?? [:]
            // The account's oldest listeners that make room end, so they do not count against the total.
            let replaced = max(0, listeners.count - limits.perAccount + 1)
            guard core.updateStreams.values.reduce(0, { $0 + $1.count }) - replaced < limits.total else {
                throw SimulatorError(
                    .systemError,
                    "the simulator has \(limits.total) update listeners, the most it keeps; try again later")
            }
            var ended: [AsyncStream<SimulatorTransaction>.Continuation] = []
            while listeners.count >= limits.perAccount,
                let oldest = listeners.min(by: { $0.value.opened < $1.value.opened })
            {
                ended.append(oldest.value.continuation)
                listeners[oldest.key] = nil
            }
            core.updateStreamsOpened += 1
            listeners[key] = UpdateStream(device: device, continuation: continuation, opened: core.updateStreamsOpened)
            core.updateStreams[account] = listeners
            return (core.unfinished(account: account), ended)
        }
        for listener in ended { listener.finish() }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.core.updateStreams[account]?.removeValue(forKey: key) }
        }
        return TransactionUpdates(unfinished: unfinished, live: stream, simulator: self)
    }

    /// The listeners open now, across accounts.
    public var updateListenerCount: Int {
        (try? withCore(catchingUp: false) { (core, _) in core.updateStreams.values.reduce(0) { $0 + $1.count } }) ?? 0
    }

    /// A transaction by id, signed (signing it again only if it changed).
    func signedTransaction(number: UInt64) -> SimulatorTransaction? {
        try? withCore(catchingUp: false) { (core, _) throws(SimulatorError) in try core.signedTransaction(number) }
    }
}
