public import Hummingbird
public import Logging
public import NIOCore
import ServiceLifecycle

/// Runs a Hummingbird application on loopback for the length of a test's body, then stops it: its listening socket
/// is closed first, so no connection is accepted any more, then it shuts down gracefully (without waiting). Cancelling
/// a server instead drops the connections it accepted but had not yet taken (a client's reconnect at the last moment),
/// whose writers trap ("Deinited NIOAsyncWriter without calling finish()"): a fixed delay before cancelling did not
/// prevent that on a loaded machine.
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
        let group = ServiceGroup(
            configuration: .init(services: [application], gracefulShutdownSignals: [], logger: application.logger))
        let server = Task {
            defer { listenerSink.finish() }
            try await group.run()
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
        // The port is free once this returns. The server takes every connection it accepted before, answers what they
        // asked and closes them; a handler that ignores the shutdown is cancelled after 5 s, long after the last
        // accepted connection was taken.
        try? await listener.close()
        Task {
            await group.triggerGracefulShutdown()
            try? await Task.sleep(for: .seconds(5))
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
