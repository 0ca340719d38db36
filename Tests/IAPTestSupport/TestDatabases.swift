import Foundation

/// The databases tests may use beyond SQLite files.
public enum TestDatabases {
    /// A PostgreSQL server the tests may create databases on (`IAPKIT_TEST_POSTGRES_URL`; `.ci/run` starts one), or
    /// nil: the PostgreSQL tests then skip with a note.
    public static let postgresURL = ProcessInfo.processInfo.environment["IAPKIT_TEST_POSTGRES_URL"].flatMap {
        $0.isEmpty ? nil : $0
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
