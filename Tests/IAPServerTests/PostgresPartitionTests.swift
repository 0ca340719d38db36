import Foundation
import IAPCore
import IAPTestSupport
import Testing

@testable import IAPServer

/// A database that takes connections and answers nothing (frozen with SIGSTOP, as behind a network partition) is
/// found within seconds, not at the statement deadline (30 s + 3 s here): statements waiting end with
/// `storageUnavailable`, later ones fail at once, and it serves again once the database answers. A database that is
/// only slow (a statement sleeping past the check's lag) is not taken for unreachable.
@Suite(
    .serialized,
    .enabled(
        if: TestDatabases.postgresURL != nil && ThrowawayPostgres.available,
        "set IAPKIT_TEST_POSTGRES_URL, with PostgreSQL's binaries installed"))
struct PostgresPartitionTests {
    @Test(.timeLimit(.minutes(3))) func aDatabaseThatAnswersNothingIsFoundWithinSeconds() async throws {
        var failures: [(took: Duration, error: String)] = []
        var afterwards = Duration.zero
        var recovered = false
        let checks = try await Self.withDatabase { server, database in
            try await server.run("freeze")
            let started = ContinuousClock.now
            failures = await withTaskGroup(of: (Duration, String).self) { group in
                for _ in 0..<3 {
                    group.addTask {
                        do {
                            _ = try await database.read { db in try await db.rows(SQLStatement("SELECT 1 AS one")) }
                            return (ContinuousClock.now - started, "answered")
                        } catch {
                            return (ContinuousClock.now - started, "\(error)")
                        }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let next = ContinuousClock.now
            _ = try? await database.read { db in try await db.rows(SQLStatement("SELECT 1 AS one")) }
            afterwards = ContinuousClock.now - next
            try await server.run("thaw")
            recovered = await Self.answersSoon(database)
        }
        #expect(failures.count == 3)
        for failure in failures {
            // The lag (2 s) and the check (3 s), with room for the suite's load; the deadline is 33 s.
            #expect(failure.took < .seconds(20), "\(failure)")
            #expect(failure.error.contains("the database stopped answering"), "\(failure.error)")
        }
        #expect(afterwards < .seconds(1), "a statement once the database was found not answering took \(afterwards)")
        #expect(recovered)
        #expect(checks.contains(false), "\(checks)")
    }

    @Test(.timeLimit(.minutes(2))) func aStatementThatIsOnlySlowIsNotCut() async throws {
        var slept: Result<Duration, any Error> = .success(.zero)
        var reachable = false
        let checks = try await Self.withDatabase { _, database in
            let started = ContinuousClock.now
            do {
                _ = try await database.read { db in try await db.rows(SQLStatement("SELECT pg_sleep(4) AS slept")) }
                slept = .success(ContinuousClock.now - started)
            } catch {
                slept = .failure(error)
            }
            reachable = await database.reachable()
        }
        #expect((try? slept.get()).map { $0 >= .seconds(4) } == true, "\(slept)")
        #expect(reachable)
        // The statement lagged, the database was checked and answered (not a pass for want of a check).
        #expect(checks.contains(true), "\(checks)")
        #expect(!checks.contains(false), "\(checks)")
    }

    /// Runs `body` with a server of the test's own and a database on it (the default statement timeout, 30 s),
    /// answering first; closes and removes both whatever happens (thawed first). Answers the database's checks.
    static func withDatabase(
        _ body: (ThrowawayPostgres, PostgresDatabase) async throws -> Void
    ) async throws -> [Bool?] {
        let server = try await ThrowawayPostgres.start()
        var failure: (any Error)?
        var checks: [Bool?] = []
        do {
            let database = try PostgresDatabase(url: server.url + "&statement_timeout=30", maximumConnections: 2)
            do {
                #expect(await answersSoon(database))
                try await body(server, database)
            } catch {
                failure = error
            }
            try? await server.run("thaw")
            checks = database.checks
            try? await database.close()
        } catch {
            failure = error
        }
        await server.remove()
        if let failure { throw failure }
        return checks
    }

    /// Whether `database` answers within a minute (the suite's load can hold back a first connection).
    static func answersSoon(_ database: PostgresDatabase) async -> Bool {
        let started = ContinuousClock.now
        while ContinuousClock.now - started < .seconds(60) {
            if (try? await database.read { db in try await db.rows(SQLStatement("SELECT 1 AS one")) }) != nil {
                return true
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }
}
