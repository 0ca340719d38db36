import Foundation
public import Logging
import NIOSSL
import PostgresNIO

/// A PostgreSQL database through postgres-nio's connection pool: several server instances can share it.
public final class PostgresDatabase: SQLDatabase {
    public var engine: SQLEngine { .postgres }
    private let client: PostgresClient
    private let runner: Task<Void, Never>
    private let logger: Logger

    /// Connects to `url` (`postgres://user:password@host:port/database?sslmode=disable|prefer|require`; TLS is off by
    /// default for loopback hosts and preferred otherwise).
    public init(url: String, maximumConnections: Int = 8, logger: Logger = Logger(label: "iapkit.postgres")) throws {
        client = PostgresClient(
            configuration: try Self.configuration(url: url, maximumConnections: maximumConnections),
            backgroundLogger: logger)
        self.logger = logger
        let client = self.client
        runner = Task { await client.run() }
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
        var configuration = PostgresClient.Configuration(
            host: host, port: url.port ?? 5432, username: url.user ?? "postgres", password: url.password,
            database: database.isEmpty ? nil : database, tls: tls)
        configuration.options.maximumConnections = maximumConnections
        return configuration
    }

    public func transaction<R: Sendable>(
        _ body: (any SQLStatementRunner) async throws -> (result: R, commit: Bool)
    ) async throws -> R {
        try await client.withConnection { connection in
            let runner = PostgresRunner(connection: connection, logger: logger)
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
        try await client.withConnection { connection in
            try await body(PostgresRunner(connection: connection, logger: logger))
        }
    }

    /// Runs one statement outside any transaction (PostgreSQL refuses some inside one, such as `CREATE DATABASE`).
    public func execute(_ statement: SQLStatement) async throws {
        try await client.withConnection { connection in
            try await PostgresRunner(connection: connection, logger: logger).run(statement)
        }
    }

    public func close() async throws {
        runner.cancel()
        await runner.value
    }
}

/// Runs statements on one leased PostgreSQL connection.
private struct PostgresRunner: SQLStatementRunner {
    let connection: PostgresConnection
    let logger: Logger

    func rows(_ statement: SQLStatement) async throws -> [SQLRow] {
        do { return try await query(statement) } catch let error as PSQLError {
            // PSQLError describes itself generically; the server's own words (never the statement's values) say what
            // went wrong.
            throw PostgresFailure(
                state: error.serverInfo?[.sqlState] ?? "", message: error.serverInfo?[.message] ?? "\(error.code)")
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
