import Foundation

/// The databases tests may use beyond SQLite files.
public enum TestDatabases {
    /// A PostgreSQL server the tests may create databases on (`IAPKIT_TEST_POSTGRES_URL`; `.ci/run` starts one), or
    /// nil: the PostgreSQL tests then skip with a note.
    public static let postgresURL = ProcessInfo.processInfo.environment["IAPKIT_TEST_POSTGRES_URL"].flatMap {
        $0.isEmpty ? nil : $0
    }
}
