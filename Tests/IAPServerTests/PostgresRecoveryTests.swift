import Foundation
import IAPCore
import IAPTestSupport
import ServiceLifecycleTestKit
import Testing

@testable import IAPServer

/// A database outage long enough for the pool's reconnect backoff to grow (postgres-nio waits 100 ms × 1.25^n between
/// failed attempts, up to a minute): statements are answered again within a second or so of the database's return,
/// not after the backoff. A server of the test's own, paused for 40 s (a minute's outage left it 14 s behind).
@Suite(
    .serialized,
    .enabled(
        if: TestDatabases.postgresURL != nil && ThrowawayPostgres.available,
        "set IAPKIT_TEST_POSTGRES_URL, with PostgreSQL's binaries installed"))
struct PostgresRecoveryTests {
    @Test(.timeLimit(.minutes(3))) func statementsAreAnsweredSoonAfterALongOutageEnds() async throws {
        let server = try await ThrowawayPostgres.start()
        do {
            try await Self.outage(server)
        } catch {
            await server.remove()
            throw error
        }
        await server.remove()
    }

    /// A server stopped while its database answers nothing (frozen, as behind a network partition) closes its pools
    /// at once: a ping waiting on the database ends when its connection closes, not at its deadline (33 s here; the
    /// server took 25 s to exit, past a container's grace period).
    @Test(.timeLimit(.minutes(2))) func closingWhileTheDatabaseAnswersNothingWaitsForNoDeadline() async throws {
        let server = try await ThrowawayPostgres.start()
        let database = try PostgresDatabase(
            url: server.url + "&keepalive=1&statement_timeout=30", maximumConnections: 2)
        var took = Duration.zero
        do {
            let started = ContinuousClock.now
            while (try? await database.read { db in try await db.rows(SQLStatement("SELECT 1 AS one")) }) == nil,
                ContinuousClock.now - started < .seconds(60)
            {
                try await Task.sleep(for: .milliseconds(100))
            }
            try await server.run("freeze")
            try await Task.sleep(for: .seconds(3))  // a ping a second: one is waiting on the frozen database now
            // Waited for 20 s at most, so a close() that hangs again still thaws and removes the server below.
            let closing = ContinuousClock.now
            let closed = Task { try await database.close() }
            let done = Locked(false)
            Task {
                _ = try? await closed.value
                done.withLock { $0 = true }
            }
            while !done.withLock({ $0 }), ContinuousClock.now - closing < .seconds(20) {
                try await Task.sleep(for: .milliseconds(50))
            }
            took = ContinuousClock.now - closing
        } catch {
            try? await server.run("thaw")
            await server.remove()
            throw error
        }
        try await server.run("thaw")
        await server.remove()
        #expect(took < .seconds(10), "close() took \(took)")
    }

    static func outage(_ server: ThrowawayPostgres) async throws {
        let database = try PostgresDatabase(
            url: server.url + "&connect_timeout=2&application_name=recovering", maximumConnections: 2)
        func answers() async -> Bool {
            (try? await database.read { db in try await db.rows(SQLStatement("SELECT 1 AS one")) }) != nil
        }
        // Answering first (the suite's load can hold back the first connection to a server just started).
        let started = ContinuousClock.now
        while !(await answers()), ContinuousClock.now - started < .seconds(60) {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(await answers())
        try await server.run("pause")
        let paused = ContinuousClock.now
        while ContinuousClock.now - paused < .seconds(40) {
            #expect(await answers() == false)
            try await Task.sleep(for: .milliseconds(200))
        }
        try await server.run("resume")
        let resumed = ContinuousClock.now
        while !(await answers()), ContinuousClock.now - resumed < .seconds(60) {
            try await Task.sleep(for: .milliseconds(50))
        }
        let took = ContinuousClock.now - resumed
        print("note: answered again \(took) after the database's return")
        // The pool's backoff after 40 s of failures is about 8 s: the old pool came back 2.5 s after the database in
        // one run, the new one 0.05 s (1.7 s under the whole suite's load). Loose for that load; that the pool was
        // renewed is what tells the two apart every time (once an outage).
        #expect(took < .seconds(8), "answered again \(took) after the database's return")
        #expect(database.renewals >= 1)
        // Closed, it leaves no connection behind: not the new pool's, not the old one's.
        try await database.close()
        let admin = try PostgresDatabase(url: server.url, maximumConnections: 1)
        var left: Int64 = -1
        for _ in 0..<50 where left != 0 {
            let rows = try await admin.read { db in
                try await db.rows(
                    SQLStatement(
                        "SELECT COUNT(*) AS n FROM pg_stat_activity WHERE application_name = 'recovering'"))
            }
            left = try rows.first?.integer("n") ?? -1
            if left != 0 { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(left == 0, "connections left after close()")
        try await admin.close()
    }
}

/// The pools' lifetime is the database's, whatever task made them.
@Suite struct PostgresShutdownTests {
    /// A server's graceful shutdown (SIGTERM) saves the local App Store and gives its lease up through the database
    /// after its services stop: a pool stops when the database is closed, not at the signal. postgres-nio's pool
    /// stops at a graceful shutdown of the task it runs under, and a pool made after an outage ran under the request
    /// that found the outage; its saves at shutdown failed (`poolShutdown`).
    @Test func aPoolOutlivesTheGracefulShutdownOfTheTaskThatMadeIt() async throws {
        guard let url = TestDatabases.postgresURL else {
            print("note: skipped: set IAPKIT_TEST_POSTGRES_URL to run it")
            return
        }
        try await testGracefulShutdown { shutdown in
            let database = try PostgresDatabase(url: url, maximumConnections: 1)
            #expect(try await database.read { db in try await db.rows(SQLStatement("SELECT 1 AS one")) }.count == 1)
            shutdown.triggerGracefulShutdown()
            try await Task.sleep(for: .milliseconds(200))
            #expect(try await database.read { db in try await db.rows(SQLStatement("SELECT 2 AS two")) }.count == 1)
            try await database.close()
        }
    }
}
