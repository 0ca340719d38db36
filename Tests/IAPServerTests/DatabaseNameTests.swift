import Foundation
import IAPCore
import Logging
import Testing

@testable import IAPServer

/// What `--database` names, read before anything is opened: a URL of a scheme IAPKit does not know is refused (not
/// opened as an SQLite file of that name), and a URL's password never reaches the banner or an error message.
@Suite struct DatabaseNameTests {
    @Test(arguments: [
        ("iapkit.sqlite", DatabaseName.sqlite(path: "iapkit.sqlite")),
        (":memory:", .sqlite(path: ":memory:")),
        ("/var/lib/iapkit/data.sqlite", .sqlite(path: "/var/lib/iapkit/data.sqlite")),
        ("backup:2026.sqlite", .sqlite(path: "backup:2026.sqlite")),
        ("  data.sqlite\n", .sqlite(path: "data.sqlite")),
        ("postgres://u@127.0.0.1/db", .postgres(url: "postgres://u@127.0.0.1/db")),
        ("postgresql://u@127.0.0.1/db", .postgres(url: "postgresql://u@127.0.0.1/db")),
        ("Postgres://u@127.0.0.1/db", .postgres(url: "postgres://u@127.0.0.1/db")),
        (" postgres://u@127.0.0.1/db\n", .postgres(url: "postgres://u@127.0.0.1/db")),
        ("POSTGRESQL:///db?host=/run/postgresql", .postgres(url: "postgresql:///db?host=/run/postgresql")),
        ("file:/var/lib/iapkit/data.sqlite?mode=rwc", .sqlite(path: "file:/var/lib/iapkit/data.sqlite?mode=rwc")),
    ])
    func aSettingNamesAFileOrAServer(_ text: String, _ expected: DatabaseName) throws {
        #expect(try DatabaseName(text) == expected)
    }

    @Test(arguments: [
        "postgress://u:secret@127.0.0.1/db", "postgre://u@127.0.0.1/db", "mysql://u@127.0.0.1/db",
        "sqlite:/tmp/data.sqlite", "http://127.0.0.1/db",
    ])
    func aURLOfAnotherSchemeIsRefusedByName(_ text: String) {
        #expect {
            _ = try DatabaseName(text)
        } throws: { error in
            let error = error as? StorageError
            return error?.code == "badDatabaseURL" && error?.reason.contains("is not a scheme IAPKit knows") == true
                && error?.reason.contains("secret") == false
        }
    }

    /// A URL with one slash after its scheme names the right engine, so the message says what a URL must look like.
    @Test func aPostgresURLMistypedIsToldAsOne() async {
        await #expect {
            _ = try await ServerRuntime.openStorage("postgres:/u:secret@127.0.0.1/db", logger: Logger(label: "test"))
        } throws: { error in
            let error = error as? StorageError
            return error?.code == "badDatabaseURL" && error?.reason.contains("postgres://user:password@") == true
                && error?.reason.contains("secret") == false
        }
    }

    @Test(arguments: [
        ("postgres://iapkit:s3cret@db.internal:5432/iapkit", "postgres://iapkit:***@db.internal:5432/iapkit"),
        ("postgres://iapkit:p@ss@db/iapkit?sslmode=require", "postgres://iapkit:***@db/iapkit?sslmode=require"),
        ("postgres://iapkit:s3cret@db", "postgres://iapkit:***@db"),
        ("postgres://iapkit@db/iapkit", "postgres://iapkit@db/iapkit"),
        ("postgres:///iapkit?host=/run/postgresql", "postgres:///iapkit?host=/run/postgresql"),
        ("postgres://db/x?application_name=a@b:c", "postgres://db/x?application_name=a@b:c"),
        ("postgres://u@db:5432/x?application_name=a@b", "postgres://u@db:5432/x?application_name=a@b"),
        ("postgres://u:pa/ss@db/x", "postgres://u:***@db/x"),
        ("postgres://u:pa?ss@db/x", "postgres://u:***@db/x"),
        ("postgres://u:pa#ss@db/x", "postgres://u:***@db/x"),
        ("postgres://u:a%2Fb@db/x", "postgres://u:***@db/x"),
        ("postgres:/u:secret@db/x", "postgres:/u:***@db/x"),
        ("postgres://u@db/x?application_name=a@b:c", "postgres://u@db/x?application_name=a@b:c"),
        ("data.sqlite", "data.sqlite"),
    ])
    func aPasswordIsNeverShown(_ url: String, _ shown: String) throws {
        #expect(DatabaseName.redacted(url) == shown)
    }

    /// libpq's `port` item, for a Unix socket's URL without an authority (an operator's trial found it refused).
    @Test func aUnixSocketsPortCanBeAQueryItem() throws {
        let address = try PostgresDatabase.Address(url: "postgres:///iapkit?host=/var/run/postgresql&port=5433")
        #expect(address.socketPath == "/var/run/postgresql/.s.PGSQL.5433")
        #expect(try PostgresDatabase.Address(url: "postgres://u@db:6000/x?port=6000").port == 6000)
    }

    @Test func theBannerShowsTheURLWithoutItsPassword() throws {
        let name = try DatabaseName("postgresql://iapkit:s3cret@127.0.0.1:5432/iapkit")
        #expect(name.description == "postgresql://iapkit:***@127.0.0.1:5432/iapkit")
    }

    /// A host name that does not resolve is named at once, not after the connect timeout (an operator's trial waited
    /// 10 s for "no connection to the database").
    @Test func aHostNameThatDoesNotResolveIsNamedAtOnce() async throws {
        let database = try PostgresDatabase(
            url: "postgres://postgres@nosuchhost.invalid:5432/x?sslmode=disable&connect_timeout=600",
            maximumConnections: 1)
        let started = ContinuousClock.now
        await #expect {
            _ = try await database.read { db in try await db.rows(SQLStatement("SELECT 1 AS one")) }
        } throws: { error in
            "\(error)".contains("nosuchhost.invalid could not be resolved")
        }
        // Loose: the check fires after a quarter second; the suite's load can hold a task back.
        #expect(ContinuousClock.now - started < .seconds(60))
        try await database.close()
    }
}
