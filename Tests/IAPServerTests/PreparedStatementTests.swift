import Foundation
import IAPTestSupport
import Testing

@testable import IAPServer

/// How a statement becomes a prepared one on PostgreSQL: each parameter cast to its value's type, one prepared
/// statement per text and kinds of values, a bound on how many, and texts that cannot be prepared run as they are.
@Suite struct PreparedStatementTests {
    @Test func parametersAreCastToTheirValuesTypes() {
        let text = "SELECT a FROM t WHERE b = $1 AND c = $2 AND d IS NOT DISTINCT FROM $3 AND e = $12 LIMIT $1"
        let kinds = Array("itn" + String(repeating: "n", count: 8) + "t").map { $0.asciiValue! }
        #expect(
            PreparedStatements.typed(text, kinds: kinds)
                == "SELECT a FROM t WHERE b = CAST($1 AS BIGINT) AND c = CAST($2 AS TEXT) AND d IS NOT DISTINCT FROM $3"
                + " AND e = CAST($12 AS TEXT) LIMIT CAST($1 AS BIGINT)")
        // A `$` not followed by a parameter's number stays as it is.
        #expect(
            PreparedStatements.typed("SELECT '$' || $1$", kinds: [UInt8(ascii: "i")])
                == "SELECT '$' || CAST($1 AS BIGINT)$")
        #expect(PreparedStatements.parameterCount(text) == 12)
    }

    @Test func oneStatementPerTextAndKindsOfValues() {
        let prepared = PreparedStatements()
        let text = "SELECT a FROM t WHERE b = $1"
        // A NULL in a place that has only had NULLs is left for PostgreSQL to type.
        let (null, firstNull) = prepared.lookup(SQLStatement(text, [.null]), connection: 1)
        let (integer, first) = prepared.lookup(SQLStatement(text, [.integer(1)]), connection: 1)
        let (textual, _) = prepared.lookup(SQLStatement(text, [.text("1")]), connection: 1)
        #expect(Set([integer, textual, null]).count == 3)
        guard case .prepare("SELECT a FROM t WHERE b = $1", 1, nil) = firstNull else {
            Issue.record("\(firstNull)")
            return
        }
        // Once the place has had an integer, a NULL there binds to the integer's statement.
        let (laterNull, _) = prepared.lookup(SQLStatement(text, [.null]), connection: 1)
        #expect(laterNull == integer)
        guard case .prepare(let typed, let parameters, let replacing) = first else {
            Issue.record("a new statement is prepared first, not \(first)")
            return
        }
        #expect(typed == "SELECT a FROM t WHERE b = CAST($1 AS BIGINT)" && parameters == 1 && replacing == nil)
        // Values past the highest parameter are left out of the key (and of the bind).
        let (extra, _) = prepared.lookup(SQLStatement(text, [.integer(2), .text("unused")]), connection: 1)
        #expect(extra == integer)
        // Fewer values than parameters: run as it is, for PostgreSQL to refuse.
        let (_, missing) = prepared.lookup(SQLStatement("SELECT $2", [.integer(1)]), connection: 1)
        guard case .unprepared = missing else {
            Issue.record("\(missing)")
            return
        }
    }

    @Test func notQueriesAndRefusedTextsRunAsTheyAre() {
        let prepared = PreparedStatements()
        for text in ["BEGIN", "CREATE TABLE t (a BIGINT)", "SET x = 1"] {
            guard case (nil, .unprepared) = prepared.lookup(SQLStatement(text), connection: 1) else {
                Issue.record("\(text) was prepared")
                continue
            }
        }
        let text = "SELECT $1"
        prepared.refuse(text)
        guard case (nil, .unprepared) = prepared.lookup(SQLStatement(text, [.null]), connection: 1) else {
            Issue.record("a refused text was prepared")
            return
        }
    }

    /// Prepared again as uses double while the tables a statement reads are young, then at a steady pace.
    @Test func aStatementIsPreparedAgainAsItsUsesDouble() {
        let uses = (1...600_000).filter(PreparedStatements.replans(atUse:))
        #expect(uses == (6...18).map { 1 << $0 } + [262_144 * 2])
    }

    @Test func atMostSoManyStatementsArePrepared() {
        let prepared = PreparedStatements()
        var unprepared = 0
        for index in 0..<(PreparedStatements.maximumStatements + 10) {
            if case (nil, .unprepared) = prepared.lookup(
                SQLStatement("SELECT \(index) WHERE $1 = 1", [.integer(1)]), connection: 1)
            {
                unprepared += 1
            }
        }
        #expect(unprepared == 10)
    }
}

/// The same on a real PostgreSQL server: values of every kind bound and read back, through a statement's
/// re-preparations on one connection.
@Suite struct PreparedStatementsOnPostgreSQLTests {
    @Test func valuesGoAndComeBackThroughEveryReplan() async throws {
        guard let url = TestDatabases.postgresURL else {
            print("skipped: IAPKIT_TEST_POSTGRES_URL is not set")
            return
        }
        let database = try PostgresDatabase(url: url, maximumConnections: 1)
        let text = """
            SELECT $1 AS number, $2 AS words, $3 AS nothing, CAST(7 AS INTEGER) AS small, CAST(3 AS SMALLINT) AS tiny,
                CAST('x' AS VARCHAR) AS short, pg_advisory_xact_lock(1) AS locked
            """
        // The 64th, 128th, ..., 1,024th uses are prepared again (the old plan deallocated).
        for use in 1...1_030 {
            let words = use == 5 ? "it's \\ a 'quote' and ünïcode" : "use \(use)"
            let rows = try await database.read { db in
                try await db.rows(SQLStatement(text, [.integer(Int64(use) << 40), .text(words), .null]))
            }
            let row = try #require(rows.first)
            #expect(try row.integer("number") == Int64(use) << 40)
            #expect(try row.text("words") == words)
            #expect(try row.integer("small") == 7 && row.integer("tiny") == 3 && row.text("short") == "x")
            #expect(try row.optionalText("nothing") == nil && row.optionalText("locked") == nil)
        }
        try await database.close()
    }
}
