import Foundation
public import Logging
public import SQLKit
import SQLiteKit
import Synchronization

/// An SQLite file (WAL journal, created on first use): one writer connection, taken for a whole transaction at a
/// time, and a few readers that see committed state while it writes.
///
/// `synchronous = NORMAL` with WAL keeps every committed transaction through a crash of the process (`kill -9`); only
/// a crash of the machine may lose the last ones.
public final class SQLiteConnectionSource: SQLConnectionSource {
    public var engine: SQLEngine { .sqlite }
    private let writer: SQLiteConnection
    private let readers: [SQLiteConnection]
    private let writerLock = AsyncLock()
    private let nextReader = Atomic<Int>(0)

    /// Opens (creating when missing) the database at `path`; `":memory:"` opens a private in-memory database with
    /// one connection.
    public init(path: String, readers readerCount: Int = 2, logger: Logger = Logger(label: "iapkit.sqlite"))
        async throws
    {
        let storage: SQLiteConnection.Storage = path == ":memory:" ? .memory : .file(path: path)
        writer = try await SQLiteConnection.open(storage: storage, logger: logger)
        try await Self.configure(writer, path: path)
        if path == ":memory:" {
            readers = []
        } else {
            var opened: [SQLiteConnection] = []
            for _ in 0..<max(readerCount, 0) {
                let reader = try await SQLiteConnection.open(storage: storage, logger: logger)
                try await Self.configure(reader, path: path)
                opened.append(reader)
            }
            readers = opened
        }
    }

    private static func configure(_ connection: SQLiteConnection, path: String) async throws {
        _ = try await connection.query("PRAGMA busy_timeout = 5000")
        if path != ":memory:" {
            _ = try await connection.query("PRAGMA journal_mode = WAL")
            _ = try await connection.query("PRAGMA synchronous = NORMAL")
        }
    }

    public func withWriter<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await writerLock.withLock { try await body(writer.sql()) }
    }

    public func withReader<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        guard !readers.isEmpty else { return try await withWriter(body) }
        let index = nextReader.add(1, ordering: .relaxed).oldValue % readers.count
        return try await body(readers[index].sql())
    }

    public func shutdown() async throws {
        for reader in readers { try await reader.close() }
        try await writerLock.withLock { try await writer.close() }
    }
}
