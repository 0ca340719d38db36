import Synchronization

/// A lock for async code: one holder at a time, waiters served in arrival order. Used to give one task the SQLite
/// writer connection for a whole transaction.
final class AsyncLock: Sendable {
    private let state = Mutex<(held: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func withLock<R: Sendable>(_ body: () async throws -> R) async throws -> R {
        await acquire()
        defer { release() }
        return try await body()
    }

    /// Whether tasks are queued for the lock now (asked by its holder).
    var hasWaiters: Bool { state.withLock { !$0.waiters.isEmpty } }

    private func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                if state.held {
                    state.waiters.append(continuation)
                    return false
                }
                state.held = true
                return true
            }
            if granted { continuation.resume() }
        }
    }

    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.held = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
