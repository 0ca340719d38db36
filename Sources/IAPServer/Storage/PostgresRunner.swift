import IAPCore
import Logging
import NIOCore
import NIOSSL
import PostgresNIO

/// Runs statements on one leased PostgreSQL connection, each query prepared on the connection the first time it runs
/// there (see ``PreparedStatements``).
struct PostgresRunner: SQLStatementRunner {
    let connection: PostgresConnection
    let pool: PostgresDatabase.Pool
    let logger: Logger
    var prepared: PreparedStatements { pool.prepared }
    /// How long a statement may take before its connection is closed (which fails it): a database that stops
    /// answering mid-statement never holds a request longer. The statement timeout and its grace
    /// (``PostgresDatabase/answerGrace(_:)``). Migrations are not bounded (``StatementDeadline``).
    let deadline: Duration
    let deadlines: Deadlines
    /// Whether the database is known down, for statements that fail at once then (nil for the probe's own, which
    /// asks it while it is down).
    let reachability: Reachability?

    func rows(_ statement: SQLStatement) async throws -> [SQLRow] {
        do {
            let (key, lookup) = prepared.lookup(statement, connection: connection.id)
            switch lookup {
            case .unprepared:
                return try await query(statement)
            case .prepared(let query, let parameters):
                return try await execute(query, statement, parameters: parameters, key: key)
            case .prepare(let text, let parameters, let replacing):
                guard let key else { return try await query(statement) }
                // Forgotten first: whatever fails below, the next use prepares it afresh.
                prepared.forget(key, connection: connection.id)
                if let replacing { try await bounded(replacing.deallocate()) }
                let query: PreparedQuery
                do {
                    query = try await bounded(connection.prepare(query: text))
                } catch {
                    // A statement PostgreSQL cannot prepare on its own (the type of a parameter it cannot tell) runs
                    // as it is from now on. Every statement of the storage prepares (the conformance suite runs them
                    // all on PostgreSQL).
                    if let failure = Self.failure(error), failure.state.hasPrefix("42") {
                        prepared.refuse(statement.text)
                    }
                    throw error
                }
                prepared.remember(query, as: key, on: connection)
                return try await execute(query, statement, parameters: parameters, key: key)
            }
        } catch {
            // The driver's errors describe themselves generically; the server's own words (never the statement's
            // values) say what went wrong.
            throw Self.failure(error) ?? error
        }
    }

    /// Runs a prepared statement with the statement's values as binary parameters.
    private func execute(
        _ query: PreparedQuery, _ statement: SQLStatement, parameters: Int, key: PreparedStatements.Key?
    )
        async throws -> [SQLRow]
    {
        do {
            return try Self.rows(
                try await bounded(query.execute(PreparedStatements.binds(statement.binds.prefix(parameters)))))
        } catch {
            if let key, Self.failure(error)?.state == "26000" {
                prepared.forget(key, connection: connection.id)  // not there after all: prepared again next time
            }
            throw error
        }
    }

    /// The driver's error as PostgreSQL's SQLSTATE and message, nil for an error of another kind. A connection the
    /// driver saw close reads as SQLSTATE 08006 (connection failure).
    static func failure(_ error: any Error) -> PostgresFailure? {
        switch error {
        case let failure as PostgresFailure: return failure
        case let error as PSQLError:
            guard let info = error.serverInfo else { return nil }
            return PostgresFailure(state: info[.sqlState] ?? "", message: info[.message] ?? "\(error.code)")
        case PostgresError.server(let message):
            return PostgresFailure(state: message.fields[.sqlState] ?? "", message: message.fields[.message] ?? "")
        case PostgresError.connectionClosed:
            return PostgresFailure(state: "08006", message: "the connection closed")
        case PostgresError.protocol(let message):
            return PostgresFailure(state: "08P01", message: message)
        case is IOError, is ChannelError, is NIOSSLError, is NIOSSLExtraError:
            // What the older API passes on when the connection itself failed (a reset, a TLS teardown).
            return PostgresFailure(state: "08006", message: "the connection failed: \(error)")
        default: return nil
        }
    }

    /// Runs an unnamed statement (parsed and planned for this run only).
    private func query(_ statement: SQLStatement) async throws -> [SQLRow] {
        var binds = PostgresBindings(capacity: statement.binds.count)
        for value in statement.binds {
            switch value {
            case .null: binds.appendNull()
            case .integer(let number): binds.append(number)
            case .text(let text): binds.append(text)
            }
        }
        return try Self.rows(
            try await bounded(
                connection.query(PostgresQuery(unsafeSQL: statement.text, binds: binds), logger: logger).map(\.rows)))
    }

    /// Waits for `answer`, collected on the connection's event loop. It stops when the connection closes first (a
    /// connection the database dropped mid-statement, as PostgreSQL does when it stops, can leave a query unanswered
    /// for good) and, unless migrations run, at the deadline, when the connection is closed.
    private func bounded<Value: Sendable>(_ answer: EventLoopFuture<Value>) async throws -> Value {
        guard !StatementDeadline.suspended else { return try await answer.get() }
        let connection = self.connection
        // Known down (a statement of this request's, or of another, found it so): this one would wait its deadline
        // on a database that answers nothing. Its connection is closed, as it may be in a transaction.
        if let reachability, reachability.isDown {
            connection.close().whenComplete { _ in }
            throw DatabaseUnreachable(reason: "the database is unreachable (a probe asks it every quarter second)")
        }
        let deadline = self.deadline
        return try await deadlines.value(
            of: answer, within: deadline,
            expired: { DatabaseUnreachable(reason: "no answer to a statement in \(deadline)") },
            onExpiry: { connection.close().whenComplete { _ in } },
            on: (pool.number << 32 | connection.id, connection.closeFuture),
            closed: {
                PostgresFailure(state: "08006", message: "the connection closed before the statement was answered")
            })
    }

    /// The rows as values. Every result comes in the protocol's binary format (postgres-nio asks for it), which a
    /// prepared statement's row description does not say (it was described before a format was chosen), so the cells
    /// are read as binary by their type: the storage's columns are integers and text.
    private static func rows(_ rows: [PostgresRow]) throws -> [SQLRow] {
        guard let first = rows.first else { return [] }
        let columns = first.map(\.columnName)
        return try rows.map { row in
            var values: [SQLValue] = []
            values.reserveCapacity(columns.count)
            for cell in row {
                guard var bytes = cell.bytes else {
                    values.append(.null)
                    continue
                }
                let value: SQLValue? =
                    switch (cell.dataType, bytes.readableBytes) {
                    case (.int8, 8): bytes.readInteger(as: Int64.self).map { .integer($0) }
                    case (.int4, 4): bytes.readInteger(as: Int32.self).map { .integer(Int64($0)) }
                    case (.int2, 2): bytes.readInteger(as: Int16.self).map { .integer(Int64($0)) }
                    case (.text, _), (.varchar, _), (.name, _), (.bpchar, _):
                        bytes.readString(length: bytes.readableBytes).map { .text($0) }
                    case (.void, _): .null  // what a function called for its effect answers (a lock)
                    default: nil
                    }
                guard let value else {
                    throw PostgresFailure(
                        state: "XX000", message: "column \(cell.columnName) of type \(cell.dataType) cannot be read")
                }
                values.append(value)
            }
            return SQLRow(columns: columns, values: values)
        }
    }
}
