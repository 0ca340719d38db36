import Hummingbird
import IAPServer
import IAPSimulator
import Logging
import Synchronization

/// Saves the local App Store to the server's database after every change (what changed, not everything), one save
/// at a time: changes made while a save runs are saved together by the next. A failed save is logged and retried
/// with every row 2 s later (or with the next change, or at shutdown). ``saved()`` waits until a save handled every change made before
/// it and says whether they are in the database (a failed save leaves them in memory until a later save), so a request
/// that changed the store is answered as done only once the change is durable.
final class SimulatorSaver: Sendable {
    private struct Progress {
        var requested: UInt64 = 0
        /// Every change up to this one was handled by a save (which may have failed).
        var saved: UInt64 = 0
        /// Every change up to this one is in the database (the last save that covered it succeeded).
        var durable: UInt64 = 0
        var finished = false
        var waiters: [(target: UInt64, continuation: CheckedContinuation<Bool, Never>)] = []
    }

    /// The progress, in a class of its own so the worker and the change observer can hold it.
    private final class Tracker: Sendable {
        let state = Mutex(Progress())
    }

    private let continuation: AsyncStream<Void>.Continuation
    private let tracker = Tracker()
    private let worker = Mutex<Task<Void, Never>?>(nil)
    private let simulator: AppStoreSimulator
    /// This saver's change observer on the simulator, removed when it finishes.
    private let observer: Int

    /// - Parameter lease: the lease every save is made under (nil: none), and what to do when a save finds it taken
    ///   over (nothing is written then, nor afterwards).
    init(
        simulator: AppStoreSimulator, storage: any ServerStorage, logger: Logger,
        lease: SimulatorLeaseHolder? = nil
    ) {
        let (changes, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.continuation = continuation
        self.simulator = simulator
        let bundleID = simulator.configuration.bundleID
        let retry = continuation
        let task = Task { [tracker] in
            // Failed saves in a row, and when the last of them was logged: an outage is logged when it starts, once a
            // minute while it lasts (with the count), and when a save goes through again, not at every retry.
            var failures = 0
            var loggedAt = ContinuousClock.now
            func save() async {
                let target = tracker.state.withLock { $0.requested }
                // Whether everything changed up to `target` is in the database after this save.
                var durable = lease?.isLost != true
                if durable, let rows = simulator.changedRows() {
                    do {
                        if try await !storage.saveSimulatorState(rows, bundleID: bundleID, holder: lease?.holder) {
                            lease?.markLost()
                            durable = false
                        } else if failures > 0 {
                            logger.notice(
                                "the local App Store was saved again", metadata: ["failedSaves": "\(failures)"])
                        }
                        failures = 0
                    } catch {
                        simulator.saveFailed()
                        durable = false
                        // Tried again without waiting for another change: what waits on it (a notification) may be
                        // all that comes.
                        Task {
                            try? await Task.sleep(for: .seconds(2))
                            retry.yield()
                        }
                        failures += 1
                        if failures == 1 || ContinuousClock.now - loggedAt >= .seconds(60) {
                            loggedAt = ContinuousClock.now
                            logger.error(
                                failures == 1
                                    ? "the local App Store could not be saved; it will try again every 2 s"
                                    : "the local App Store still could not be saved; it keeps trying every 2 s",
                                metadata: [
                                    "code": "\(error.code)", "reason": "\(error.reason)", "failedSaves": "\(failures)",
                                ])
                        }
                    }
                }
                let ready = tracker.state.withLock { state in
                    state.saved = max(state.saved, target)
                    if durable { state.durable = max(state.durable, target) }
                    let ready = state.waiters.filter { $0.target <= state.saved }
                    state.waiters.removeAll { $0.target <= state.saved }
                    return ready.map { ($0.continuation, $0.target <= state.durable) }
                }
                for (waiter, durable) in ready { waiter.resume(returning: durable) }
            }
            for await _ in changes { await save() }
            await save()
            let waiting = tracker.state.withLock { state in
                state.finished = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiting { waiter.continuation.resume(returning: false) }
        }
        worker.withLock { $0 = task }
        observer = simulator.onChange { [tracker] in
            tracker.state.withLock { $0.requested += 1 }
            continuation.yield()
        }
    }

    /// Returns once a save has handled every change made before the call: true when they are all in the database,
    /// false when that save failed (the changes stay in memory and go with a later save, unless the lease was lost)
    /// or saving has stopped.
    func saved() async -> Bool {
        await withCheckedContinuation { (waiter: CheckedContinuation<Bool, Never>) in
            let done: Bool? = tracker.state.withLock { state in
                if state.saved >= state.requested { return state.durable >= state.requested }
                guard !state.finished else { return false }
                state.waiters.append((state.requested, waiter))
                return nil
            }
            if let done { waiter.resume(returning: done) }
        }
    }

    /// Saves what is left and stops (a saver whose lease was lost saves nothing).
    func finish() async {
        simulator.removeChangeObserver(observer)
        continuation.finish()
        await worker.withLock { $0 }?.value
    }
}

/// Answers a request that may have changed the local App Store (anything but GET and HEAD under `/simulator` and
/// `/inApps`) only once the change is saved, so what a client was told happened survives a crash or a take-over right
/// after. The validation routes never wait for it. A change that is not in the database is not answered as done: 503
/// `localAppStoreElsewhere` when its save found the lease taken over, `localAppStoreUnsaved` when the save failed.
struct SimulatorSavedMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The saver of the store while this server sells it, with the lease its saves are made under.
    let current: @Sendable () -> (saver: SimulatorSaver, lease: SimulatorLeaseHolder?)?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        // The sale the request was served under (a take-over while it runs starts another).
        let sale = current()
        let response = try await next(request, context)
        if request.method != .get, request.method != .head,
            case let first = LocalAppStorePaths.firstSegment(of: request.uri.path),
            first == "simulator" || first == "inApps", let (saver, lease) = sale
        {
            let durable = await saver.saved()
            if lease?.isLost == true {
                throw APIError(
                    503, "localAppStoreElsewhere",
                    "another server of this database took over the local App Store before this change was saved")
            }
            // Not answered as done while it is only in memory: a take-over would continue without it.
            guard durable else {
                throw APIError(
                    503, "localAppStoreUnsaved",
                    "the change could not be saved in the database (it does not answer): it is kept in memory and "
                        + "saved with the next save that succeeds, unless another server takes the store over first")
            }
        }
        return response
    }
}
