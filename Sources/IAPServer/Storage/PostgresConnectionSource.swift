import Foundation
public import Logging
import NIOSSL
import PostgresKit
import PostgresNIO
public import SQLKit

/// A PostgreSQL database through postgres-nio's connection pool: several server instances can share it.
public final class PostgresConnectionSource: SQLConnectionSource {
    public var engine: SQLEngine { .postgres }
    private let client: PostgresClient
    private let runner: Task<Void, Never>

    /// Connects to `url` (`postgres://user:password@host:port/database?sslmode=disable|prefer|require`; TLS is off by
    /// default for loopback hosts and preferred otherwise).
    public init(url: String, maximumConnections: Int = 8, logger: Logger = Logger(label: "iapkit.postgres")) throws {
        client = PostgresClient(
            configuration: try Self.configuration(url: url, maximumConnections: maximumConnections),
            backgroundLogger: logger)
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

    public func withWriter<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await client.withConnection { connection in try await body(connection.sql()) }
    }

    public func withReader<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await client.withConnection { connection in try await body(connection.sql()) }
    }

    public func shutdown() async throws {
        runner.cancel()
        await runner.value
    }
}
