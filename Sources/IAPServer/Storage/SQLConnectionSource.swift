public import SQLKit

/// The two SQL engines the server stores in.
public enum SQLEngine: String, Sendable {
    case sqlite
    case postgres
}

/// Connections to one database for ``SQLStorage``: a writer held for the whole of a transaction, and readers.
public protocol SQLConnectionSource: Sendable {
    var engine: SQLEngine { get }
    /// Runs `body` with a connection nobody else uses until it returns, so `BEGIN` ... `COMMIT` inside it is one
    /// transaction.
    func withWriter<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R
    /// Runs `body` with a connection for reads of committed state.
    func withReader<R: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> R) async throws -> R
    /// Closes every connection.
    func shutdown() async throws
}
