import Foundation
import IAPCore
import NIOPosix
import NIOSSL
import PostgresNIO

/// Bounded waits without a task per wait: every wait for a connection or a statement's answer registers its deadline
/// here, and one sweeper task (a tick every 100 ms, for the database's lifetime) ends those past it. A statement's
/// answer or a lease arriving first removes its deadline. A statement's wait also ends when its connection closes
/// (one watch a connection, however many statements run on it). An answer awaited longer than the lag the database
/// sets (``whenAnswersLag(after:_:)``) is told to it, once a wait: it checks whether it still answers, and when it does
/// not, ``cut(with:)`` ends every wait at once.
final class Deadlines: Sendable {
    private struct Entry {
        let at: ContinuousClock.Instant
        let expire: @Sendable () -> Void
        /// The connection the answer is to come on, and what ends the wait when it closes first.
        var connection: Int? = nil
        var closed: (@Sendable () -> Void)? = nil
        /// Ends the wait with an error of the caller's (``cut(with:)``); nil for a wait that cannot be cut.
        var cut: (@Sendable (any Error) -> Void)? = nil
        /// When an answer not yet come counts as lagging; nil once told (or for a wait of another kind).
        var lagsAt: ContinuousClock.Instant? = nil
        /// Whether it is a wait for an answer (which can lag, and be told again: ``rearmLags()``).
        var isAnswer = false
    }
    private struct State {
        var next: UInt64 = 0
        var entries: [UInt64: Entry] = [:]
        /// The connections whose closing is watched.
        var watched: Set<Int> = []
        /// How long an answer may take before it lags, and who is told.
        var lag: (after: Duration, tell: @Sendable () -> Void)?
        /// When a statement was last answered.
        var lastAnswer: ContinuousClock.Instant?
    }
    private let state = Locked(State())
    private let clock = ContinuousClock()
    private let sweeper = Locked<Task<Void, Never>?>(nil)

    /// Starts the sweeper.
    init(tick: Duration = .milliseconds(100)) {
        let task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: tick)
                self?.sweep()
            }
        }
        sweeper.withLock { $0 = task }
    }

    deinit { stop() }

    /// Stops the sweeper; deadlines registered after this never expire.
    func stop() { sweeper.withLock { $0?.cancel() } }

    /// Calls `expire` once `duration` has passed, unless ``remove(_:)`` comes first; answers the token for that.
    /// `cut`, when given, ends the wait early with an error (``cut(with:)``).
    func add(
        after duration: Duration, expire: @escaping @Sendable () -> Void,
        cut: (@Sendable (any Error) -> Void)? = nil
    ) -> UInt64 {
        add(Entry(at: clock.now.advanced(by: duration), expire: expire, cut: cut))
    }

    /// Calls `tell` from the sweeper when an answer has been awaited longer than `lag` (at most once a sweep, and once
    /// for each wait).
    func whenAnswersLag(after lag: Duration, _ tell: @escaping @Sendable () -> Void) {
        state.withLock { $0.lag = (lag, tell) }
    }

    /// Answers that lagged and were told count again from now (the database answered the check: if it stops later,
    /// they lag anew).
    func rearmLags() {
        state.withLock { state in
            guard let lag = state.lag?.after else { return }
            let again = clock.now.advanced(by: lag)
            for (key, entry) in state.entries where entry.isAnswer && entry.lagsAt == nil {
                state.entries[key]?.lagsAt = again
            }
        }
    }

    /// Whether a statement was answered at `instant` or later.
    func answered(since instant: ContinuousClock.Instant) -> Bool {
        state.withLock { $0.lastAnswer.map { $0 >= instant } ?? false }
    }

    /// Ends every wait that can be cut (connections leased, statements' answers) with `error`, at once: the database
    /// was found not answering, and their deadlines are far.
    func cut(with error: any Error) {
        let cut: [@Sendable (any Error) -> Void] = state.withLock { state in
            let waiting = state.entries.filter { $0.value.cut != nil }
            for key in waiting.keys { state.entries.removeValue(forKey: key) }
            return waiting.values.compactMap(\.cut)
        }
        for end in cut { end(error) }
    }

    /// Adds `entry`; an answer's wait (`lagFrom` its start) also lags after the lag set.
    private func add(_ entry: Entry, lagFrom start: ContinuousClock.Instant? = nil) -> UInt64 {
        var entry = entry
        return state.withLock { state in
            if let start, let lag = state.lag {
                entry.lagsAt = start.advanced(by: lag.after)
                entry.isAnswer = true
            }
            state.next += 1
            state.entries[state.next] = entry
            return state.next
        }
    }

    func remove(_ token: UInt64) { state.withLock { _ = $0.entries.removeValue(forKey: token) } }

    /// How many waits are registered and how many connections are watched.
    var waiting: (entries: Int, watched: Int) { state.withLock { ($0.entries.count, $0.watched.count) } }

    private func sweep() {
        let now = clock.now
        let (due, lagging): ([Entry], (@Sendable () -> Void)?) = state.withLock { state in
            var lagging: (@Sendable () -> Void)?
            if let lag = state.lag, state.entries.values.contains(where: { $0.lagsAt.map { $0 <= now } ?? false }) {
                for (key, entry) in state.entries where entry.lagsAt.map({ $0 <= now }) ?? false {
                    state.entries[key]?.lagsAt = nil
                }
                lagging = lag.tell
            }
            guard state.entries.values.contains(where: { $0.at <= now }) else { return ([], lagging) }
            let due = state.entries.filter { $0.value.at <= now }
            for key in due.keys { state.entries.removeValue(forKey: key) }
            return (Array(due.values), lagging)
        }
        for entry in due { entry.expire() }
        lagging?()
    }

    /// Watches connection `id` closing (`closing` completes then), unless it is watched already.
    private func watch(_ id: Int, closing: EventLoopFuture<Void>) {
        guard state.withLock({ $0.watched.insert(id).inserted }) else { return }
        closing.whenComplete { _ in self.closed(id) }
    }

    /// Connection `id` closed: every wait for an answer on it ends.
    private func closed(_ id: Int) {
        let waiting: [Entry] = state.withLock { state in
            state.watched.remove(id)
            let waiting = state.entries.filter { $0.value.connection == id }
            for key in waiting.keys { state.entries.removeValue(forKey: key) }
            return Array(waiting.values)
        }
        for entry in waiting { entry.closed?() }
    }

    /// The value of `future`, or `expired` once `duration` passed without it (then `onExpiry` runs too), or `closed`
    /// once connection `on.id` closes without it (`on.closing` completes). postgres-nio can leave a statement in flight
    /// when its connection closes (as PostgreSQL closes them when it stops) unanswered for good: its request was held
    /// for the whole deadline, and expiring that late took a database that had long answered again for unreachable.
    func value<Value: Sendable>(
        of future: EventLoopFuture<Value>, within duration: Duration, expired: @escaping @Sendable () -> any Error,
        onExpiry: @escaping @Sendable () -> Void, on connection: (id: Int, closing: EventLoopFuture<Void>)? = nil,
        closed: @escaping @Sendable () -> any Error = { ChannelError.alreadyClosed }
    ) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let answer = OnceContinuation(continuation)
            let now = clock.now
            let token = add(
                Entry(
                    at: now.advanced(by: duration),
                    expire: { if answer.resume(with: .failure(expired())) { onExpiry() } },
                    connection: connection?.id,
                    closed: { _ = answer.resume(with: .failure(closed())) },
                    cut: { error in if answer.resume(with: .failure(error)) { onExpiry() } }),
                lagFrom: now)
            // After the entry: a connection closed already ends the wait at once.
            if let connection { watch(connection.id, closing: connection.closing) }
            future.whenComplete { result in
                if case .success = result {
                    let now = self.clock.now
                    self.state.withLock { state in
                        state.entries.removeValue(forKey: token)
                        state.lastAnswer = now
                    }
                } else {
                    self.remove(token)
                }
                _ = answer.resume(with: result.mapError { $0 as any Error })
            }
        }
    }
}

/// A continuation resumed by whichever comes first: the answer or its deadline.
final class OnceContinuation<Value: Sendable>: Sendable {
    private let continuation: Locked<CheckedContinuation<Value, any Error>?>

    init(_ continuation: CheckedContinuation<Value, any Error>) { self.continuation = Locked(continuation) }

    /// Resumes it unless it was; true when this call did.
    func resume(with result: Result<Value, any Error>) -> Bool {
        let waiting = continuation.withLock { continuation in
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(with: result)
        return waiting != nil
    }
}

/// A connection leased by one task and used by another until it releases it: the user can stop waiting for it
/// (``abandon(_:)``), and a connection that comes after that goes back to the pool at once.
final class ConnectionHandoff: Sendable {
    private struct State {
        var waiter: CheckedContinuation<PostgresConnection, any Error>?
        var outcome: Result<PostgresConnection, any Error>?
        var abandoned = false
        var released = false
        var releaser: CheckedContinuation<Void, Never>?
    }
    private let state = Locked(State())

    /// The leasing task's side: hands the connection over and holds it until it is released (at once if abandoned).
    func offer(_ connection: PostgresConnection) async {
        let kept: Bool = state.withLock { state in
            guard !state.abandoned else { return false }
            if let waiter = state.waiter {
                state.waiter = nil
                waiter.resume(returning: connection)
            } else {
                state.outcome = .success(connection)
            }
            return true
        }
        guard kept else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.released || state.abandoned { return true }
                state.releaser = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// The leasing task's side when the lease failed.
    func fail(_ error: any Error) {
        state.withLock { state in
            if let waiter = state.waiter {
                state.waiter = nil
                waiter.resume(throwing: error)
            } else if state.outcome == nil {
                state.outcome = .failure(error)
            }
        }
    }

    /// The user's side: waits for the connection (or the lease's failure, or the abandonment).
    func take() async throws -> PostgresConnection {
        try await withCheckedThrowingContinuation { continuation in
            state.withLock { state in
                if let outcome = state.outcome {
                    state.outcome = nil
                    continuation.resume(with: outcome)
                } else {
                    state.waiter = continuation
                }
            }
        }
    }

    /// Stops waiting with `error`; true when the user was still waiting, or not yet (the lease should be cancelled).
    /// Before the user waits (a cut can come then), its wait ends with `error` at once, and a connection that comes
    /// later goes back to the pool.
    func abandon(_ error: any Error) -> Bool {
        state.withLock { state in
            guard let waiter = state.waiter else {
                guard state.outcome == nil, !state.abandoned else { return false }
                state.outcome = .failure(error)
                state.abandoned = true
                return true
            }
            state.waiter = nil
            state.abandoned = true
            waiter.resume(throwing: error)
            return true
        }
    }

    /// The user is done with the connection: it goes back to the pool.
    func release() {
        let releaser = state.withLock { state in
            state.released = true
            defer { state.releaser = nil }
            return state.releaser
        }
        releaser?.resume()
    }
}

/// Opens one connection of its own to the database for statements that waited for a pooled one. The pool retries a
/// database that refuses connections until the connect timeout without saying so; a refusal here tells a database that
/// went away (stopped, restarting, unreachable) from a pool that is only busy. One check at a time: statements that
/// ask while one runs get its answer.
final class ConnectCheck: Sendable {
    private let configuration: PostgresConnection.Configuration
    /// The Unix socket the URL names (`DIRECTORY/.s.PGSQL.PORT`), named when it is missing; nil for TCP.
    private let socket: String?
    private let logger: Logger
    /// The answers waiting for the check in flight; nil while none runs.
    private let waiting = Locked<[@Sendable (Refusal?) -> Void]?>(nil)

    /// Why the database refused a connection.
    struct Refusal: Sendable, Equatable {
        let reason: String
        /// The login was refused (its role, password or database, TLS): new connections fail while the ones the pool
        /// keeps may still serve (a password rotated, `pg_hba.conf` reloaded), so it counts as the database refusing
        /// only before any connection was had.
        let login: Bool
    }

    init(configuration: PostgresConnection.Configuration, socket: String?, logger: Logger) {
        self.configuration = configuration
        self.socket = socket
        self.logger = logger
    }

    /// Calls `answer` with why the database refused a connection (``refusal(_:)``), or with nil when it accepted one or
    /// the check could not tell (it timed out, the server is full: the statement's own deadline decides then).
    func ask(_ answer: @escaping @Sendable (Refusal?) -> Void) {
        let first = waiting.withLock { waiting in
            guard waiting != nil else {
                waiting = [answer]
                return true
            }
            waiting?.append(answer)
            return false
        }
        guard first else { return }
        Task { [configuration, socket, logger, waiting] in
            var refused: Refusal?
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: configuration, id: 0, logger: logger)
                try? await connection.close()
            } catch {
                refused = Self.refusal(error, socket: socket)
            }
            let answers = waiting.withLock { waiting in
                defer { waiting = nil }
                return waiting ?? []
            }
            for answer in answers { answer(refused) }
        }
    }

    /// Whether a check of ``answers(within:deadlines:)`` runs.
    private let answering = Locked(false)

    /// Whether a connection of the check's own gets `SELECT 1` answered within `timeout`: false when it does not (no
    /// answer in time, the connection refused or broken, PostgreSQL shutting down), nil when it cannot tell (the
    /// server full, the login refused: the kept connections may still serve; or a check already running). At the
    /// timeout the check's connection is closed, so a check never outlives it by more than the connect timeout.
    func answers(within timeout: Duration, deadlines: Deadlines) async -> Bool? {
        let idle = answering.withLock { running in
            defer { running = true }
            return !running
        }
        guard idle else { return nil }
        // The check's connection once it has one, and whether the timeout came first.
        let held = Locked<(connection: PostgresConnection?, late: Bool)>((nil, false))
        let verdict = try? await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<Bool?, any Error>) in
            let once = OnceContinuation(continuation)
            let timer = deadlines.add(
                after: timeout,
                expire: {
                    _ = once.resume(with: .success(false))
                    let connection = held.withLock { held in
                        held.late = true
                        return held.connection
                    }
                    connection?.close().whenComplete { _ in }
                })
            Task { [configuration, socket, logger, answering] in
                var answered: Bool?
                do {
                    let connection = try await PostgresConnection.connect(
                        configuration: configuration, id: 0, logger: logger)
                    let late = held.withLock { held in
                        held.connection = connection
                        return held.late
                    }
                    if late {
                        answered = false
                    } else {
                        do {
                            _ = try await connection.query(PostgresQuery(unsafeSQL: "SELECT 1"), logger: logger).get()
                            answered = true
                        } catch {
                            // An error PostgreSQL sent is an answer too.
                            answered = !PostgresDatabase.isConnectionFailure(error)
                        }
                    }
                    try? await connection.close()
                } catch {
                    answered = Self.refusal(error, socket: socket).map { $0.login ? nil : false } ?? nil
                }
                deadlines.remove(timer)
                answering.withLock { $0 = false }
                _ = once.resume(with: .success(answered))
            }
        }
        return verdict ?? nil
    }

    /// Whether the database takes a connection now (one of the check's own, closed at once).
    func connects() async -> Bool {
        do {
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
            try? await connection.close()
            return true
        } catch {
            return false
        }
    }

    /// Why `error` says the database is not taking this server's connections, now or until an operator acts: refused
    /// or reset, a Unix socket missing or not allowed, PostgreSQL shutting down or starting (SQLSTATE class 57), the
    /// login refused (class 28: the role or its password), the database missing (3D000), a session setting refused at
    /// the start (42704 or 22023 from PostgreSQL, 08P01 "unsupported startup parameter" from PgBouncer), TLS that
    /// fails (a certificate not accepted) or that the server does not offer, or a password the URL cannot give. Nil for
    /// anything else (a full server or pooler, a timeout), which the statement's own deadline decides. These were
    /// found only after the connect timeout before, and named only in the driver's info-level log lines (an
    /// operator's trial).
    static func refusal(_ error: any Error, socket: String? = nil) -> Refusal? {
        if let error = error as? PSQLError {
            if let state = error.serverInfo?[.sqlState] {
                let reason = "PostgreSQL \(state)" + (error.serverInfo?[.message].map { ": \($0)" } ?? "")
                if state.hasPrefix("57") { return Refusal(reason: reason, login: false) }
                // A session setting refused at the start: by PostgreSQL (one it does not know, or a value it does not
                // take), or by a pooler in front (PgBouncer says 08P01 for this and for being full, which is not
                // lasting; docs/scale.md says how to run behind one).
                let message = error.serverInfo?[.message] ?? ""
                if state == "08P01", message.hasPrefix("unsupported startup parameter") {
                    return Refusal(reason: reason + " (a connection pooler in front?)", login: true)
                }
                if state == "42704" || state == "22023" { return Refusal(reason: reason, login: true) }
                return state.hasPrefix("28") || state == "3D000" ? Refusal(reason: reason, login: true) : nil
            }
            let login: String? =
                switch error.code {
                case .sslUnsupported: "the server does not offer TLS, which the URL's sslmode requires"
                case .authMechanismRequiresPassword: "the server asks for a password the URL does not give"
                case .unsupportedAuthMechanism: "the server asks for a way of logging in this client cannot use"
                default: nil
                }
            if let login { return Refusal(reason: login, login: true) }
            return error.underlying.flatMap { refusal($0, socket: socket) }
        }
        // TLS that could not be had: most often a certificate the URL's sslmode and sslrootcert do not accept.
        if case NIOSSLError.handshakeFailed = error {
            return Refusal(reason: "TLS with the database failed (see sslmode and sslrootcert): \(error)", login: true)
        }
        if let error = error as? NIOSSLExtraError, error == .failedToValidateHostname {
            return Refusal(
                reason: "TLS with the database failed: its certificate does not name the URL's host: \(error)",
                login: true)
        }
        if let error = error as? NIOConnectionError {
            // A host name that does not resolve (a typo, a name only another network knows): no address to try.
            if error.connectionErrors.isEmpty, let lookup = error.dnsAError ?? error.dnsAAAAError {
                // Counted as a refused login: a lookup can fail for a moment while the kept connections serve.
                return Refusal(
                    reason: "the database's host \(error.host) could not be resolved: \(lookup)", login: true)
            }
            let failures = error.connectionErrors.map(\.error)
            guard !failures.isEmpty, failures.allSatisfy({ refusal($0) != nil }) else { return nil }
            return Refusal(reason: "\(error.host):\(error.port) refused the connection", login: false)
        }
        if let error = error as? IOError,
            [ECONNREFUSED, ECONNRESET, ECONNABORTED, EHOSTUNREACH, ENETUNREACH].contains(error.errnoCode)
        {
            return Refusal(reason: "\(error)", login: false)
        }
        // A Unix socket: none there (PostgreSQL stopped removes it), or one this process may not open.
        if let error = error as? IOError, error.errnoCode == ENOENT {
            return Refusal(
                reason:
                    "no PostgreSQL socket \(socket.map { "at \($0)" } ?? "in the URL's host directory") (is PostgreSQL "
                    + "running, and on the URL's port?): \(error)", login: false)
        }
        if let error = error as? IOError, error.errnoCode == EACCES {
            return Refusal(reason: "the PostgreSQL socket may not be opened by this user: \(error)", login: true)
        }
        return nil
    }
}
