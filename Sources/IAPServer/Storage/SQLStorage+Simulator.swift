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
                if database.engine == .postgres {
                    try await Self.saveRowsInBatches(list, kind: kind, bundleID: bundleID, db: db)
                    continue
                }
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

    /// How many of the local App Store's rows one PostgreSQL statement saves.
    static let simulatorRowsPerStatement = 500

    /// Saves `rows` of one kind on PostgreSQL a few hundred to a statement (the rows as one JSON array): a save that
    /// rewrites the whole store (the first after one that failed) took a round trip a row, about 14 s at 9,000 rows,
    /// with the lease row locked all along. SQLite, in the process, saves a row a statement.
    private static func saveRowsInBatches(
        _ rows: [SimulatorStateRows.Row], kind: Int64, bundleID: String, db: any SQLStatementRunner
    ) async throws {
        struct Written: Encodable {
            let k: String
            let p: Int64
            let b: String
        }
        // A key twice: the last one stands, as when saved a row at a time (a statement may touch a row once).
        var last: [String: Int] = [:]
        for (index, row) in rows.enumerated() { last[row.key] = index }
        let rows = rows.enumerated().filter { last[$0.element.key] == $0.offset }.map(\.element)
        let gone = rows.filter { $0.json == nil }.map(\.key)
        let written = rows.compactMap { row in row.json.map { Written(k: row.key, p: row.order, b: $0) } }
        let encoder = StreamingJSONEncoder()
        for start in stride(from: 0, to: gone.count, by: simulatorRowsPerStatement) {
            let keys = Array(gone[start..<min(start + simulatorRowsPerStatement, gone.count)])
            try await db.run(
                SQLStatement(
                    """
                    DELETE FROM iap_simulator_rows WHERE bundle_id = $1 AND kind = $2
                        AND row_key IN (SELECT json_array_elements_text($3::json))
                    """,
                    [.text(bundleID), .integer(kind), .text(String(decoding: try encoder.encode(keys), as: UTF8.self))])
            )
        }
        for start in stride(from: 0, to: written.count, by: simulatorRowsPerStatement) {
            let batch = Array(written[start..<min(start + simulatorRowsPerStatement, written.count)])
            try await db.run(
                SQLStatement(
                    """
                    INSERT INTO iap_simulator_rows (bundle_id, kind, row_key, position, body)
                    SELECT $1, $2, r.k, r.p, r.b FROM json_to_recordset($3::json) AS r(k text, p bigint, b text)
                    ON CONFLICT (bundle_id, kind, row_key) DO UPDATE SET
                        position = excluded.position, body = excluded.body
                    """,
                    [
                        .text(bundleID), .integer(kind),
                        .text(String(decoding: try encoder.encode(batch), as: UTF8.self)),
                    ]))
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
