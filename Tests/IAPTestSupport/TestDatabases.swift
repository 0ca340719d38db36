import Foundation

/// The databases tests may use beyond SQLite files.
public enum TestDatabases {
    /// A PostgreSQL server the tests may create databases on (`IAPKIT_TEST_POSTGRES_URL`; `.ci/run` starts one), or
    /// nil: the PostgreSQL tests then skip with a note.
    public static let postgresURL = ProcessInfo.processInfo.environment["IAPKIT_TEST_POSTGRES_URL"].flatMap {
        $0.isEmpty ? nil : patient($0)
    }

    /// The URL waiting up to 60 s for a connection unless it says otherwise. The suite starts hundreds of tests at
    /// once on two cores, and in CI a test's first connection took longer than the 10 s a server waits by default
    /// (the database refused nothing: the test process was busy). The tests that bound the wait set their own.
    static func patient(_ url: String) -> String {
        url.contains("connect_timeout=") ? url : url + (url.contains("?") ? "&" : "?") + "connect_timeout=60"
    }
}

extension TestDatabases {
    /// The URL of `postgresURL`'s server with the database `name` in place of its own.
    public static func postgresURL(database name: String) -> String? {
        guard let base = postgresURL else { return nil }
        return base.replacingOccurrences(
            of: #"/[^/?]+(\?|$)"#, with: "/\(name)$1", options: .regularExpression,
            range: base.range(of: "@").map { $0.upperBound..<base.endIndex })
    }

    /// A name for a new, empty database of one test (tests running at once never share one).
    public static func freshDatabaseName(_ prefix: String = "iapkit_t") -> String {
        "\(prefix)_\(UUID().uuidString.prefix(8).lowercased())"
    }
}
