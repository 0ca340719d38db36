public import Hummingbird
public import Logging
public import NIOCore

/// Runs a Hummingbird application on loopback for the length of a test's body, then stops it: its listening socket
/// is closed first, so no connection is accepted any more, and only then is its task cancelled (without waiting). Cancelling a
/// listening server drops the connections it accepted but had not yet taken (a client's reconnect at the last
/// moment), whose writers trap ("Deinited NIOAsyncWriter without calling finish()").
public enum LoopbackServer {
    /// Makes the application with `onRunning` as its `onServerRunning` callback, runs it, calls `body` with the bound
    /// port, then stops the server as above.
    public static func serve<App: ApplicationProtocol, Value: Sendable>(
        _ make: (_ onRunning: @escaping @Sendable (any Channel) async -> Void) -> App,
        _ body: (Int) async throws -> Value
    ) async throws -> Value {
        let (listeners, listenerSink) = AsyncStream.makeStream(of: (any Channel).self)
        let application = make { listenerSink.yield($0) }
        // Not a child task: stopping the server never waits on its connections (a handler that ignores cancellation
        // cannot hold a test up).
        let server = Task {
            defer { listenerSink.finish() }
            try await application.runService(gracefulShutdownSignals: [])
        }
        var listening = listeners.makeAsyncIterator()
        guard let listener = await listening.next() else {
            // The server stopped before it listened: its error says why.
            try await server.value
            throw ServerDidNotListen()
        }
        let outcome: Result<Value, any Error>
        do { outcome = .success(try await body(listener.localAddress?.port ?? 0)) } catch {
            outcome = .failure(error)
        }
        // The port is free once this returns; the server takes what it accepted before, then its connections are
        // cancelled.
        try? await listener.close()
        Task {
            try? await Task.sleep(for: .milliseconds(50))
            server.cancel()
        }
        return try outcome.get()
    }

    /// A logger for servers under test: critical messages only (Hummingbird logs at error level that a server whose
    /// socket was closed first could not close it again).
    public static var logger: Logger {
        var logger = Logger(label: "loopback-server")
        logger.logLevel = .critical
        return logger
    }

    /// The server ended without listening and without an error.
    public struct ServerDidNotListen: Error {}
}
