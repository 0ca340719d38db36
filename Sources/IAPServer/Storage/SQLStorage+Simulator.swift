import Foundation
public import IAPCore

/// The local App Store's rows (`SimulatorStateRows`): a state document per app and a row per transaction and
/// notification, saved by change and read back whole.
extension SQLStorage {
    public func saveSimulatorState(_ rows: SimulatorStateRows, bundleID: String, holder: String?)
        async throws(StorageError) -> Bool
    {
        let savedAt = Date().millisecondsSince1970
        let lock = database.engine == .postgres ? " FOR UPDATE" : ""
        return try await inTransaction { db in
            if let holder {
                // The lease row locked until the save commits: a take-over waits for it, or it sees the new holder.
                let lease = try await db.rows(
                    SQLStatement(
                        "SELECT holder FROM iap_simulator_leases WHERE bundle_id = $1" + lock, [.text(bundleID)]))
                guard try lease.first?.text("holder") == holder else { return (false, commit: false) }
            }
            try await db.run(
                SQLStatement(
                    """
                    INSERT INTO iap_simulator_state (bundle_id, state, saved_at) VALUES ($1, $2, $3)
                    ON CONFLICT (bundle_id) DO UPDATE SET state = excluded.state, saved_at = excluded.saved_at
                    """, [.text(bundleID), .text(rows.state), .integer(savedAt)]))
            for (kind, list) in [(Int64(0), rows.transactions), (1, rows.notifications)] {
                for row in list {
                    guard let json = row.json else {
                        try await db.run(
                            SQLStatement(
                                "DELETE FROM iap_simulator_rows WHERE bundle_id = $1 AND kind = $2 AND row_key = $3",
                                [.text(bundleID), .integer(kind), .text(row.key)]))
                        continue
                    }
                    try await db.run(
                        SQLStatement(
                            """
                            INSERT INTO iap_simulator_rows (bundle_id, kind, row_key, position, body)
                            VALUES ($1, $2, $3, $4, $5)
                            ON CONFLICT (bundle_id, kind, row_key) DO UPDATE SET
                                position = excluded.position, body = excluded.body
                            """, [.text(bundleID), .integer(kind), .text(row.key), .integer(row.order), .text(json)]))
                }
            }
            return (true, commit: true)
        }
    }

    public func simulatorState(bundleID: String) async throws(StorageError) -> SimulatorStateRows? {
        let (state, rows) = try await read { db in
            let state = try await db.rows(
                SQLStatement("SELECT state FROM iap_simulator_state WHERE bundle_id = $1", [.text(bundleID)]))
            let rows = try await db.rows(
                SQLStatement(
                    """
                    SELECT kind, row_key, position, body FROM iap_simulator_rows WHERE bundle_id = $1
                    ORDER BY kind, position
                    """, [.text(bundleID)]))
            return (state, rows)
        }
        return try Self.decoding {
            guard let document = try state.first?.text("state") else { return nil }
            var saved = SimulatorStateRows(state: document, transactions: [], notifications: [])
            for row in rows {
                let value = SimulatorStateRows.Row(
                    key: try row.text("row_key"), order: try row.integer("position"), json: try row.text("body"))
                if try row.integer("kind") == 0 {
                    saved.transactions.append(value)
                } else {
                    saved.notifications.append(value)
                }
            }
            return saved
        }
    }

    public func takeSimulatorLease(bundleID: String, holder: String, replacing stale: SimulatorLease?)
        async throws(StorageError) -> SimulatorLease
    {
        let rows = try await inTransaction { db in
            try await db.run(
                SQLStatement(
                    """
                    INSERT INTO iap_simulator_leases (bundle_id, holder, beat) VALUES ($1, $2, 0)
                    ON CONFLICT (bundle_id) DO UPDATE SET holder = excluded.holder, beat = 0
                    WHERE iap_simulator_leases.holder = $3 AND iap_simulator_leases.beat = $4
                    """,
                    [.text(bundleID), .text(holder), .text(stale?.holder ?? ""), .integer(stale?.beat ?? -1)]))
            let rows = try await db.rows(Self.leaseStatement(bundleID))
            return (rows, commit: true)
        }
        guard let lease = try Self.lease(rows) else {
            throw StorageError(code: "storageCorrupt", reason: "no lease on the local App Store after taking it")
        }
        return lease
    }

    public func simulatorLease(bundleID: String) async throws(StorageError) -> SimulatorLease? {
        try Self.lease(try await read { db in try await db.rows(Self.leaseStatement(bundleID)) })
    }

    private static func leaseStatement(_ bundleID: String) -> SQLStatement {
        SQLStatement("SELECT holder, beat, note FROM iap_simulator_leases WHERE bundle_id = $1", [.text(bundleID)])
    }

    private static func lease(_ rows: [SQLRow]) throws(StorageError) -> SimulatorLease? {
        try decoding {
            try rows.first.map {
                SimulatorLease(holder: try $0.text("holder"), beat: try $0.integer("beat"), note: try $0.text("note"))
            }
        }
    }

    public func beatSimulatorLease(bundleID: String, holder: String, note: String) async throws(StorageError) -> Bool {
        let rows = try await inTransaction { db in
            try await db.run(
                SQLStatement(
                    "UPDATE iap_simulator_leases SET beat = beat + 1, note = $3 WHERE bundle_id = $1 AND holder = $2",
                    [.text(bundleID), .text(holder), .text(note)]))
            let rows = try await db.rows(
                SQLStatement("SELECT holder FROM iap_simulator_leases WHERE bundle_id = $1", [.text(bundleID)]))
            return (rows, commit: true)
        }
        return try Self.decoding { try rows.first?.text("holder") == holder }
    }

    public func releaseSimulatorLease(bundleID: String, holder: String) async throws(StorageError) {
        try await inTransaction { db in
            try await db.run(
                SQLStatement(
                    "DELETE FROM iap_simulator_leases WHERE bundle_id = $1 AND holder = $2",
                    [.text(bundleID), .text(holder)]))
            return ((), commit: true)
        }
    }
}
