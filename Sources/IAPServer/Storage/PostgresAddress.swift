import Foundation
import IAPCore
import NIOSSL
import PostgresNIO

extension PostgresDatabase {
    /// Where a database URL says the database is, and how to reach it: libpq's URL form
    /// (`postgres://user:password@host:port/database?setting=value&...`) with the settings this client can honour.
    /// Throws `badDatabaseURL` naming what is wrong, so a URL with a setting misspelt or one this client cannot meet
    /// stops the server at start rather than being half followed.
    struct Address {
        /// The query items a database URL may carry.
        static let settings: Set = [
            "host", "port", "sslmode", "sslrootcert", "channel_binding", "application_name", "pool_size",
            "connect_timeout",
            "statement_timeout", "keepalive",
        ]
        /// The `application_name` sessions carry when the URL names none (it shows in `pg_stat_activity` and logs).
        static let defaultApplicationName = "iapkit"

        /// A host name or address; or, for a Unix socket, the directory that holds it (libpq's two forms:
        /// `postgres:///db?host=/var/run/postgresql` and `postgres://%2Fvar%2Frun%2Fpostgresql/db`).
        let host: String
        let port: Int
        /// The Unix socket `host` names (`DIRECTORY/.s.PGSQL.PORT`, as libpq finds it); nil for TCP.
        var socketPath: String? { host.hasPrefix("/") ? "\(host)/.s.PGSQL.\(port)" : nil }
        /// Whether the database is on this machine: a Unix socket or a loopback host.
        var isLocal: Bool { socketPath != nil || isLoopbackHost(host) }
        let username: String
        let password: String?
        let database: String?
        /// `sslmode`, as libpq reads it: disable, prefer (TLS when the server offers it), require, verify-ca or
        /// verify-full (libpq's allow, plain first, is refused). By default off for a loopback host and prefer
        /// otherwise; prefer when `sslrootcert` names a file, verify-full when it says `system`.
        let tlsMode: String
        /// How the server's certificate is checked when TLS is used (libpq's rules): not at all for prefer and require
        /// unless `sslrootcert` names roots (then its chain is); the chain for verify-ca (which needs a root file);
        /// the chain and the host name for verify-full. Roots are the file `sslrootcert` names, else the system's.
        let verification: CertificateVerification
        /// The roots `sslrootcert` names (PEM); nil for the system's.
        let roots: [NIOSSLCertificate]?
        let applicationName: String

        init(url text: String) throws {
            guard let url = URLComponents(string: text),
                ["postgres", "postgresql"].contains(url.scheme?.lowercased() ?? ""),
                let named = url.queryItems?.first(where: { $0.name == "host" })?.value ?? url.host, !named.isEmpty
            else {
                throw StorageError(
                    code: "badDatabaseURL",
                    reason:
                        "'\(DatabaseName.redacted(text))' is not a postgres://user:password@host:port/database URL"
                )
            }
            // What the URL may set, each once: a setting misspelt was ignored without a word (an operator's trial).
            var given: [String: String] = [:]
            for item in url.queryItems ?? [] where !item.name.isEmpty {
                guard Self.settings.contains(item.name) else {
                    throw Self.refused(
                        "'\(item.name)' is not a setting of the database URL (\(Self.settings.sorted().joined(separator: ", ")))"
                    )
                }
                guard given.updateValue(item.value ?? "", forKey: item.name) == nil else {
                    throw Self.refused("\(item.name) is given twice in the database URL")
                }
            }
            // An IPv6 address comes in brackets ([::1]); the connection wants it without.
            let host = named.hasPrefix("[") && named.hasSuffix("]") ? String(named.dropFirst().dropLast()) : named
            let rootCert = given["sslrootcert"]
            // Defaults as libpq's: verify-full with the system's roots; else prefer (off on a loopback host, unless
            // roots are named: they are for TLS).
            let mode =
                given["sslmode"]
                ?? (rootCert == "system"
                    ? "verify-full"
                    : (isLoopbackHost(host) || host.hasPrefix("/")) && rootCert == nil ? "disable" : "prefer")
            guard ["disable", "prefer", "require", "verify-ca", "verify-full"].contains(mode) else {
                throw Self.refused(
                    mode == "allow"
                        ? "sslmode 'allow' (plain first, TLS if refused) is not supported: use prefer or disable"
                        : "sslmode '\(mode)' is not disable, prefer, require, verify-ca or verify-full")
            }
            // libpq's port item, for a Unix socket's URL with no authority (postgres:///db?host=/dir&port=5433).
            var port = url.port ?? 5432
            if let item = given["port"] {
                guard let number = Int(item), (1...65535).contains(number) else {
                    throw Self.refused("port '\(item)' is not a port number (1 to 65535)")
                }
                guard url.port == nil || url.port == number else {
                    throw Self.refused("the URL gives two ports, \(url.port ?? 0) and port=\(number)")
                }
                port = number
            }
            // No TLS over a Unix socket (libpq ignores the TLS settings there; asking for more is refused), and a
            // socket path the system can hold (108 bytes with its NUL on Linux).
            if host.hasPrefix("/") {
                guard rootCert == nil, given["sslmode"] == nil || ["disable", "prefer"].contains(mode) else {
                    throw Self.refused(
                        "TLS is not used over a Unix socket: take sslmode and sslrootcert out of the URL")
                }
                guard "\(host)/.s.PGSQL.\(port)".utf8.count < 104 else {
                    throw Self.refused("the socket directory '\(host)' is too long a path for a Unix socket")
                }
            }
            if rootCert == "system", mode != "verify-full" {
                throw Self.refused("sslrootcert=system checks the certificate's name: it needs sslmode=verify-full")
            }
            if rootCert != nil, mode == "disable" {
                throw Self.refused("sslrootcert names roots for TLS, which sslmode=disable turns off")
            }
            if mode == "verify-ca", rootCert == nil || rootCert == "system" {
                throw Self.refused(
                    "sslmode=verify-ca needs sslrootcert naming the database's authority (any certificate a public "
                        + "authority issued, for any name, would pass): use verify-full for a public one")
            }
            if let rootFile = rootCert, rootFile != "system" {
                do {
                    roots = try NIOSSLCertificate.fromPEMFile(rootFile)
                } catch {
                    throw Self.refused("sslrootcert '\(rootFile)' is not a readable file of PEM certificates: \(error)")
                }
                if roots?.isEmpty ?? true { throw Self.refused("sslrootcert '\(rootFile)' holds no certificate") }
            } else {
                roots = nil
            }
            verification =
                switch mode {
                case "verify-full": .fullVerification
                case "verify-ca": .noHostnameVerification
                default: rootCert == nil ? .none : .noHostnameVerification
                }
            // postgres-nio logs in with SCRAM-SHA-256 and never binds the channel (SCRAM-SHA-256-PLUS).
            switch given["channel_binding"] ?? "prefer" {
            case "disable", "prefer": break
            case "require":
                throw Self.refused(
                    "channel_binding=require cannot be met: this client does not bind the TLS channel to the login "
                        + "(SCRAM-SHA-256-PLUS); leave the setting out or use prefer")
            case let other: throw Self.refused("channel_binding '\(other)' is not disable, prefer or require")
            }
            let name = given["application_name"] ?? Self.defaultApplicationName
            guard name.utf8.count <= 63, name.unicodeScalars.allSatisfy({ (32..<127).contains($0.value) }) else {
                throw Self.refused("application_name '\(name)' is not up to 63 printable ASCII characters")
            }
            let database = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : url.path
            self.host = host
            self.port = port
            username = url.user ?? "postgres"
            password = url.password
            self.database = database.isEmpty ? nil : database
            tlsMode = host.hasPrefix("/") ? "disable" : mode
            applicationName = name
        }

        private static func refused(_ reason: String) -> StorageError {
            StorageError(code: "badDatabaseURL", reason: reason)
        }

        /// Why the connection to a database on another machine does not keep one that takes its address from
        /// reading and changing what is sent (no TLS, TLS it can refuse, or a certificate not checked), for a warning
        /// at start; nil when TLS is required and checked, or the database is on this machine.
        var uncheckedTLSWarning: String? {
            guard !isLocal else { return nil }
            let risk: String
            switch (tlsMode, verification) {
            case ("disable", _): risk = "nothing sent to the database is encrypted (sslmode=disable)"
            case ("prefer", _):
                risk =
                    "with sslmode=prefer a machine that takes the database's address can answer that it has no TLS, "
                    + "and the session goes on in plain text"
            case (_, .none):
                risk =
                    "the database's certificate is not checked (sslmode=\(tlsMode), as libpq's): a machine that "
                    + "takes its address could read and change what is sent"
            default: return nil
            }
            return risk
                + "; use sslmode=verify-full (with sslrootcert naming the authority when it is not a public one)"
        }

        /// The pool's configuration: the host and port, or the Unix socket.
        var poolConfiguration: PostgresClient.Configuration {
            if let socketPath {
                return PostgresClient.Configuration(
                    unixSocketPath: socketPath, username: username, password: password, database: database)
            }
            return PostgresClient.Configuration(
                host: host, port: port, username: username, password: password, database: database, tls: poolTLS)
        }

        /// The same for the one connection ``ConnectCheck`` opens.
        func connectionConfiguration() throws -> PostgresConnection.Configuration {
            if let socketPath {
                return PostgresConnection.Configuration(
                    unixSocketPath: socketPath, username: username, password: password, database: database)
            }
            return PostgresConnection.Configuration(
                host: host, port: port, username: username, password: password, database: database,
                tls: try connectionTLS())
        }

        /// The TLS configuration of a connection: the verification and roots above.
        var tlsConfiguration: TLSConfiguration {
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.certificateVerification = verification
            if let roots { configuration.trustRoots = .certificates(roots) }
            return configuration
        }

        /// The pool's TLS: none, preferred or required.
        private var poolTLS: PostgresClient.Configuration.TLS {
            switch tlsMode {
            case "disable": .disable
            case "prefer": .prefer(tlsConfiguration)
            default: .require(tlsConfiguration)
            }
        }

        /// The same for one connection.
        private func connectionTLS() throws -> PostgresConnection.Configuration.TLS {
            switch tlsMode {
            case "disable": .disable
            case "prefer": .prefer(try NIOSSLContext(configuration: tlsConfiguration))
            default: .require(try NIOSSLContext(configuration: tlsConfiguration))
            }
        }
    }
}
