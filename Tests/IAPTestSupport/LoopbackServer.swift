public import Hummingbird
import Logging
import ServiceLifecycle

/// Runs a Hummingbird application on loopback for the length of a test's body, and stops it the way `iapkit serve`
/// stops on SIGTERM: a graceful shutdown that lets every accepted connection finish. Cancelling the server's task
/// instead drops connections accepted but not yet taken (a client's reconnect at the last moment), whose writers then
/// trap in debug builds ("Deinited NIOAsyncWriter without calling finish()").
public enum LoopbackServer {
    /// Makes the application with `onPort` as the callback it passes to Hummingbird's `onServerRunning` (`onPort`
    /// takes the bound port), runs it, calls `body` with that port, then shuts the server down gracefully and waits
    /// for it. The graceful part closes the listening socket at once; connections still open after `shutdownLimit`
    /// (clients' idle keep-alive connections, streams) are then cancelled, safely, since none is left unaccepted.
    public static func serve<App: ApplicationProtocol, Value: Sendable>(
        _ make: (_ onPort: @escaping @Sendable (Int) -> Void) -> App, shutdownLimit: Duration = .seconds(1),
        _ body: (Int) async throws -> Value
    ) async throws -> Value {
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        let application = make { portSink.yield($0) }
        var logger = Logger(label: "loopback-server")
        logger.logLevel = .critical
        var configuration = ServiceGroupConfiguration(services: [application], logger: logger)
        configuration.maximumGracefulShutdownDuration = shutdownLimit
        let services = ServiceGroup(configuration: configuration)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                defer { portSink.finish() }
                try await services.run()
            }
            var listening = ports.makeAsyncIterator()
            guard let port = await listening.next() else {
                // The server stopped before it listened: its error says why.
                try await group.waitForAll()
                throw ServerDidNotListen()
            }
            let outcome: Result<Value, any Error>
            do { outcome = .success(try await body(port)) } catch { outcome = .failure(error) }
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
            return try outcome.get()
        }
    }

    /// The server ended without listening and without an error.
    public struct ServerDidNotListen: Error {}
}
