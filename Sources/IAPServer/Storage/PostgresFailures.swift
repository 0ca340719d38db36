import IAPCore

/// What PostgreSQL said when it refused a statement: its SQLSTATE and message.
struct PostgresFailure: Error, CustomStringConvertible {
    let state: String
    let message: String
    var description: String { "PostgreSQL \(state): \(message)" }

    /// A deadlock PostgreSQL broke or a serialization failure: the transaction was rolled back whole, and the same
    /// transaction run again can succeed.
    var isTransient: Bool { state == "40P01" || state == "40001" }
}

/// Whether this instance last found its database reachable.
final class Reachability: Sendable {
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
