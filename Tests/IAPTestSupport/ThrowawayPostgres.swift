public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A PostgreSQL server on loopback that a test starts, pauses (an outage), resumes and removes, through
/// `Scripts/postgres.sh` (Debian's binaries); for tests that need a server of their own rather than the shared one
/// `IAPKIT_TEST_POSTGRES_URL` names.
public struct ThrowawayPostgres: Sendable {
    public let folder: String
    public let port: Int
    /// The URL of its `iapkit_test` database (`sslmode=disable`).
    public let url: String

    /// What went wrong running `Scripts/postgres.sh`.
    public struct ScriptFailed: Error, CustomStringConvertible {
        public let description: String
    }

    /// Whether this machine has PostgreSQL's binaries.
    public static var available: Bool {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []).contains {
            FileManager.default.isExecutableFile(atPath: "/usr/lib/postgresql/\($0)/bin/pg_ctl")
        }
    }

    /// Starts a server on a free port; with `tls`, a folder holding `server.crt` and `server.key`, it offers TLS too.
    /// A port free when chosen can be taken before the server binds it (seconds later, after `initdb`; the suite's
    /// own connections take ports all the time): a start that failed goes again on another port, three times in all.
    public static func start(tls: URL? = nil) async throws -> ThrowawayPostgres {
        let environment = tls.map { ["PGTLS": $0.path] } ?? [:]
        var failure = ""
        for _ in 0..<3 {
            let port = try freePort()
            let (status, output) = try await script(["start", "\(port)"], environment: environment)
            let words = output.split(separator: "\n").last?.split(separator: " ") ?? []
            if status == 0, words.count == 2 {
                return ThrowawayPostgres(folder: String(words[0]), port: port, url: String(words[1]))
            }
            failure = output
        }
        throw ScriptFailed(description: "Scripts/postgres.sh start: \(failure)")
    }

    /// Stops the server and removes its files.
    public func remove() async { _ = try? await Self.script(["stop", folder]) }

    /// Pauses (stops, keeping its data) or resumes the server.
    public func run(_ action: String) async throws {
        let arguments = action == "resume" ? [action, folder, "\(port)"] : [action, folder]
        let (status, output) = try await Self.script(arguments)
        guard status == 0 else { throw ScriptFailed(description: "Scripts/postgres.sh \(action): \(output)") }
    }

    /// Runs `Scripts/postgres.sh` with its output in a file, not a pipe: the server it starts inherits the script's
    /// descriptors and would hold a pipe open for as long as it runs.
    static func script(_ arguments: [String], environment: [String: String] = [:]) async throws -> (
        status: Int32, output: String
    ) {
        try await offThePool {
            let log = TestFiles.url("pg.log")
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            defer { try? FileManager.default.removeItem(at: log) }
            let handle = try FileHandle(forWritingTo: log)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = ["Scripts/postgres.sh"] + arguments
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, given in given }
            process.standardOutput = handle
            process.standardError = handle
            try process.run()
            process.waitUntilExit()
            try handle.close()
            return (process.terminationStatus, try String(contentsOf: log, encoding: .utf8))
        }
    }

    /// A loopback TCP port nothing uses now, below Linux's range for outgoing connections' ports (32768 and up), so
    /// the suite's own connections do not take it before a server binds it; the kernel's pick if none is found.
    public static func freePort() throws -> Int {
        for _ in 0..<50 {
            let port = Int.random(in: 20_000..<32_000)
            if (try? bound(port)) == port { return port }
        }
        return try bound(0)
    }

    /// Binds a loopback socket to `port` (0: any) and gives the port it got; throws when it cannot.
    private static func bound(_ port: Int) throws -> Int {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socketFD) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socketFD, $0, length) == 0 && getsockname(socketFD, $0, &length) == 0
            }
        }
        guard socketFD >= 0, bound else { throw ScriptFailed(description: "no free loopback port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
