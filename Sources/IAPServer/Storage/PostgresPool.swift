import IAPCore
import Logging
import PostgresNIO

extension PostgresDatabase {
    /// A postgres-nio pool with the statements prepared on its connections. Each has a number of its own, so its
    /// connections (numbered from 0 by each pool) are told apart from an earlier pool's.
    final class Pool: Sendable {
        let number: Int
        let client: PostgresClient
        let prepared = PreparedStatements()
        private let running: Task<Void, Never>
        /// Connections leased from it now.
        let leases = Locked(0)

        init(number: Int, configuration: PostgresClient.Configuration, logger: Logger) {
            self.number = number
            let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
            self.client = client
            // Detached: postgres-nio's pool stops at a graceful shutdown of the task it runs under (a task-local a
            // `Task {}` inherits), and a pool made after an outage was made under a request's task. The pool stops
            // when the database is closed, after the server's last saves.
            running = Task.detached { await client.run() }
        }

        /// Closes its connections and waits until it has stopped.
        func stop() async {
            running.cancel()
            await running.value
        }
    }

    /// `logger` at warnings and above, unless it logs debug lines: postgres-nio logs every failed connection attempt
    /// at info (six lines before the one that says why the server stops, at a start that cannot reach the database;
    /// one an attempt through an outage), where the server says once that the database is unreachable, why, and when
    /// it answers again.
    static func driverLogger(_ logger: Logger) -> Logger {
        var quieter = logger
        if logger.logLevel > .debug { quieter.logLevel = max(logger.logLevel, .warning) }
        return quieter
    }
}
