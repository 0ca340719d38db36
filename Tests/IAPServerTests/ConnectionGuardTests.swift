import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
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

/// What the guard tells the registry a connection is doing, by which a full server chooses the connection to close:
/// waiting for its client (headers or a body) or answering.
@Suite struct ConnectionPhaseTests {
    typealias Phase = ConnectionRegistry.Phase

    /// A connection through the guard alone, its registry, and a way to read its phase.
    struct Rig {
        let channel = EmbeddedChannel()
        let registry = ConnectionRegistry(limits: ConnectionLimits())
        init() throws { try channel.pipeline.syncOperations.addHandler(ConnectionGuard(registry: registry)) }
        var phase: Phase? { registry.state(of: channel)?.phase }
        var since: NIODeadline? { registry.state(of: channel)?.since }
        func head(_ method: HTTPRequest.Method = .post) throws {
            try channel.writeInbound(
                HTTPRequestPart.head(HTTPRequest(method: method, scheme: "http", authority: "a", path: "/")))
        }
        func end() throws { try channel.writeInbound(HTTPRequestPart.end(nil)) }
        func answer() throws {
            try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok)))
            try channel.writeOutbound(HTTPResponsePart.end(nil))
        }
    }

    @Test func aFirstRequestsBodyCountsFromTheOpeningAndItsAnswerMakesTheConnectionIdle() throws {
        let rig = try Rig()
        let opened = try #require(rig.since)
        #expect(rig.phase == .waitingForHeaders)
        try rig.head()
        #expect(rig.phase == .receivingBody && rig.since == opened)
        try rig.end()
        #expect(rig.phase == .answering)
        try rig.answer()
        #expect(rig.phase == .waitingForHeaders)
        _ = try? rig.channel.finish()
    }

    @Test func aKeptAliveConnectionsBodyCountsFromItsHeaders() throws {
        let rig = try Rig()
        try rig.head(.get)
        try rig.end()
        try rig.answer()
        let idle = try #require(rig.since)
        try rig.head()
        #expect(rig.phase == .receivingBody)
        #expect(try #require(rig.since) >= idle, "not charged for the idle time before the request")
        _ = try? rig.channel.finish()
    }

    @Test func aBodyBehindAPipelinedRequestIsWaitingForTheClient() throws {
        let rig = try Rig()
        try rig.head(.get)
        try rig.end()
        #expect(rig.phase == .answering)
        try rig.head()  // the next request, its body to come, while the first is answered
        #expect(rig.phase == .receivingBody)
        try rig.answer()  // the first answer goes out; the body is still owed
        #expect(rig.phase == .receivingBody)
        try rig.end()
        #expect(rig.phase == .answering)
        try rig.answer()
        #expect(rig.phase == .waitingForHeaders)
        _ = try? rig.channel.finish()
    }

    @Test func anEarlyRefusalLeavesTheBodyOnItsDeadline() throws {
        let rig = try Rig()
        try rig.head()
        try rig.answer()  // 413 or 415 before the body came
        #expect(rig.phase == .receivingBody, "still waiting for the client, not idle on the longer deadline")
        try rig.end()
        #expect(rig.phase == .waitingForHeaders)
        _ = try? rig.channel.finish()
    }

    @Test func theConnectionWaitingLongestForItsClientMakesRoom() throws {
        let registry = ConnectionRegistry(limits: ConnectionLimits(maximumConnections: 2))
        let (answering, waiting, new) = (EmbeddedChannel(), EmbeddedChannel(), EmbeddedChannel())
        #expect(registry.open(answering) == nil)
        registry.enter(answering, .answering)
        #expect(registry.open(waiting) == nil)
        registry.enter(waiting, .receivingBody, keepingSince: true)
        #expect(registry.open(new) === waiting, "the body waited longest; the answering one is kept")
        let another = EmbeddedChannel()
        #expect(registry.open(another) === new)
        registry.enter(another, .answering)
        let last = EmbeddedChannel()
        #expect(registry.open(last) === last, "every other connection is answering: the new one goes")
    }
}
