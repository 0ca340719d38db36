import Foundation
import IAPCore
public import Logging
import NIOCore
import NIOSSL
import PostgresNIO

/// A PostgreSQL database through postgres-nio's connection pool: several server instances can share it.
public final class PostgresDatabase: SQLDatabase {
    public var engine: SQLEngine { .postgres }
    /// The pool in use (a new one after an outage: ``renewPool()``), those given up until their leases are back, the
    /// probe while the database is unreachable, and whether `close()` was called (nothing starts after it).
    private let pools: Locked<Pools>
    private struct Pools {
        var current: Pool
        var retired: [Pool] = []
        var probe: Task<Void, Never>? = nil
        var closed = false
    }
    private let poolConfiguration: PostgresClient.Configuration
    /// Pings the pool's connections every `keepAliveInterval` (the pool's own keep-alive is off; see
    /// ``configuration(url:maximumConnections:)``).
    private let pinger: Task<Void, Never>
    private let logger: Logger
    /// What postgres-nio's pools and the connection check log through: ``driverLogger(_:)``.
    private let driverLogger: Logger
    private let reachability = Reachability()
    private let deadlines = Deadlines()
    /// How long a statement waits for a connection (`connect_timeout` in the URL, seconds; 10 by default): waiting
    /// behind other statements for a pooled connection counts.
    let connectTimeout: Duration
    /// How long a statement may run (`statement_timeout` in the URL, seconds; 30 by default). PostgreSQL ends a statement
    /// that runs longer itself (SQLSTATE 57014: a busy database, or one waiting on a lock, not an unreachable one); the
    /// server stops waiting for an answer ``answerGrace`` later.
    let statementTimeout: Duration
    /// How often the pool's connections are pinged (`keepalive` in the URL, seconds; 30 by default): often enough for
    /// a firewall, a NAT or the database's `idle_session_timeout` to keep them, and to find one that died quietly
    /// while nothing used it.
    let keepAliveInterval: Duration
    /// Tells a database that went away from a busy pool when a statement has waited ``suspicion`` for a connection.
    private let connectCheck: ConnectCheck
    /// Whether the pool has handed out a connection since the start (a refused login counts only until then).
    private let connected = Locked(false)
    /// Refused logins while the kept connections serve, logged at most once a minute.
    private let loginRefusals: FailureLog
    /// How long a statement waits for a pooled connection before a connection of its own is tried: the pool retries
    /// a database that refuses connections until the connect timeout (10 s by default) without saying so.
    static let suspicion = Duration.milliseconds(250)

    /// Connects to `url` (`postgres://user:password@host:port/database?setting=value&...`; the settings are
    /// `PostgresAddress.settings`: TLS is off by default for loopback hosts and preferred otherwise, see `PostgresAddress`).
    public init(url: String, maximumConnections: Int = 4, logger: Logger = Logger(label: "iapkit.postgres")) throws {
        let configuration = try Self.configuration(url: url, maximumConnections: maximumConnections)
        poolConfiguration = configuration
        driverLogger = Self.driverLogger(logger)
        pools = Locked(Pools(current: Pool(number: 0, configuration: configuration, logger: driverLogger)))
        self.logger = logger
        loginRefusals = FailureLog(
            interval: 60_000_000_000,
            summary: { [logger] _, unlogged in
                logger.error(
                    "the database refused more new connections", metadata: ["unloggedSinceLast": "\(unlogged)"])
            })
        if let warning = try Address(url: url).uncheckedTLSWarning { logger.warning("\(warning)") }
        connectTimeout = try Self.seconds("connect_timeout", in: url, default: 10)
        statementTimeout = try Self.seconds("statement_timeout", in: url, default: 30)
        keepAliveInterval = try Self.seconds("keepalive", in: url, default: 30)
        connectCheck = ConnectCheck(
            configuration: try Self.checkConfiguration(url: url), socket: try Address(url: url).socketPath,
            logger: driverLogger)
        let connections = configuration.options.maximumConnections
        let answerDeadline = statementTimeout + Self.answerGrace(statementTimeout)
        pinger = Task { [pools, deadlines, reachability, logger, keepAliveInterval] in
            while !Task.isCancelled {
                try? await Task.sleep(for: keepAliveInterval)
                guard !Task.isCancelled, !reachability.isDown else { continue }
                let current = pools.withLock { $0.current }
                await Self.ping(
                    connections, of: current.client,
                    runner: {
                        PostgresRunner(
                            connection: $0, pool: current, logger: logger, deadline: answerDeadline,
                            deadlines: deadlines, reachability: nil)
                    },
                    logger: logger)
            }
        }
        deadlines.whenAnswersLag(after: Self.answerLag(statementTimeout)) { [weak self] in self?.answersLag() }
    }

    /// How many times the pool was renewed after an outage.
    var renewals: Int { pools.withLock { $0.current.number } }

    /// Puts a new pool in the current one's place, once the database takes connections again after an outage
    /// (``startProbing()``, once an outage): postgres-nio's pool waits longer and longer between attempts while they
    /// fail (100 ms × 1.25^n, up to a minute), so after a minute's outage it came back 14 s after the database did, and
    /// after longer ones up to a minute later. The old pool is stopped once every connection leased from it is back
    /// (a statement, a transaction, a migration). False once `close()` was called.
    private func renewPool() -> Bool {
        let old = pools.withLock { pools -> Pool? in
            guard !pools.closed else { return nil }
            let old = pools.current
            pools.current = Pool(number: old.number + 1, configuration: poolConfiguration, logger: driverLogger)
            pools.retired.append(old)
            return old
        }
        guard let old else { return false }
        Task { [pools] in
            while old.leases.withLock({ $0 }) > 0, !pools.withLock({ $0.closed }) {
                try? await Task.sleep(for: .milliseconds(100))
            }
            await old.stop()
            pools.withLock { pools in pools.retired.removeAll { $0 === old } }
        }
        return true
    }

    /// Advice for the operator when the database runs on this machine and Linux groups threads by session for the CPU
    /// (`kernel.sched_autogroup_enabled` is 1, as in Debian's kernels): every PostgreSQL backend starts a session, so
    /// each is a group of its own, and on two cores shared with the servers single backends waited up to 450 ms for a
    /// core (docs/scale.md). Nil otherwise.
    /// - Parameters:
    ///   - url: the database URL.
    ///   - autogroup: what `/proc/sys/kernel/sched_autogroup_enabled` holds; nil where there is no such file.
    static func sharedCoresAdvice(url: String, autogroup: String?) -> String? {
        guard autogroup?.trimmingCharacters(in: .whitespacesAndNewlines) == "1",
            (try? Address(url: url))?.isLocal == true
        else { return nil }
        return """
            PostgreSQL runs on this machine and the kernel groups threads by session (kernel.sched_autogroup_enabled \
            is 1): unless the database has a CPU cgroup of its own, each backend is then a CPU group of its own, and \
            where the database and the servers share a few cores, single backends can wait hundreds of milliseconds \
            for a core. Turn the grouping off (sysctl kernel.sched_autogroup_enabled=0, then restart PostgreSQL and \
            the servers: it applies to processes started after it) or give the database a CPU cgroup (docs/scale.md)
            """
    }

    /// Pings each of the pool's `count` connections once (`SELECT 1`). The pool hands out the first free connection,
    /// so a ping keeps its connection until every ping has one: otherwise a quick ping's connection would take the next
    /// ping too, and the connections idle longest would never be pinged. It keeps it 50 ms at most, and not at all when
    /// its lease had to wait (the pool is busy: its connections are in use and need no ping, and requests wait for
    /// them). A connection that does not answer within the statement timeout is closed, and the pool opens another.
    private static func ping(
        _ count: Int, of client: PostgresClient, runner: @escaping @Sendable (PostgresConnection) -> PostgresRunner,
        logger: Logger
    ) async {
        let holding = Locked(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<count {
                group.addTask {
                    let asked = ContinuousClock.now
                    do {
                        try await client.withConnection { connection in
                            let busy = ContinuousClock.now - asked > .milliseconds(2)
                            _ = try await runner(connection).rows(SQLStatement("SELECT 1"))
                            holding.withLock { $0 += 1 }
                            let deadline = ContinuousClock.now + .milliseconds(50)
                            while !busy, holding.withLock({ $0 }) < count, ContinuousClock.now < deadline {
                                try await Task.sleep(for: .milliseconds(5))
                            }
                        }
                    } catch {
                        logger.debug("a keep-alive ping failed: \(error)")
                    }
                }
            }
        }
    }

    /// How much longer than the statement timeout the server waits for an answer before it takes the database for
    /// unreachable and closes the connection: PostgreSQL's own cancel (which stops the statement there, so nothing it
    /// would have written lands later) comes first from a database that answers at all. A tenth of the timeout, at least
    /// 2 s.
    static func answerGrace(_ statementTimeout: Duration) -> Duration { max(.seconds(2), statementTimeout / 10) }

    /// The URL's query item `name` in whole seconds (1 to 600), or `fallback` when absent.
    static func seconds(_ name: String, in url: String, default fallback: Int) throws -> Duration {
        guard let value = URLComponents(string: url)?.queryItems?.first(where: { $0.name == name })?.value else {
            return .seconds(fallback)
        }
        guard let seconds = Int(value), (1...600).contains(seconds) else {
            throw StorageError(code: "badDatabaseURL", reason: "\(name) '\(value)' is not 1 to 600 seconds")
        }
        return .seconds(seconds)
    }

    /// The pool configuration a URL describes; throws a message naming what is wrong.
    static func configuration(url text: String, maximumConnections: Int) throws -> PostgresClient.Configuration {
        let address = try Address(url: text)
        let pool = URLComponents(string: text)?.queryItems?.first { $0.name == "pool_size" }?.value
        guard pool.map({ Int($0).map { (1...1000).contains($0) } ?? false }) ?? true else {
            throw StorageError(
                code: "badDatabaseURL",
                reason: "pool_size '\(pool ?? "")' is not a number of connections from 1 to 1000")
        }
        var configuration = address.poolConfiguration
        configuration.options.maximumConnections = pool.flatMap { Int($0) } ?? maximumConnections
        // The pool's timers are off: each time a statement hands a connection back, the pool would start one for
        // closing it when idle and one for its keep-alive (a task group of two tasks and a sleep each). Every
        // connection is kept instead, and a task of ours pings them (``keepAliveInterval``). Two instances answered
        // /ready (one `SELECT 1` each) for 0.124 ms of server CPU a request without the timers, 0.133-0.162 with them.
        configuration.options.minimumConnections = configuration.options.maximumConnections
        configuration.options.keepAliveBehavior = nil
        configuration.options.connectTimeout = try seconds("connect_timeout", in: text, default: 10)
        configuration.options.additionalStartupParameters = try sessionSettings(url: text, address: address)
        return configuration
    }

    /// The settings every session starts with.
    /// - Every statement is an index lookup written for its plan: plan each prepared one once, never again per value
    ///   (planning the customer's rows, a union of four lookups, took 2 ms a time).
    /// - A session that froze inside a transaction (its host lost, its connection cut mid-save) would hold its row
    ///   locks until the database's TCP keep-alive gave up on it, hours by default: ended after 15 s idle in one.
    /// - A statement that runs past the statement timeout (waiting on a lock another session holds, most likely) is
    ///   ended by PostgreSQL, which then writes nothing; migrations lift it for their transaction.
    private static func sessionSettings(url text: String, address: Address) throws -> [(String, String)] {
        let statementTimeout = try seconds("statement_timeout", in: text, default: 30)
        return [
            ("plan_cache_mode", "force_generic_plan"), ("idle_in_transaction_session_timeout", "15000"),
            ("statement_timeout", "\(statementTimeout.components.seconds * 1000)"),
            ("application_name", address.applicationName),
        ]
    }

    /// The configuration of the one connection ``ConnectCheck`` opens: the URL's database, reached the pool's way
    /// with the same session settings (a pooler in front may refuse one).
    static func checkConfiguration(url text: String) throws -> PostgresConnection.Configuration {
        let address = try Address(url: text)
        var configuration = try address.connectionConfiguration()
        configuration.options.additionalStartupParameters = try sessionSettings(url: text, address: address)
        let timeout = try seconds("connect_timeout", in: text, default: 10)
        configuration.options.connectTimeout = .seconds(timeout.components.seconds)
        return configuration
    }

    /// A runner for statements on a connection leased from `pool`.
    private func runner(on connection: PostgresConnection, of pool: Pool, probing: Bool) -> PostgresRunner {
        PostgresRunner(
            connection: connection, pool: pool, logger: logger,
            deadline: statementTimeout + Self.answerGrace(statementTimeout), deadlines: deadlines,
            reachability: probing ? nil : reachability)
    }

    /// Runs `body` in one transaction. One PostgreSQL broke to end a deadlock, or could not serialize (SQLSTATE 40P01,
    /// 40001), was rolled back whole and runs again, at most `transactionAttempts` times in all: `body` must do
    /// nothing but run its statements and build its answer, as every caller's does.
    public func transaction<R: Sendable>(
        _ body: (any SQLStatementRunner) async throws -> (result: R, commit: Bool)
    ) async throws -> R {
        var attempt = 1
        while true {
            do { return try await transactionOnce(body) } catch let failure as PostgresFailure
                where failure.isTransient && attempt < Self.transactionAttempts
            {
                logger.info("a transaction the database broke runs again", metadata: ["reason": "\(failure)"])
                attempt += 1
            }
        }
    }

    /// How many times a transaction PostgreSQL broke (``PostgresFailure/isTransient``) is run in all.
    static let transactionAttempts = 3

    private func transactionOnce<R: Sendable>(
        _ body: (any SQLStatementRunner) async throws -> (result: R, commit: Bool)
    ) async throws -> R {
        try await withConnection { runner in
            try await runner.run(SQLStatement("BEGIN"))
            do {
                let (result, commit) = try await body(runner)
                try await runner.run(SQLStatement(commit ? "COMMIT" : "ROLLBACK"))
                return result
            } catch {
                try? await runner.run(SQLStatement("ROLLBACK"))
                throw error
            }
        }
    }

    public func read<R: Sendable>(_ body: (any SQLStatementRunner) async throws -> R) async throws -> R {
        try await withConnection { runner in try await body(runner) }
    }

    /// Runs one statement outside any transaction (PostgreSQL refuses some inside one, such as `CREATE DATABASE`).
    public func execute(_ statement: SQLStatement) async throws {
        try await withConnection { runner in try await runner.run(statement) }
    }

    /// Whether the database answers `SELECT 1` within the connect timeout; false at once while it is known down
    /// (the probe is asking it).
    public func reachable() async -> Bool {
        reachability.isDown ? false : await answers()
    }

    private func answers() async -> Bool {
        do {
            try await withConnection(probing: true) { runner in _ = try await runner.rows(SQLStatement("SELECT 1")) }
            return true
        } catch {
            return false
        }
    }

    /// Runs `body` on a leased connection, failing fast while the database is known unreachable, and waiting at most
    /// the connect timeout for a connection. A connection that cannot be had or breaks marks the database
    /// unreachable; from then on a probe asks it every quarter second, and statements fail at once (`storageUnavailable`,
    /// 503) until it answers (through a new pool: ``renewPool()``). No restart is needed.
    private func withConnection<R: Sendable>(
        probing: Bool = false, _ body: (PostgresRunner) async throws -> R
    ) async throws -> R {
        if !probing, reachability.isDown {
            throw DatabaseUnreachable(reason: "the database is unreachable (a probe asks it every quarter second)")
        }
        do {
            // The lease is waited for by a task of its own, so this call can stop waiting at the deadline (a task
            // group would wait for a lease the pool does not give up on).
            let handoff = ConnectionHandoff()
            let pool = pools.withLock { $0.current }
            let client = pool.client
            let lease = Task {
                do {
                    try await client.withConnection { connection in await handoff.offer(connection) }
                } catch {
                    handoff.fail(error)
                }
            }
            let timeout = connectTimeout
            let timer = deadlines.add(
                after: timeout,
                expire: {
                    if handoff.abandon(DatabaseUnreachable(reason: "no connection to the database within \(timeout)")) {
                        lease.cancel()
                    }
                },
                cut: { error in if handoff.abandon(error) { lease.cancel() } })
            // Waited a while: a database that refuses a connection of our own now is down, not busy.
            let suspicion = deadlines.add(after: min(Self.suspicion, timeout)) {
                [connectCheck, connected, loginRefusals, logger] in
                connectCheck.ask { refused in
                    guard let refused else { return }
                    // A login refused while the pool's connections serve: they go on serving (the operator is told).
                    if refused.login, connected.withLock({ $0 }) {
                        if case .log(let unlogged) = loginRefusals.admit("login") {
                            logger.error(
                                "the database refuses new connections; the ones kept still serve",
                                metadata: ["reason": "\(refused.reason)", "unloggedSinceLast": "\(unlogged)"])
                        }
                        return
                    }
                    let reason = "the database refused a connection: \(refused.reason)"
                    if handoff.abandon(DatabaseUnreachable(reason: reason)) { lease.cancel() }
                }
            }
            let connection: PostgresConnection
            do { connection = try await handoff.take() } catch {
                deadlines.remove(timer)
                deadlines.remove(suspicion)
                throw error
            }
            deadlines.remove(timer)
            deadlines.remove(suspicion)
            connected.withLock { $0 = true }
            pool.leases.withLock { $0 += 1 }
            defer {
                pool.leases.withLock { $0 -= 1 }
                handoff.release()
            }
            return try await body(runner(on: connection, of: pool, probing: probing))
        } catch let error where Self.isConnectionFailure(error) {
            if !probing { startProbing() }
            throw error
        }
    }

    /// How long a statement's answer may take before the database is checked (``answersLag()``): 2 s, or a quarter of
    /// a shorter statement timeout.
    static func answerLag(_ statementTimeout: Duration) -> Duration { min(.seconds(2), statementTimeout / 4) }
    /// How long that check waits for the database's answer.
    static let answerCheckTimeout = Duration.seconds(3)

    /// A statement's answer lags (``answerLag(_:)``): a connection of the server's own asks `SELECT 1`. A database
    /// that answers it is busy or holds a lock, and the statement waits on, to its deadline. One that does not answer
    /// within ``answerCheckTimeout`` (frozen, or behind a network partition: connections are taken and nothing comes
    /// back) is taken for unreachable at once: statements fail fast from then on, and those waiting (for an answer or a
    /// connection) end now, not at their deadlines (30 + 3 s by default; an operator's trial saw every request held
    /// that long, and a balancer keep sending them to this instance).
    private func answersLag() {
        guard !reachability.isDown, !pools.withLock({ $0.closed }) else { return }
        Task { [weak self, connectCheck, deadlines] in
            let started = ContinuousClock.now
            let verdict = await connectCheck.answers(within: Self.answerCheckTimeout, deadlines: deadlines)
            guard let self else { return }
            // A statement answered meanwhile: the database answers, whatever kept the check's own connection.
            let down = verdict == false && !deadlines.answered(since: started)
            answerChecks.withLock { $0.append(down ? false : verdict) }
            guard down, !reachability.isDown, !pools.withLock({ $0.closed }) else {
                deadlines.rearmLags()
                return
            }
            let reason =
                "the database stopped answering: a statement waited \(Self.answerLag(statementTimeout)), and a connection "
                + "of this server's own got no answer within \(Self.answerCheckTimeout)"
            logger.warning("\(reason)")
            startProbing()
            deadlines.cut(with: DatabaseUnreachable(reason: reason))
        }
    }

    /// The verdicts of the checks ``answersLag()`` ran, in order (true: answered, false: taken for down, nil: could not
    /// tell); the last 16.
    var checks: [Bool?] { answerChecks.withLock { Array($0.suffix(16)) } }
    private let answerChecks = Locked<[Bool?]>([])

    /// Marks the database unreachable and, unless one runs, starts the probe that marks it reachable again.
    private func startProbing() {
        guard reachability.markDown() else { return }
        // Never connected yet: the server is starting, and its start says why it cannot.
        if connected.withLock({ $0 }) {
            logger.warning("the database is unreachable: statements fail at once until it answers again")
        }
        pools.withLock { pools in
            guard !pools.closed else { return }
            pools.probe = Task { [self] in
                var renewed = false
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(250))
                    // A connection of the probe's own, then (once) a new pool: the old one's next attempt may be a
                    // long backoff away.
                    guard !Task.isCancelled, await connectCheck.connects() else { continue }
                    if !renewed {
                        guard renewPool() else { return }
                        renewed = true
                    }
                    guard await answers() else { continue }
                    reachability.markUp()
                    logger.notice("the database answers again")
                    return
                }
            }
        }
    }

    /// Whether an error means the database could not be reached (rather than refusing a statement): no connection in
    /// time, a connection that broke, or PostgreSQL shutting down or starting (SQLSTATE classes 08 and 57).
    static func isConnectionFailure(_ error: any Error) -> Bool {
        if error is DatabaseUnreachable || error is IOError || error is ChannelError || error is NIOSSLError
            || error is NIOSSLExtraError
        {
            return true
        }
        // 57014 is a statement cancelled (an operator's pg_cancel_backend, the server's own statement_timeout), not the
        // database going away.
        if let failure = error as? PostgresFailure {
            return ["08", "57"].contains(failure.state.prefix(2)) && failure.state != "57014"
        }
        guard let error = error as? PSQLError else { return false }
        if let state = error.serverInfo?[.sqlState] {
            return ["08", "57"].contains(state.prefix(2)) && state != "57014"
        }
        return error.code != .server && error.code != .queryCancelled && error.code != .tooManyParameters
    }

    /// Stops the pools first, then waits for the pinger and the probe, then stops the deadlines' sweeper. Stopping a
    /// pool closes its connections, so a ping or a statement waiting on a database that does not answer ends then,
    /// not at its deadline (a server stopped while the database was unreachable waited 25 s for one ping to time
    /// out); the sweeper stays until the end for anything still waiting. (The sweeper stopped first, such a wait
    /// never ended, and neither did `close()`.)
    public func close() async throws {
        pinger.cancel()
        let (probe, all) = pools.withLock { pools in
            pools.closed = true
            return (pools.probe, pools.retired + [pools.current])
        }
        probe?.cancel()
        for pool in all { await pool.stop() }
        await pinger.value
        await probe?.value
        deadlines.stop()
    }
}
