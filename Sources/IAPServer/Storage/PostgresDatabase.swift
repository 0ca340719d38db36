import Foundation
import IAPCore
public import Logging
import NIOSSL
import PostgresNIO

/// A PostgreSQL database through postgres-nio's connection pool: several server instances can share it.
public final class PostgresDatabase: SQLDatabase {
    public var engine: SQLEngine { .postgres }
    private let client: PostgresClient
    private let runner: Task<Void, Never>
    private let logger: Logger
    private let prepared = PreparedStatements()
    private let reachability = Reachability()
    /// How long a statement waits for a connection (`connect_timeout` in the URL, seconds; 10 by default): waiting
    /// behind other statements for a pooled connection counts.
    let connectTimeout: Duration
    /// How long a statement may run (`statement_timeout` in the URL, seconds; 30 by default).
    let statementTimeout: Duration

    /// Connects to `url` (`postgres://user:password@host:port/database?sslmode=disable|prefer|require`; TLS is off by
    /// default for loopback hosts and preferred otherwise).
    public init(url: String, maximumConnections: Int = 4, logger: Logger = Logger(label: "iapkit.postgres")) throws {
        client = PostgresClient(
            configuration: try Self.configuration(url: url, maximumConnections: maximumConnections),
            backgroundLogger: logger)
        self.logger = logger
        connectTimeout = try Self.seconds("connect_timeout", in: url, default: 10)
        statementTimeout = try Self.seconds("statement_timeout", in: url, default: 30)
        let client = self.client
        runner = Task { await client.run() }
    }

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
        guard let url = URLComponents(string: text), ["postgres", "postgresql"].contains(url.scheme ?? ""),
            let host = url.host, !host.isEmpty
        else {
            throw StorageError(
                code: "badDatabaseURL", reason: "'\(text)' is not a postgres://user:password@host:port/database URL")
        }
        let mode =
            url.queryItems?.first { $0.name == "sslmode" }?.value
            ?? (["localhost", "127.0.0.1", "::1"].contains(host) ? "disable" : "prefer")
        let tls: PostgresClient.Configuration.TLS
        switch mode {
        case "disable": tls = .disable
        case "prefer": tls = .prefer(.makeClientConfiguration())
        case "require": tls = .require(.makeClientConfiguration())
        default:
            throw StorageError(code: "badDatabaseURL", reason: "sslmode '\(mode)' is not disable, prefer or require")
        }
        let database = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : url.path
        let pool = url.queryItems?.first { $0.name == "pool_size" }?.value
        guard pool.map({ Int($0).map { (1...1000).contains($0) } ?? false }) ?? true else {
            throw StorageError(
                code: "badDatabaseURL", reason: "pool_size '\(pool ?? "")' is not a number of connections")
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: url.port ?? 5432, username: url.user ?? "postgres", password: url.password,
            database: database.isEmpty ? nil : database, tls: tls)
        configuration.options.maximumConnections = pool.flatMap { Int($0) } ?? maximumConnections
        configuration.options.connectTimeout = try seconds("connect_timeout", in: text, default: 10)
        // Every statement is an index lookup written for its plan: plan each prepared one once, never again per
        // value (planning the customer's rows, a union of four lookups, took 2 ms a time).
        configuration.options.additionalStartupParameters = [("plan_cache_mode", "force_generic_plan")]
        return configuration
    }

    public func transaction<R: Sendable>(
        _ body: (any SQLStatementRunner) async throws -> (result: R, commit: Bool)
    ) async throws -> R {
        try await withConnection { connection in
            let runner = PostgresRunner(
                connection: connection, logger: logger, prepared: prepared, deadline: statementTimeout)
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
        try await withConnection { connection in
            try await body(
                PostgresRunner(connection: connection, logger: logger, prepared: prepared, deadline: statementTimeout))
        }
    }

    /// Runs one statement outside any transaction (PostgreSQL refuses some inside one, such as `CREATE DATABASE`).
    public func execute(_ statement: SQLStatement) async throws {
        try await withConnection { connection in
            try await PostgresRunner(
                connection: connection, logger: logger, prepared: prepared, deadline: statementTimeout
            ).run(statement)
        }
    }

    /// Whether the database answers `SELECT 1` within the connect timeout; false at once while it is known down
    /// (the probe is asking it).
    public func reachable() async -> Bool {
        reachability.isDown ? false : await answers()
    }

    private func answers() async -> Bool {
        do {
            try await withConnection(probing: true) { connection in
                _ = try await PostgresRunner(
                    connection: connection, logger: logger, prepared: prepared, deadline: statementTimeout
                )
                .rows(SQLStatement("SELECT 1"))
            }
            return true
        } catch {
            return false
        }
    }

    /// Runs `body` on a leased connection, failing fast while the database is known unreachable, and waiting at most
    /// the connect timeout for a connection. A connection that cannot be had or breaks marks the database
    /// unreachable; from then on a probe asks it every quarter second, and statements fail at once (`storageUnavailable`,
    /// 503) until it answers. The pool reconnects by itself: no restart is needed.
    private func withConnection<R: Sendable>(
        probing: Bool = false, _ body: (PostgresConnection) async throws -> R
    ) async throws -> R {
        if !probing, reachability.isDown { throw DatabaseUnreachable(reason: "the database is not answering") }
        do {
            // The lease is waited for by a task of its own, so this call can stop waiting at the deadline (a task
            // group would wait for a lease the pool does not give up on).
            let handoff = ConnectionHandoff()
            let client = self.client
            let lease = Task {
                do {
                    try await client.withConnection { connection in await handoff.offer(connection) }
                } catch {
                    handoff.fail(error)
                }
            }
            let timeout = connectTimeout
            let timer = Task {
                try await Task.sleep(for: timeout)
                if handoff.abandon(DatabaseUnreachable(reason: "no connection to the database within \(timeout)")) {
                    lease.cancel()
                }
            }
            let connection: PostgresConnection
            do { connection = try await handoff.take() } catch {
                timer.cancel()
                throw error
            }
            timer.cancel()
            defer { handoff.release() }
            return try await body(connection)
        } catch let error where Self.isConnectionFailure(error) {
            if !probing { startProbing() }
            throw error
        }
    }

    /// Marks the database unreachable and, unless one runs, starts the probe that marks it reachable again.
    private func startProbing() {
        guard reachability.markDown() else { return }
        logger.warning("the database is unreachable: statements fail at once until it answers again")
        Task { [self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                if await answers() {
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
        if error is DatabaseUnreachable { return true }
        if let failure = error as? PostgresFailure { return ["08", "57"].contains(failure.state.prefix(2)) }
        guard let error = error as? PSQLError else { return false }
        if let state = error.serverInfo?[.sqlState] { return ["08", "57"].contains(state.prefix(2)) }
        return error.code != .server && error.code != .queryCancelled && error.code != .tooManyParameters
    }

    public func close() async throws {
        runner.cancel()
        await runner.value
    }
}

/// Runs statements on one leased PostgreSQL connection, each query prepared on the connection the first time it runs
/// there (see ``PreparedStatements``).
private struct PostgresRunner: SQLStatementRunner {
    let connection: PostgresConnection
    let logger: Logger
    let prepared: PreparedStatements
    /// How long a statement may take before its connection is closed (which fails it): a database that stops
    /// answering mid-statement never holds a request longer. Migrations are not bounded (``StatementDeadline``).
    let deadline: Duration

    func rows(_ statement: SQLStatement) async throws -> [SQLRow] {
        do {
            guard let (name, parameters) = try await prepare(statement),
                let execute = PreparedStatements.execute(name, statement.binds.prefix(parameters))
            else { return try await query(statement) }
            do {
                return try await query(SQLStatement(execute))
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "26000" {
                prepared.forget(name, connection: connection.id)  // not there after all: prepared again next time
                throw error
            }
        } catch let error as PSQLError {
            // PSQLError describes itself generically; the server's own words (never the statement's values) say what
            // went wrong.
            throw PostgresFailure(
                state: error.serverInfo?[.sqlState] ?? "", message: error.serverInfo?[.message] ?? "\(error.code)")
        }
    }

    /// The name the statement's text is prepared under on this connection and how many parameters it names,
    /// preparing it now when it is new here; nil for a statement that is not prepared (not a query, one PostgreSQL
    /// refused to prepare, or past the cache's bound).
    private func prepare(_ statement: SQLStatement) async throws -> (name: String, parameters: Int)? {
        let text = statement.text
        switch prepared.lookup(text, connection: connection.id) {
        case .unprepared: return nil
        case .prepared(let name, let parameters): return (name, parameters)
        case .prepare(let name, let parameters, let again):
            // Forgotten first: whatever fails below, the next use prepares it afresh.
            prepared.forget(name, connection: connection.id)
            if again { _ = try await query(SQLStatement("DEALLOCATE \(name)")) }
            do {
                _ = try await query(SQLStatement("PREPARE \(name) AS \(text)"))
            } catch let error as PSQLError {
                switch error.serverInfo?[.sqlState] ?? "" {
                case "42P05":  // prepared already: known again
                    prepared.remember(name, on: connection)
                case let state where state.hasPrefix("42"):
                    // A statement PostgreSQL cannot prepare on its own (the type of a parameter it cannot tell) runs
                    // as it is from now on. Every statement of the storage prepares (the conformance suite runs them
                    // all on PostgreSQL).
                    prepared.refuse(text)
                default: break
                }
                throw error
            }
            prepared.remember(name, on: connection)
            return (name, parameters)
        }
    }

    private func query(_ statement: SQLStatement) async throws -> [SQLRow] {
        guard !StatementDeadline.suspended else { return try await unboundedQuery(statement) }
        // The statement runs in a task of its own and this call stops waiting at the deadline: a connection the
        // database dropped mid-statement can leave a query unanswered for good. Its connection is closed then.
        let connection = self.connection
        let deadline = self.deadline
        let runner = self
        return try await withCheckedThrowingContinuation { continuation in
            let answer = OnceContinuation(continuation)
            let watchdog = Task {
                try await Task.sleep(for: deadline)
                if answer.resume(with: .failure(DatabaseUnreachable(reason: "no answer to a statement in \(deadline)")))
                {
                    connection.close().whenComplete { _ in }
                }
            }
            Task {
                let result = await Result(catching: { try await runner.unboundedQuery(statement) })
                watchdog.cancel()
                _ = answer.resume(with: result)
            }
        }
    }

    private func unboundedQuery(_ statement: SQLStatement) async throws -> [SQLRow] {
        var binds = PostgresBindings(capacity: statement.binds.count)
        for value in statement.binds {
            switch value {
            case .null: binds.appendNull()
            case .integer(let number): binds.append(number)
            case .text(let text): binds.append(text)
            }
        }
        var rows: [SQLRow] = []
        var columns: [String]?
        for try await row in try await connection.query(
            PostgresQuery(unsafeSQL: statement.text, binds: binds), logger: logger)
        {
            var values: [SQLValue] = []
            for cell in row {
                if cell.bytes == nil {
                    values.append(.null)
                } else if [.int8, .int4, .int2].contains(cell.dataType) {
                    values.append(.integer(try cell.decode(Int64.self)))
                } else {
                    values.append(.text(try cell.decode(String.self)))
                }
            }
            let names = columns ?? row.map(\.columnName)
            columns = names
            rows.append(SQLRow(columns: names, values: values))
        }
        return rows
    }
}

/// What PostgreSQL said when it refused a statement: its SQLSTATE and message.
struct PostgresFailure: Error, CustomStringConvertible {
    let state: String
    let message: String
    var description: String { "PostgreSQL \(state): \(message)" }
}

/// Whether this instance last found its database reachable.
private final class Reachability: Sendable {
    private let down = Locked(false)

    var isDown: Bool { down.withLock { $0 } }

    /// Marks it down; true when it was up (the caller starts the probe).
    func markDown() -> Bool {
        down.withLock { down in
            defer { down = true }
            return !down
        }
    }

    func markUp() { down.withLock { $0 = false } }
}

/// The database could not be reached: no connection within the connect timeout, or known down.
struct DatabaseUnreachable: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}

/// A connection leased by one task and used by another until it releases it: the user can stop waiting for it
/// (``abandon(_:)``), and a connection that comes after that goes back to the pool at once.
private final class ConnectionHandoff: Sendable {
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

    /// Stops waiting with `error`; true when the user was still waiting (the lease should be cancelled).
    func abandon(_ error: any Error) -> Bool {
        state.withLock { state in
            guard let waiter = state.waiter else { return false }
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

/// A continuation resumed by whichever of two tasks comes first.
private final class OnceContinuation<Value: Sendable>: Sendable {
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

extension Result where Failure == any Error {
    /// The outcome of async work.
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
