/// The two SQL engines the server stores in.
public enum SQLEngine: String, Sendable {
    case sqlite
    case postgres
}

/// A value bound to a statement or read from a row: the storage uses text, 64-bit integers and NULL only.
public enum SQLValue: Hashable, Sendable {
    case text(String)
    case integer(Int64)
    case null

    init(_ text: String?) { self = text.map(SQLValue.text) ?? .null }
}

/// One SQL statement with its values. The text names values `$1`, `$2`, ... in the order of `binds`; PostgreSQL and
/// SQLite both read that form, so each statement is written once for both engines.
public struct SQLStatement: Hashable, Sendable {
    public var text: String
    public var binds: [SQLValue]

    public init(_ text: String, _ binds: [SQLValue] = []) {
        self.text = text
        self.binds = binds
    }
}

/// One row of a result, its values by column name.
public struct SQLRow: Sendable {
    /// The column names, shared by every row of a result.
    let columns: [String]
    let values: [SQLValue]

    init(columns: [String], values: [SQLValue]) {
        self.columns = columns
        self.values = values
    }

    private func value(_ column: String) throws(SQLRowError) -> SQLValue {
        guard let index = columns.firstIndex(of: column) else { throw SQLRowError(column: column, problem: "missing") }
        return values[index]
    }

    func text(_ column: String) throws(SQLRowError) -> String {
        guard case .text(let text) = try value(column) else { throw SQLRowError(column: column, problem: "not text") }
        return text
    }

    func optionalText(_ column: String) throws(SQLRowError) -> String? {
        switch try value(column) {
        case .text(let text): return text
        case .null: return nil
        case .integer: throw SQLRowError(column: column, problem: "not text")
        }
    }

    func optionalInteger(_ column: String) throws(SQLRowError) -> Int64? {
        switch try value(column) {
        case .integer(let value): return value
        case .null: return nil
        case .text: throw SQLRowError(column: column, problem: "not an integer")
        }
    }

    func integer(_ column: String) throws(SQLRowError) -> Int64 {
        guard case .integer(let value) = try value(column) else {
            throw SQLRowError(column: column, problem: "not an integer")
        }
        return value
    }
}

/// A row that does not have the shape a statement promised: a corrupt or foreign database.
struct SQLRowError: Error, CustomStringConvertible {
    let column: String
    let problem: String
    var description: String { "column \(column): \(problem)" }
}

/// Runs statements on one connection; inside ``SQLDatabase/transaction(_:)`` every statement belongs to that
/// transaction.
public protocol SQLStatementRunner {
    /// Runs `statement` and returns every row it answered.
    func rows(_ statement: SQLStatement) async throws -> [SQLRow]
}

extension SQLStatementRunner {
    /// Runs `statement`, ignoring any rows.
    func run(_ statement: SQLStatement) async throws { _ = try await rows(statement) }
}

/// One database for ``SQLStorage``: transactions on a writer, reads of committed state.
public protocol SQLDatabase: Sendable {
    var engine: SQLEngine { get }
    /// Runs `body` in one transaction: committed when it returns `commit: true`, rolled back when it returns false or
    /// throws. Nobody else writes meanwhile, and the call returns only once what it kept is committed (SQLite may
    /// commit the writes that queued together at once, each still all or nothing). `body` may run more than once (a
    /// transaction the database rolled back for a deadlock runs again): it must do nothing but run its statements and
    /// build its answer.
    func transaction<R: Sendable>(_ body: (any SQLStatementRunner) async throws -> (result: R, commit: Bool))
        async throws -> R
    /// Runs `body` on a connection that sees committed state.
    func read<R: Sendable>(_ body: (any SQLStatementRunner) async throws -> R) async throws -> R
    /// Closes every connection; calls in flight finish first.
    func close() async throws
    /// Whether the database answers a statement now (what readiness reports).
    func reachable() async -> Bool
}

extension SQLDatabase {
    public func reachable() async -> Bool {
        (try? await read { try await $0.rows(SQLStatement("SELECT 1")) }) != nil
    }
}

/// Whether the statement deadline of an engine that has one (``PostgresDatabase``'s `statement_timeout`) is suspended
/// for the task: migrations set it, since a backfill of a big table may take minutes.
enum StatementDeadline {
    @TaskLocal static var suspended = false
}
