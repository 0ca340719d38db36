import IAPCore

/// What `GET /health` and `GET /ready` say of the database, without waiting on it longer than a balancer's probe
/// does: liveness must answer while the database does not (a balancer or orchestrator that times out its probe would
/// restart a live server), and readiness must say "not ready" in time (its check waits for a pooled connection, up to
/// the connect timeout, 10 s, while statements hold them all). One check runs at a time, shared by every caller that
/// comes while it runs; a caller waits for it at most `patience` and is told nil past it, while the check goes on,
/// bounded by the storage's own timeouts, for the next callers.
final class StorageProbe<Value: Sendable>: Sendable {
    private let check: @Sendable () async -> Value?
    private let patience: Duration
    private let inFlight = Locked<Task<Value?, Never>?>(nil)

    /// Checks with `check` (nil: it failed).
    init(patience: Duration = .seconds(1), check: @escaping @Sendable () async -> Value?) {
        self.check = check
        self.patience = patience
    }

    /// The check's answer, or nil when it failed or did not answer within the patience.
    func answer() async -> Value? {
        let run = self.check
        let running = inFlight.withLock { running in
            if let running { return running }
            let started = Task { await run() }
            running = started
            return started
        }
        let answered = Locked(false)
        return await withCheckedContinuation { (waiter: CheckedContinuation<Value?, Never>) in
            // Whichever comes first answers the caller: the check or the patience's end.
            @Sendable func settle(_ answer: Value?) {
                let first = answered.withLock { answered in
                    defer { answered = true }
                    return !answered
                }
                if first { waiter.resume(returning: answer) }
            }
            let timer = Task { [patience] in
                try await Task.sleep(for: patience)
                settle(nil)
            }
            Task { [inFlight] in
                let answer = await running.value
                inFlight.withLock { if $0 == running { $0 = nil } }
                timer.cancel()
                settle(answer)
            }
        }
    }
}

/// `GET /health`'s probe: the storage's counts.
typealias StorageCountsProbe = StorageProbe<StorageCounts>

extension StorageProbe where Value == StorageCounts {
    /// Counts what `storage` holds.
    convenience init(storage: any ServerStorage, patience: Duration = .seconds(1)) {
        self.init(patience: patience, check: { try? await storage.counts() })
    }
}

extension StorageProbe where Value == Bool {
    /// Whether `storage` answers (nil: it does not).
    convenience init(reaching storage: any ServerStorage, patience: Duration) {
        self.init(patience: patience, check: { await storage.reachable() ? true : nil })
    }
}
