import NIOCore
import NIOEmbedded
import Testing

@testable import IAPServer

/// A connection accepted as its server stops listening: SwiftNIO hands it to the server's stream of connections,
/// which has ended, so nothing holds its writer once it becomes active, and NIO traps ("Deinited NIOAsyncWriter
/// without calling finish()"). The guard closes such a connection instead of letting it become active.
@Suite struct ConnectionGuardTests {
    /// A pipeline as the server builds it (the guard, then the async channel's handler), whose `NIOAsyncChannel` was
    /// dropped before the connection became active, as the ended stream drops it.
    static func orphanedConnection(listening: Bool) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        let registry = ConnectionRegistry(limits: ConnectionLimits())
        try channel.pipeline.syncOperations.addHandler(
            ConnectionGuard(registry: registry, listening: { _ in listening }))
        _ = try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
        return channel
    }

    @Test func aConnectionThatBecomesActiveAfterTheServerStoppedListeningIsClosedNotTrapped() async throws {
        let channel = try Self.orphanedConnection(listening: false)
        // Activation: without the guard's check, NIO's precondition ends the test process here.
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).get()
        #expect(!channel.isActive, "closed at once")
        _ = try? channel.finish()
    }

    @Test func aConnectionOfAListeningServerBecomesActive() async throws {
        let channel = EmbeddedChannel()
        let registry = ConnectionRegistry(limits: ConnectionLimits())
        try channel.pipeline.syncOperations.addHandler(ConnectionGuard(registry: registry))
        let served = try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).get()
        #expect(channel.isActive, "an accepted connection without a listener to ask (no parent) is served")
        try await channel.close().get()
        #expect(!channel.isActive)
        withExtendedLifetime(served) {}
    }
}
