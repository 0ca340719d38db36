import IAPCore
import Logging

/// A log handler that keeps every line's level, message and metadata, for tests that check what was logged.
struct RecordedLog: LogHandler {
    struct Line: Sendable {
        let level: Logger.Level
        let message: String
        let metadata: Logger.Metadata
    }

    /// The lines, shared by every copy of the handler.
    final class Lines: Sendable {
        private let lines = Locked<[Line]>([])
        var all: [Line] { lines.withLock { $0 } }
        func append(_ line: Line) { lines.withLock { $0.append(line) } }
    }

    let lines: Lines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    /// A logger at `level` and the lines it records.
    static func logger(level: Logger.Level = .info) -> (Logger, Lines) {
        let lines = Lines()
        var logger = Logger(label: "test") { _ in RecordedLog(lines: lines) }
        logger.logLevel = level
        return (logger, lines)
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lines.append(
            Line(
                level: event.level, message: "\(event.message)",
                metadata: metadata.merging(event.metadata ?? [:]) { _, explicit in explicit }))
    }
}
