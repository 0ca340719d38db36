import Foundation
import IAPCore
import IAPTestSupport
import Testing

@testable import IAPServer

/// The TLS settings of a database URL against a PostgreSQL server of the test's own that offers TLS with a certificate
/// for `localhost` from a certificate authority made for the test: each `sslmode` checks what libpq's does, a root file
/// given in `sslrootcert` is used, and a certificate a setting does not accept is named at once.
@Suite(
    .serialized,
    .enabled(
        if: TestDatabases.postgresURL != nil && ThrowawayPostgres.available && ExternalTool.hasOpenSSL,
        "set IAPKIT_TEST_POSTGRES_URL, with PostgreSQL's binaries and openssl installed"))
struct PostgresTLSTests {
    /// The settings' check, one URL at a time, against one server.
    @Test func eachSSLModeChecksTheCertificateAsLibpqDoes() async throws {
        let folder = TestFiles.url("tls")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Self.makeCertificates(in: folder)
        let server = try await ThrowawayPostgres.start(tls: folder)
        do {
            try await Self.check(server, roots: folder)
        } catch {
            await server.remove()
            throw error
        }
        await server.remove()
    }

    static func check(_ server: ThrowawayPostgres, roots folder: URL) async throws {
        let base = "postgres://postgres@HOST:\(server.port)/iapkit_test?connect_timeout=5&"
        func url(_ host: String, _ settings: String) -> String {
            base.replacingOccurrences(of: "HOST", with: host)
                + settings.replacingOccurrences(of: "CA", with: folder.path)
        }

        // Accepted: whether the session is encrypted, and its application_name.
        let accepted: [(host: String, settings: String, encrypted: Bool)] = [
            ("127.0.0.1", "sslmode=disable", false),
            ("127.0.0.1", "keepalive=30", false),  // loopback: off by default
            ("127.0.0.1", "sslmode=prefer", true),  // the test's authority is not known: not checked
            ("localhost", "sslrootcert=CA/ca.pem", true),  // roots named: prefer, the chain checked
            ("127.0.0.1", "sslmode=require", true),
            ("127.0.0.1", "sslmode=require&sslrootcert=CA/ca.pem", true),  // the chain is checked, not the name
            ("127.0.0.1", "sslmode=verify-ca&sslrootcert=CA/ca.pem", true),
            ("localhost", "sslmode=verify-full&sslrootcert=CA/ca.pem&channel_binding=prefer", true),
            ("127.0.0.1", "sslmode=disable&application_name=billing-eu-1", false),
        ]
        for (host, settings, encrypted) in accepted {
            let database = try PostgresDatabase(url: url(host, settings), maximumConnections: 1)
            let rows = try await database.read { db in
                try await db.rows(
                    SQLStatement(
                        """
                        SELECT CASE WHEN s.ssl THEN 1 ELSE 0 END AS encrypted, a.application_name AS name
                        FROM pg_stat_ssl s JOIN pg_stat_activity a ON a.pid = s.pid WHERE s.pid = pg_backend_pid()
                        """))
            }
            #expect(try rows.first?.integer("encrypted") == (encrypted ? 1 : 0), "\(host) \(settings)")
            let name = settings.contains("application_name") ? "billing-eu-1" : "iapkit"
            #expect(try rows.first?.text("name") == name, "\(host) \(settings)")
            try await database.close()
        }

        // Refused at once, naming why: the name (the certificate is for localhost, not 127.0.0.1), or the chain
        // (another authority; the system's roots, which do not hold the test's).
        let name = "its certificate does not name the URL's host"
        let chain = "CERTIFICATE_VERIFY_FAILED"
        let refused: [(host: String, settings: String, why: String)] = [
            ("127.0.0.1", "sslmode=verify-full&sslrootcert=CA/ca.pem", name),
            ("localhost", "sslmode=verify-ca&sslrootcert=CA/other-ca.pem", chain),
            ("127.0.0.1", "sslmode=require&sslrootcert=CA/other-ca.pem", chain),
            ("localhost", "sslmode=verify-full", chain),
            ("localhost", "sslrootcert=system", chain),
        ]
        for (host, settings, why) in refused {
            let database = try PostgresDatabase(url: url(host, settings), maximumConnections: 1)
            let asked = ContinuousClock.now
            await #expect("\(host) \(settings)") {
                _ = try await database.read { db in try await db.rows(SQLStatement("SELECT 1 AS one")) }
            } throws: { error in
                "\(error)".contains("TLS with the database failed") && "\(error)".contains(why)
            }
            // The connect check names it within a second or so; the loose bound is for the suite's load.
            #expect(ContinuousClock.now - asked < .seconds(4), "\(host) \(settings)")
            try await database.close()
        }
    }

    /// A certificate authority (`ca.pem`), another one (`other-ca.pem`), and the server's certificate for `localhost`
    /// from the first (`server.crt`, `server.key`), P-256, made with openssl.
    static func makeCertificates(in folder: URL) async throws {
        func path(_ name: String) -> String { folder.appendingPathComponent(name).path }
        let steps: [[String]] = [
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                "-subj", "/CN=IAPKit test database authority", "-keyout", path("ca.key"), "-out", path("ca.pem"),
            ],
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                "-subj", "/CN=Another authority", "-keyout", path("other-ca.key"), "-out", path("other-ca.pem"),
            ],
            [
                "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj",
                "/CN=localhost", "-keyout", path("server.key"), "-out", path("server.csr"),
            ],
            [
                "x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
                "-CAcreateserial", "-days", "2", "-out", path("server.crt"), "-extfile", path("server.ext"),
            ],
        ]
        try "subjectAltName = DNS:localhost\nextendedKeyUsage = serverAuth\n".write(
            toFile: path("server.ext"), atomically: true, encoding: .utf8)
        for arguments in steps {
            let (status, output) = try await ExternalTool.run("/usr/bin/openssl", arguments)
            try #require(status == 0, "openssl \(arguments.first ?? ""): \(output)")
        }
    }
}
