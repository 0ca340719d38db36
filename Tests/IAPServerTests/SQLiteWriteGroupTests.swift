import Foundation
import IAPTestSupport
import Synchronization
import Testing

@testable import IAPServer

/// Writes that reach the SQLite writer while others wait share one commit, each in a savepoint: what one write
/// undoes or fails on never touches the others, and every write is answered only after its commit.
@Suite("SQLite write groups")
struct SQLiteWriteGroupTests {
    static func database() throws -> (SQLiteDatabase, String) {
        let path = TestFiles.url("store.sqlite").path
        let database = try SQLiteDatabase(path: path)
        return (database, path)
    }

    struct Refused: Error {}

    /// Each write holds the writer a millisecond, so the others queue behind it and join its group.
    @Test func writesThatWaitShareACommitAndKeepTheirOwnOutcomes() async throws {
        let (database, path) = try Self.database()
        _ = try await database.transaction { db in
            try await db.run(SQLStatement("CREATE TABLE t (id INTEGER PRIMARY KEY, value TEXT NOT NULL)"))
            return ((), commit: true)
        }
        let before = database.commits.load(ordering: .relaxed)
        // 0 mod 3: committed; 1 mod 3: the body decides not to commit; 2 mod 3: the body throws after writing.
        let outcomes = await withTaskGroup(of: (Int, Bool).self) { group in
            for id in 0..<30 {
                group.addTask {
                    do {
                        return (
                            id,
                            try await database.transaction { db in
                                try await db.run(
                                    SQLStatement("INSERT INTO t (id, value) VALUES ($1, 'x')", [.integer(Int64(id))]))
                                try await Task.sleep(for: .milliseconds(1))
                                if id % 3 == 2 { throw Refused() }
                                return (true, commit: id % 3 == 0)
                            }
                        )
                    } catch {
                        return (id, false)
                    }
                }
            }
            var outcomes: [Int: Bool] = [:]
            for await (id, answered) in group { outcomes[id] = answered }
            return outcomes
        }
        #expect(outcomes.count == 30)
        for (id, answered) in outcomes { #expect(answered == (id % 3 != 2), "write \(id)") }
        let commits = database.commits.load(ordering: .relaxed) - before
        #expect(commits >= 1 && commits <= 15, "30 writes took \(commits) commits")
        try await database.close()

        // What the committed writes wrote is in the file; what the others wrote is not.
        let reopened = try SQLiteDatabase(path: path)
        let rows = try await reopened.read { db in try await db.rows(SQLStatement("SELECT id FROM t ORDER BY id")) }
        #expect(try rows.map { try $0.integer("id") } == Array(stride(from: 0, to: 30, by: 3)).map(Int64.init))
        try await reopened.close()
    }

    /// A statement that fails (here a duplicate key) fails its own write only; the group's other writes commit.
    @Test func aFailedStatementFailsItsOwnWriteOnly() async throws {
        let (database, path) = try Self.database()
        _ = try await database.transaction { db in
            try await db.run(SQLStatement("CREATE TABLE t (id INTEGER PRIMARY KEY)"))
            try await db.run(SQLStatement("INSERT INTO t (id) VALUES (1)"))
            return ((), commit: true)
        }
        let results = await withTaskGroup(of: Bool.self) { group in
            for id in [2, 1, 3, 1, 4] {
                group.addTask {
                    (try? await database.transaction { db in
                        try await Task.sleep(for: .milliseconds(1))
                        try await db.run(SQLStatement("INSERT INTO t (id) VALUES ($1)", [.integer(Int64(id))]))
                        return (true, commit: true)
                    }) ?? false
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.filter { $0 }.count == 3)
        try await database.close()
        let reopened = try SQLiteDatabase(path: path)
        let rows = try await reopened.read { db in try await db.rows(SQLStatement("SELECT id FROM t ORDER BY id")) }
        #expect(try rows.map { try $0.integer("id") } == [1, 2, 3, 4])
        try await reopened.close()
    }
}
