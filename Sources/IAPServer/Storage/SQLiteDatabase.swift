import CSQLite3
import Synchronization

/// An SQLite file (WAL journal, created on first use) through the system's SQLite: one writer connection, held for a
/// whole transaction at a time, and reader connections that see committed state while it writes.
///
/// Statements run on the calling task, without a hop to another thread: a prepared statement (each connection keeps
/// its statements, by text) runs in microseconds, less than a hop costs. `synchronous = NORMAL` with WAL keeps every
/// committed transaction through a crash of the process (`kill -9`); only a crash of the machine may lose the last
/// ones.
public final class SQLiteDatabase: SQLDatabase {
    public var engine: SQLEngine { .sqlite }
    private let path: String
    private let writer: SQLiteConnection
    private let writerLock = AsyncLock()
    /// Writes that came while others waited for the writer share one transaction (each in a savepoint) and one
    /// commit: a commit appends every page it changed to the WAL, and writes in a row change the same index pages.
    /// A write is answered only once its group committed. Not for `:memory:`, whose reads share the writer.
    private let groupsWrites: Bool
    /// The group open on the writer; touched only by the holder of `writerLock`.
    nonisolated(unsafe) private var group = WriteGroup()
    /// The most writes one commit carries, so none waits long for the others.
    static let groupLimit = 32
    /// How many transactions were committed: fewer than the writes when writes came together.
    let commits = Atomic<Int>(0)
    /// Readers not in use, and whether the database was closed (readers handed back afterwards are closed).
    private let idleReaders = Mutex<(connections: [SQLiteConnection], closed: Bool)>(([], false))
    /// How many idle readers are kept open; more are opened while reads overlap, and closed when handed back.
    private let keptReaders = 8

    /// Opens (creating when missing) the database at `path`; `":memory:"` opens a private in-memory database, read and
    /// written through one connection.
    public init(path: String) throws(StorageError) {
        self.path = path
        groupsWrites = path != ":memory:"
        do {
            writer = try SQLiteConnection(path: path, readOnly: false)
            if path != ":memory:" {
                try writer.execute("PRAGMA journal_mode = WAL")
                try writer.execute("PRAGMA synchronous = NORMAL")
            }
        } catch {
            throw StorageError.unavailable(error)
        }
    }

    public func transaction<R: Sendable>(
        _ body: (any SQLStatementRunner) async throws -> (result: R, commit: Bool)
    ) async throws -> R {
        let (result, ticket) = try await writerLock.withLock { () async throws -> (R, CommitTicket?) in
            guard groupsWrites else {
                try writer.execute("BEGIN IMMEDIATE")
                do {
                    let (result, commit) = try await body(SQLiteRunner(connection: writer))
                    try writer.execute(commit ? "COMMIT" : "ROLLBACK")
                    if commit { commits.add(1, ordering: .relaxed) }
                    return (result, nil)
                } catch {
                    try? writer.execute("ROLLBACK")
                    throw error
                }
            }
            return try await member(body)
        }
        try await ticket?.committed()
        return result
    }

    /// Runs one write as a member of the open group (opening one if none is): in a savepoint, kept or undone as the
    /// body says. The last member before nobody waits (or the group's limit) commits the group; a member that does
    /// not commit it gets a ticket that tells when that commit happened.
    private func member<R: Sendable>(
        _ body: (any SQLStatementRunner) async throws -> (result: R, commit: Bool)
    ) async throws -> (R, CommitTicket?) {
        if group.members == 0 { try writer.execute("BEGIN IMMEDIATE") }
        group.members += 1
        let outcome: Result<R, any Error>
        do {
            try writer.execute("SAVEPOINT member")
            let (result, commit) = try await body(SQLiteRunner(connection: writer))
            if !commit { try writer.execute("ROLLBACK TO member") }
            try writer.execute("RELEASE member")
            outcome = .success(result)
        } catch {
            // A failed statement undoes itself; SQLite ends the whole transaction only on I/O, disk-full or memory
            // errors, and then the group fails with it.
            if (try? writer.execute("ROLLBACK TO member")) == nil || (try? writer.execute("RELEASE member")) == nil
                || writer.isAutocommit
            {
                endGroup(failing: error)
            }
            outcome = .failure(error)
        }
        if group.members > 0, group.members >= Self.groupLimit || !writerLock.hasWaiters {
            do {
                try writer.execute("COMMIT")
                commits.add(1, ordering: .relaxed)
                endGroup(failing: nil)
            } catch {
                endGroup(failing: error)
                throw error
            }
            return (try outcome.get(), nil)
        }
        let result = try outcome.get()
        let ticket = CommitTicket()
        group.tickets.append(ticket)
        return (result, ticket)
    }

    /// Closes the open group: its tickets learn the commit happened, or the error that undid it.
    private func endGroup(failing error: (any Error)?) {
        if error != nil, !writer.isAutocommit { try? writer.execute("ROLLBACK") }
        for ticket in group.tickets { ticket.settle(error) }
        group = WriteGroup()
    }

    public func read<R: Sendable>(_ body: (any SQLStatementRunner) async throws -> R) async throws -> R {
        if path == ":memory:" {
            return try await writerLock.withLock { try await body(SQLiteRunner(connection: writer)) }
        }
        let reader = try takeReader()
        defer { handBack(reader) }
        return try await body(SQLiteRunner(connection: reader))
    }

    public func close() async throws {
        let idle = idleReaders.withLock { state in
            state.closed = true
            defer { state.connections = [] }
            return state.connections
        }
        for reader in idle { reader.close() }
        try await writerLock.withLock {
            // A group left open by a write that saw this close waiting commits before the connection goes.
            if group.members > 0 {
                do {
                    try writer.execute("COMMIT")
                    endGroup(failing: nil)
                } catch {
                    endGroup(failing: error)
                }
            }
            writer.close()
        }
    }

    private func takeReader() throws -> SQLiteConnection {
        let idle = idleReaders.withLock { state -> SQLiteConnection? in
            state.connections.popLast()
        }
        if let idle { return idle }
        let reader = try SQLiteConnection(path: path, readOnly: true)
        return reader
    }

    private func handBack(_ reader: SQLiteConnection) {
        let kept = idleReaders.withLock { state -> Bool in
            guard !state.closed, state.connections.count < keptReaders else { return false }
            state.connections.append(reader)
            return true
        }
        if !kept { reader.close() }
    }
}

/// The writes sharing the writer's open transaction, and the tickets of those that wait for its commit.
private struct WriteGroup {
    var members = 0
    var tickets: [CommitTicket] = []
}

/// Tells a write whose group another write committed when that happened, or why it failed.
private final class CommitTicket: Sendable {
    private let state = Mutex<(settled: Bool, error: (any Error)?, waiter: CheckedContinuation<Void, any Error>?)>(
        (false, nil, nil))

    func settle(_ error: (any Error)?) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            state.settled = true
            state.error = error
            defer { state.waiter = nil }
            return state.waiter
        }
        if let error { waiter?.resume(throwing: error) } else { waiter?.resume() }
    }

    func committed() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let settled = state.withLock { state -> (any Error)?? in
                guard state.settled else {
                    state.waiter = continuation
                    return nil
                }
                return .some(state.error)
            }
            switch settled {
            case .none: break
            case .some(.none): continuation.resume()
            case .some(.some(let error)): continuation.resume(throwing: error)
            }
        }
    }
}

/// An SQLite failure, with SQLite's own (extended) result code and message.
struct SQLiteError: Error, CustomStringConvertible {
    let code: Int32
    let message: String
    var description: String { "SQLite error \(code): \(message)" }
}

/// Runs statements on one SQLite connection held by the caller.
private struct SQLiteRunner: SQLStatementRunner {
    let connection: SQLiteConnection

    func rows(_ statement: SQLStatement) async throws -> [SQLRow] { try connection.rows(statement) }
}

/// One SQLite connection and its prepared statements. Used by one caller at a time: ``SQLiteDatabase`` hands it out
/// under its writer lock or from its reader pool, which is what makes it safe to share between tasks.
final class SQLiteConnection: @unchecked Sendable {
    private var handle: OpaquePointer?
    private var prepared: [String: PreparedStatement] = [:]

    /// A statement compiled once: its handle, the SQLite index of each `$n` value, its column names.
    private struct PreparedStatement {
        let handle: OpaquePointer
        /// `parameterIndexes[n - 1]` is where `$n` is bound (0: the text does not use it).
        let parameterIndexes: [Int32]
        let columns: [String]
    }

    init(path: String, readOnly: Bool) throws(SQLiteError) {
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        var opened: OpaquePointer?
        let status = sqlite3_open_v2(path, &opened, flags, nil)
        guard status == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(opened)
            throw SQLiteError(code: status, message: "opening \(path): \(message)")
        }
        handle = opened
        sqlite3_extended_result_codes(opened, 1)
        sqlite3_busy_timeout(opened, 5000)
    }

    deinit { close() }

    /// Runs statements without values (transaction control, pragmas, schema).
    func execute(_ sql: String) throws(SQLiteError) {
        guard let handle else { throw SQLiteError(code: SQLITE_MISUSE, message: "the connection is closed") }
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard status == SQLITE_OK else {
            throw SQLiteError(code: status, message: message.map { String(cString: $0) } ?? "unknown")
        }
    }

    func rows(_ statement: SQLStatement) throws(SQLiteError) -> [SQLRow] {
        let compiled = try prepare(statement.text)
        let step = compiled.handle
        defer {
            sqlite3_reset(step)
            sqlite3_clear_bindings(step)
        }
        for (offset, value) in statement.binds.enumerated() where offset < compiled.parameterIndexes.count {
            let index = compiled.parameterIndexes[offset]
            guard index > 0 else { continue }
            let status: Int32
            switch value {
            case .null: status = sqlite3_bind_null(step, index)
            case .integer(let number): status = sqlite3_bind_int64(step, index, number)
            case .text(let text):
                // SQLite takes a length in 32 bits; a longer text (a body limit configured past 2 GB) is an error.
                guard let length = Int32(exactly: text.utf8.count) else {
                    throw SQLiteError(code: SQLITE_TOOBIG, message: "a value of \(text.utf8.count) bytes is too long")
                }
                status = text.withCString { iapkit_sqlite3_bind_text_copied(step, index, $0, length) }
            }
            try check(status)
        }
        var rows: [SQLRow] = []
        let columnCount = Int32(compiled.columns.count)
        while true {
            let status = sqlite3_step(step)
            if status == SQLITE_DONE { break }
            guard status == SQLITE_ROW else { throw error(status) }
            var values: [SQLValue] = []
            values.reserveCapacity(compiled.columns.count)
            for column in 0..<columnCount {
                switch sqlite3_column_type(step, column) {
                case SQLITE_NULL: values.append(.null)
                case SQLITE_INTEGER, SQLITE_FLOAT: values.append(.integer(sqlite3_column_int64(step, column)))
                default:
                    let bytes = sqlite3_column_text(step, column)
                    let count = Int(sqlite3_column_bytes(step, column))
                    values.append(
                        .text(
                            bytes.map { String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self) }
                                ?? ""))
                }
            }
            rows.append(SQLRow(columns: compiled.columns, values: values))
        }
        return rows
    }

    /// Whether no transaction is open on the connection.
    var isAutocommit: Bool { handle.map { sqlite3_get_autocommit($0) != 0 } ?? true }

    /// Finalizes every statement and closes the connection (SQLite checkpoints the WAL when the last one closes).
    func close() {
        for statement in prepared.values { sqlite3_finalize(statement.handle) }
        prepared = [:]
        sqlite3_close_v2(handle)
        handle = nil
    }

    private func prepare(_ text: String) throws(SQLiteError) -> PreparedStatement {
        if let cached = prepared[text] { return cached }
        guard let handle else { throw SQLiteError(code: SQLITE_MISUSE, message: "the connection is closed") }
        var compiled: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, text, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &compiled, nil)
        guard status == SQLITE_OK, let compiled else { throw error(status) }
        var indexes: [Int32] = []
        for index in 1...max(sqlite3_bind_parameter_count(compiled), 1) {
            guard let name = sqlite3_bind_parameter_name(compiled, index).map({ String(cString: $0) }),
                name.hasPrefix("$"), let number = Int(name.dropFirst()), number >= 1, number <= 1000
            else { continue }
            if indexes.count < number { indexes += Array(repeating: 0, count: number - indexes.count) }
            indexes[number - 1] = index
        }
        let columns = (0..<sqlite3_column_count(compiled)).map { String(cString: sqlite3_column_name(compiled, $0)) }
        let statement = PreparedStatement(handle: compiled, parameterIndexes: indexes, columns: columns)
        prepared[text] = statement
        return statement
    }

    private func check(_ status: Int32) throws(SQLiteError) {
        guard status == SQLITE_OK else { throw error(status) }
    }

    private func error(_ status: Int32) -> SQLiteError {
        SQLiteError(
            code: status, message: handle.map { String(cString: sqlite3_errmsg($0)) } ?? "the connection is closed")
    }
}
