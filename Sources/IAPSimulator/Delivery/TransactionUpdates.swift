/// `Transaction.updates` for one listener: the transactions that were unfinished when it subscribed, each signed as
/// it is read (so a listener holds ids, not documents), then the live updates, bounded by the simulator's
/// ``AppStoreSimulator/UpdateLimits``.
public struct TransactionUpdates: AsyncSequence, Sendable {
    public typealias Element = SimulatorTransaction

    let unfinished: [UInt64]
    let live: AsyncStream<SimulatorTransaction>
    let simulator: AppStoreSimulator

    public struct AsyncIterator: AsyncIteratorProtocol {
        var unfinished: IndexingIterator<[UInt64]>
        var live: AsyncStream<SimulatorTransaction>.AsyncIterator
        let simulator: AppStoreSimulator

        public mutating func next() async -> SimulatorTransaction? {
            while let id = unfinished.next() {
                if let transaction = simulator.signedTransaction(number: id) { return transaction }
            }
            return await live.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(unfinished: unfinished.makeIterator(), live: live.makeAsyncIterator(), simulator: simulator)
    }
}
