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
    private let deadlines = Deadlines()
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

    /// A runner for statements on a leased connection.
    private func runner(on connection: PostgresConnection) -> PostgresRunner {
        PostgresRunner(
            connection: connection, logger: logger, prepared: prepared, deadline: statementTimeout,
            deadlines: deadlines)
    }

    public func transaction<R: Sendable>(
        _ body: (any SQLStatementRunner) async throws -> (result: R, commit: Bool)
    ) async throws -> R {
        try await withConnection { connection in
            let runner = runner(on: connection)
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
                runner(on: connection))
        }
    }

    /// Runs one statement outside any transaction (PostgreSQL refuses some inside one, such as `CREATE DATABASE`).
    public func execute(_ statement: SQLStatement) async throws {
        try await withConnection { connection in
            try await runner(on: connection).run(statement)
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
                _ = try await runner(on: connection)
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
            let timer = deadlines.add(after: timeout) {
                if handoff.abandon(DatabaseUnreachable(reason: "no connection to the database within \(timeout)")) {
                    lease.cancel()
                }
            }
            let connection: PostgresConnection
            do { connection = try await handoff.take() } catch {
                deadlines.remove(timer)
                throw error
            }
            deadlines.remove(timer)
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
        deadlines.stop()
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
    let deadlines: Deadlines

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

    /// Runs a statement and collects its rows on the connection's event loop. Unless migrations run, the wait stops
    /// at the deadline: a connection the database dropped mid-statement can leave a query unanswered for good, and
    /// its connection is closed then.
    private func query(_ statement: SQLStatement) async throws -> [SQLRow] {
        var binds = PostgresBindings(capacity: statement.binds.count)
        for value in statement.binds {
            switch value {
            case .null: binds.appendNull()
            case .integer(let number): binds.append(number)
            case .text(let text): binds.append(text)
            }
        }
        let answer = connection.query(PostgresQuery(unsafeSQL: statement.text, binds: binds), logger: logger)
            .flatMapThrowing { result in try Self.rows(result.rows) }
        guard !StatementDeadline.suspended else { return try await answer.get() }
        let connection = self.connection
        let deadline = self.deadline
        return try await deadlines.value(
            of: answer, within: deadline,
            expired: { DatabaseUnreachable(reason: "no answer to a statement in \(deadline)") },
            onExpiry: { connection.close().whenComplete { _ in } })
    }

    private static func rows(_ rows: [PostgresRow]) throws -> [SQLRow] {
        guard let first = rows.first else { return [] }
        let columns = first.map(\.columnName)
        return try rows.map { row in
            var values: [SQLValue] = []
            values.reserveCapacity(columns.count)
            for cell in row {
                if cell.bytes == nil {
                    values.append(.null)
                } else if [.int8, .int4, .int2].contains(cell.dataType) {
                    values.append(.integer(try cell.decode(Int64.self)))
                } else {
                    values.append(.text(try cell.decode(String.self)))
                }
            }
            return SQLRow(columns: columns, values: values)
        }
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
