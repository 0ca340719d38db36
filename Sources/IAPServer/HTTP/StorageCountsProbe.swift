import IAPCore

/// What `GET /health` says of the database, without waiting on it: liveness must answer while the database does not
/// (a balancer or orchestrator that times out its probe would restart a live server). One count runs at a time, shared
/// by every caller that comes while it runs; a caller waits for it at most `patience` and is told the database is
/// unreachable past it, while the count goes on, bounded by the storage's own timeouts, for the next callers.
final class StorageCountsProbe: Sendable {
    private let count: @Sendable () async -> StorageCounts?
    private let patience: Duration
    private let inFlight = Locked<Task<StorageCounts?, Never>?>(nil)

    /// Counts with `count` (nil: it failed).
    init(patience: Duration = .seconds(1), count: @escaping @Sendable () async -> StorageCounts?) {
        self.count = count
        self.patience = patience
    }

    /// Counts what `storage` holds.
    convenience init(storage: any ServerStorage, patience: Duration = .seconds(1)) {
        self.init(patience: patience) { try? await storage.counts() }
    }

    /// The storage's counts, or nil when it failed or did not answer within the patience.
    func counts() async -> StorageCounts? {
        let run = self.count
        let count = inFlight.withLock { running in
            if let running { return running }
            let started = Task { await run() }
            running = started
            return started
        }
        let answered = Locked(false)
        return await withCheckedContinuation { (waiter: CheckedContinuation<StorageCounts?, Never>) in
            // Whichever comes first answers the caller: the count or the patience's end.
            @Sendable func settle(_ counts: StorageCounts?) {
                let first = answered.withLock { answered in
                    defer { answered = true }
                    return !answered
                }
                if first { waiter.resume(returning: counts) }
            }
            let timer = Task { [patience] in
                try await Task.sleep(for: patience)
                settle(nil)
            }
            Task { [inFlight] in
                let counts = await count.value
                inFlight.withLock { if $0 == count { $0 = nil } }
                timer.cancel()
                settle(counts)
            }
        }
    }
}
