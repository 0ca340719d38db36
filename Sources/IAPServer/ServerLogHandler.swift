public import Logging

/// swift-log's standard-output lines, with metadata formatted only when a line is written.
///
/// `StreamLogHandler` formats its metadata each time a key is set, and Hummingbird sets a request id on every
/// request's logger: at load that was one request in a hundred spent formatting lines never written.
public struct ServerLogHandler: LogHandler {
    private var lines: StreamLogHandler
    public var metadata: Logger.Metadata = [:]

    /// A handler writing to standard output.
    public static func standardOutput(label: String) -> ServerLogHandler {
        ServerLogHandler(lines: StreamLogHandler.standardOutput(label: label))
    }

    public var logLevel: Logger.Level {
        get { lines.logLevel }
        set { lines.logLevel = newValue }
    }

    public var metadataProvider: Logger.MetadataProvider? {
        get { lines.metadataProvider }
        set { lines.metadataProvider = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var event = event
        if !metadata.isEmpty {
            event.metadata = metadata.merging(event.metadata ?? [:]) { _, explicit in explicit }
        }
        lines.log(event: event)
    }
}
