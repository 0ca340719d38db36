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
    /// How long a statement waits for a connection (`connect_timeout` in the URL, seconds; 2 by default).
    let connectTimeout: Duration

    /// Connects to `url` (`postgres://user:password@host:port/database?sslmode=disable|prefer|require`; TLS is off by
    /// default for loopback hosts and preferred otherwise).
    public init(url: String, maximumConnections: Int = 4, logger: Logger = Logger(label: "iapkit.postgres")) throws {
        client = PostgresClient(
            configuration: try Self.configuration(url: url, maximumConnections: maximumConnections),
            backgroundLogger: logger)
        self.logger = logger
        connectTimeout = try Self.connectTimeout(url: url)
        let client = self.client
        runner = Task { await client.run() }
    }

    /// The URL's `connect_timeout` (whole seconds, 1 to 600; 2 when absent).
    static func connectTimeout(url text: String) throws -> Duration {
        guard let value = URLComponents(string: text)?.queryItems?.first(where: { $0.name == "connect_timeout" })?.value
        else { return .seconds(2) }
        guard let seconds = Int(value), (1...600).contains(seconds) else {
            throw StorageError(code: "badDatabaseURL", reason: "connect_timeout '\(value)' is not 1 to 600 seconds")
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
            throw StorageError(code: "badDatabaseURL", reason: "pool_size '\(pool ?? "")' is not a number of connections")
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: url.port ?? 5432, username: url.user ?? "postgres", password: url.password,
            database: database.isEmpty ? nil : database, tls: tls)
        configuration.options.maximumConnections = pool.flatMap { Int($0) } ?? maximumConnections
        configuration.options.connectTimeout = try connectTimeout(url: text)
        // Every statement is an index lookup written for its plan: plan each prepared one once, never again per
        // value (planning the customer's rows, a union of four lookups, took 2 ms a time).
        configuration.options.additionalStartupParameters = [("plan_cache_mode", "force_generic_plan")]
        return configuration
    }

    public func transaction<R: Sendable>(
        _ body: (any SQLStatementRunner) async throws -> (result: R, commit: Bool)
    ) async throws -> R {
        try await withConnection { connection in
            let runner = PostgresRunner(connection: connection, logger: logger, prepared: prepared)
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
            try await body(PostgresRunner(connection: connection, logger: logger, prepared: prepared))
        }
    }

    /// Runs one statement outside any transaction (PostgreSQL refuses some inside one, such as `CREATE DATABASE`).
    public func execute(_ statement: SQLStatement) async throws {
        try await withConnection { connection in
            try await PostgresRunner(connection: connection, logger: logger, prepared: prepared).run(statement)
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
                _ = try await PostgresRunner(connection: connection, logger: logger, prepared: prepared)
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
            return try await withoutActuallyEscaping(body) { body in
                let work = UncheckedSendable(body)
                let client = self.client
                let leased = Locked(false)
                return try await withThrowingTaskGroup(of: R?.self) { group in
                    group.addTask {
                        try await client.withConnection { connection in
                            leased.withLock { $0 = true }
                            return try await work.value(connection)
                        }
                    }
                    let timeout = connectTimeout
                    group.addTask {
                        try await Task.sleep(for: timeout)
                        if !leased.withLock({ $0 }) {
                            throw DatabaseUnreachable(reason: "no connection to the database within \(timeout)")
                        }
                        return nil
                    }
                    while let finished = try await group.next() {
                        if let result = finished {
                            group.cancelAll()
                            return result
                        }
                    }
                    throw CancellationError()
                }
            }
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

/// Which queries each connection has prepared. PostgreSQL parses and plans an unnamed statement every time it runs,
/// which was half of its time under the server benchmark; a statement prepared once per connection (`PREPARE`) and run
/// as `EXECUTE name(...)` is planned once (connections ask for generic plans), then runs from its cached plan.
///
/// A plan is only as good as what PostgreSQL knew of the tables when it was made: one made while they were nearly
/// empty may filter a whole index where it should look a row up. So each statement is prepared again on its 64th,
/// 1,024th and 16,384th use on a connection, then every 262,144 uses or 10 minutes, whichever comes first.
///
/// Bounded: at most 512 distinct texts get names, and a connection's set goes when it closes. The set is exact (a
/// statement is remembered once PostgreSQL prepared it), so neither `PREPARE` nor `DEALLOCATE` can fail inside a
/// write's transaction for a name it does or does not know.
final class PreparedStatements: Sendable {
    enum Lookup: Equatable {
        /// Run the text as it is.
        case unprepared
        /// Run `EXECUTE name` with the first `parameters` values.
        case prepared(String, parameters: Int)
        /// Prepare the text under this name on this connection first (`DEALLOCATE` it first when `again`).
        case prepare(String, parameters: Int, again: Bool)
    }

    private struct Use {
        var count = 0
        /// When it was last prepared on the connection; nil while it is not.
        var preparedAt: ContinuousClock.Instant?
    }
    private struct Named {
        var name: String
        /// The highest `$n` the text names: PREPARE counts those, and values past it are left out of `EXECUTE`.
        var parameters: Int
    }
    private struct State {
        var names: [String: Named] = [:]
        var refused: Set<String> = []
        var preparedOn: [Int: [String: Use]] = [:]
    }
    private let state = Locked(State())
    private let clock = ContinuousClock()
    static let maximumTexts = 512

    func lookup(_ text: String, connection: Int) -> Lookup {
        let now = clock.now
        return state.withLock { state in
            let named: Named
            if let known = state.names[text] {
                named = known
            } else {
                guard !state.refused.contains(text) else { return .unprepared }
                guard Self.isQuery(text), state.names.count < Self.maximumTexts else {
                    if state.refused.count < Self.maximumTexts { state.refused.insert(text) }
                    return .unprepared
                }
                named = Named(name: "iap_\(state.names.count + 1)", parameters: Self.parameterCount(text))
                state.names[text] = named
            }
            let name = named.name
            var use = state.preparedOn[connection]?[name] ?? Use()
            use.count += 1
            state.preparedOn[connection, default: [:]][name] = use
            guard let preparedAt = use.preparedAt else {
                return .prepare(name, parameters: named.parameters, again: false)
            }
            let replan =
                [64, 1_024, 16_384].contains(use.count) || use.count % 262_144 == 0
                || now - preparedAt > .seconds(600)
            return replan
                ? .prepare(name, parameters: named.parameters, again: true)
                : .prepared(name, parameters: named.parameters)
        }
    }

    /// Notes that `name` is prepared on `connection`; the first time a connection prepares anything, its set is set
    /// to go when it closes.
    func remember(_ name: String, on connection: PostgresConnection) {
        let now = clock.now
        let first = state.withLock { state in
            let first = state.preparedOn[connection.id]?.values.allSatisfy { $0.preparedAt == nil } ?? true
            state.preparedOn[connection.id, default: [:]][name, default: Use()].preparedAt = now
            return first
        }
        if first {
            let id = connection.id
            connection.closeFuture.whenComplete { [self] _ in state.withLock { $0.preparedOn[id] = nil } }
        }
    }

    func forget(_ name: String, connection: Int) {
        state.withLock { $0.preparedOn[connection]?[name]?.preparedAt = nil }
    }

    func refuse(_ text: String) {
        state.withLock { state in
            state.names[text] = nil
            state.refused.insert(text)
        }
    }

    /// `EXECUTE name(...)` with the values as literals (PostgreSQL does not pass a statement's parameters on to an
    /// `EXECUTE`): integers in digits, text in an escape string (`E'...'`, quotes and backslashes doubled, so no
    /// setting changes how it reads). Nil when a value cannot be written as a literal (text holding NUL, which
    /// PostgreSQL's text never holds anyway: the statement then runs as it is and fails there).
    static func execute(_ name: String, _ values: ArraySlice<SQLValue>) -> String? {
        var bytes: [UInt8] = Array("EXECUTE \(name)".utf8)
        guard !values.isEmpty else { return String(decoding: bytes, as: UTF8.self) }
        bytes.reserveCapacity(
            values.reduce(bytes.count + 2) { total, value in
                if case .text(let text) = value { return total + text.utf8.count + 8 }
                return total + 22
            })
        bytes.append(UInt8(ascii: "("))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes += [UInt8(ascii: ","), UInt8(ascii: " ")] }
            switch value {
            case .null: bytes += Array("NULL".utf8)
            case .integer(let number): bytes += Array(String(number).utf8)
            case .text(let text):
                bytes += [UInt8(ascii: "E"), UInt8(ascii: "'")]
                for byte in text.utf8 {
                    switch byte {
                    case 0: return nil
                    case UInt8(ascii: "'"), UInt8(ascii: "\\"): bytes += [byte, byte]
                    default: bytes.append(byte)
                    }
                }
                bytes.append(UInt8(ascii: "'"))
            }
        }
        bytes.append(UInt8(ascii: ")"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The highest `$n` the text names.
    static func parameterCount(_ text: String) -> Int {
        var highest = 0
        var bytes = text.utf8[...]
        while let dollar = bytes.firstIndex(of: UInt8(ascii: "$")) {
            bytes = bytes[bytes.index(after: dollar)...]
            let digits = bytes.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            if let number = Int(String(decoding: digits, as: UTF8.self)) { highest = max(highest, number) }
            bytes = bytes[digits.endIndex...]
        }
        return highest
    }

    /// Whether PostgreSQL can prepare the text: one SELECT, INSERT, UPDATE, DELETE or WITH query.
    static func isQuery(_ text: String) -> Bool {
        let start = text.drop { $0.isWhitespace }.prefix(6).uppercased()
        return ["SELECT", "INSERT", "UPDATE", "DELETE"].contains(start) || start.hasPrefix("WITH")
    }
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

/// A value handed to a child task that is the only one to use it.
private struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
