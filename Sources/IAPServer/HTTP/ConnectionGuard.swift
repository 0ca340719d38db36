import Foundation
import Logging
import NIOCore
import NIOHTTPTypes
import Synchronization

/// Time limits and ceilings, so slow, idle or greedy clients cannot hold the server:
/// - a new connection must deliver a request's headers within ``headerTimeout``, and a kept-alive one its next
///   request's headers within ``idleTimeout`` of the last answer;
/// - a request's body must arrive within ``bodyTimeout`` of its headers;
/// - at most ``maximumConnections`` are open: past it, of the connections waiting for their client (a request's
///   headers or its body), the one that has waited longest is closed to make room (a flood of slow connections or
///   slow bodies evicts itself, and `/health` keeps answering); when every connection is busy with an answer, the new
///   one is closed;
/// - a connection may send at most ``maximumPipelinedRequests`` requests ahead of their answers: one that sends more
///   without reading is closed (each request waiting in a connection holds memory).
///
/// Answers being written (a long update stream included) are never cut, except on a connection that is also still
/// sending a later request's body (pipelined) and is chosen to make room.
public struct ConnectionLimits: Sendable, Equatable {
    public var headerTimeout: Duration
    public var bodyTimeout: Duration
    public var idleTimeout: Duration
    public var maximumConnections: Int
    public var maximumPipelinedRequests: Int

    public init(
        headerTimeout: Duration = .seconds(10), bodyTimeout: Duration = .seconds(30),
        idleTimeout: Duration = .seconds(60),
        maximumConnections: Int = ConnectionLimits.defaultMaximumConnections,
        maximumPipelinedRequests: Int = 64
    ) {
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.idleTimeout = idleTimeout
        self.maximumConnections = maximumConnections
        self.maximumPipelinedRequests = maximumPipelinedRequests
    }

    /// 4,096, or fewer when the process may open fewer files: the soft `RLIMIT_NOFILE` less 128 kept for the
    /// database, logs and the listening socket (at least 16).
    public static var defaultMaximumConnections: Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 4_096 }
        let files = Int(clamping: min(limit.rlim_cur, 1 << 20))
        return max(16, min(4_096, files - 128))
    }
}

/// The connections a server has open, shared by their guards.
final class ConnectionRegistry: Sendable {
    /// What a connection is doing, by which it is chosen to make room.
    enum Phase {
        /// Waiting for a request's headers.
        case waitingForHeaders
        /// Receiving a request's body.
        case receivingBody
        /// Its requests are in; their answers are being made or written (never chosen).
        case answering
    }

    struct Entry {
        let channel: any Channel
        var phase: Phase
        /// When the phase began (for the first request's body, when the connection opened).
        var since: NIODeadline
    }

    let limits: ConnectionLimits
    private let entries = Mutex<[ObjectIdentifier: Entry]>([:])

    init(limits: ConnectionLimits) { self.limits = limits }

    var count: Int { entries.withLock { $0.count } }

    /// Registers a new connection; returns the connection to close to stay within the ceiling, if any: of those waiting
    /// for the client (its headers or its body), the one that has waited longest; else the new one. (Waiting for
    /// headers is not chosen first: a connection accepted a moment ago, whose headers are in but not yet read, would
    /// go before a body that has dragged on for seconds.) A connection waiting for a body may have answers owed before
    /// it; closing it cuts them, which only a client that pipelines and then trickles a body sees.
    func open(_ channel: any Channel) -> (any Channel)? {
        entries.withLock { entries in
            let new = ObjectIdentifier(channel)
            entries[new] = Entry(channel: channel, phase: .waitingForHeaders, since: .now())
            guard entries.count > limits.maximumConnections else { return nil }
            let victim =
                entries.values.filter { ObjectIdentifier($0.channel) != new && $0.phase != .answering }
                .min { $0.since < $1.since }?.channel ?? channel
            entries[ObjectIdentifier(victim)] = nil
            return victim
        }
    }

    /// Moves a connection to `phase`; its clock starts again, unless `keepingSince` (a first request's body, whose
    /// wait counts from the connection's opening: the whole request is the client's to deliver).
    func enter(_ channel: any Channel, _ phase: Phase, keepingSince: Bool = false) {
        entries.withLock { entries in
            let id = ObjectIdentifier(channel)
            guard let entry = entries[id], entry.phase != phase else { return }
            entries[id] = Entry(channel: channel, phase: phase, since: keepingSince ? entry.since : .now())
        }
    }

    /// What a connection is doing and since when (for tests).
    func state(of channel: any Channel) -> (phase: Phase, since: NIODeadline)? {
        entries.withLock { $0[ObjectIdentifier(channel)].map { ($0.phase, $0.since) } }
    }

    func close(_ channel: any Channel) {
        _ = entries.withLock { $0.removeValue(forKey: ObjectIdentifier(channel)) }
    }
}

/// One connection's guard, in the pipeline after HTTP decoding: it sees each request's head, body and end, and each
/// answer's end, and closes the connection when a deadline passes.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let registry: ConnectionRegistry
    private let listening: @Sendable (any Channel) -> Bool
    private var timer: Scheduled<Void>?
    private var requestsInFlight = 0
    /// Set when the connection sent more requests ahead of their answers than allowed: what else it sent is dropped.
    private var cutOff = false
    /// Whether the latest request's end has yet to arrive.
    private var bodyOutstanding = false
    /// Whether a request's headers came on this connection before (a kept-alive connection's next request).
    private var headersSeen = false

    /// - Parameters:
    ///   - registry: the server's connections.
    ///   - listening: whether the server that accepted a connection still listens (its listening socket is open).
    init(
        registry: ConnectionRegistry,
        listening: @escaping @Sendable (any Channel) -> Bool = { $0.parent?.isActive ?? true }
    ) {
        self.registry = registry
        self.listening = listening
    }

    /// A connection that becomes active after its server stopped listening is closed without being handed on. The
    /// server stops taking connections once its listening socket is closed (at a graceful shutdown, first thing), so
    /// nothing would ever serve this one, and SwiftNIO traps when a connection it handed to a server that no longer
    /// takes them becomes active ("Deinited NIOAsyncWriter without calling finish()", swift-nio issue 2637: seen once
    /// in this suite, a client connecting while a test server shut down). Closed here, the connection ends as one that
    /// never became active does, without a trap.
    func channelActive(context: ChannelHandlerContext) {
        guard listening(context.channel) else {
            context.close(promise: nil)
            return
        }
        context.fireChannelActive()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if let victim = registry.open(context.channel) {
            if victim === context.channel {
                context.close(promise: nil)
                return
            }
            victim.close(promise: nil)
        }
        arm(context, registry.limits.headerTimeout)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        registry.close(context.channel)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        registry.close(context.channel)
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !cutOff else { return }  // the rest of a read that overran the pipelining ceiling
        switch unwrapInboundIn(data) {
        case .head:
            requestsInFlight += 1
            guard requestsInFlight <= registry.limits.maximumPipelinedRequests else {
                cutOff = true
                context.close(promise: nil)
                return
            }
            // Waiting for a body is waiting for the client, whatever answers are owed before it (a slow body behind
            // a pipelined request would otherwise never make room).
            bodyOutstanding = true
            registry.enter(context.channel, .receivingBody, keepingSince: !headersSeen)
            headersSeen = true
            arm(context, registry.limits.bodyTimeout)
        case .body: break
        case .end:
            // The request is in: no deadline while it is answered; but when its answer already went out (an early
            // refusal before the body came), the connection is idle again.
            bodyOutstanding = false
            if requestsInFlight == 0 {
                registry.enter(context.channel, .waitingForHeaders)
                arm(context, registry.limits.idleTimeout)
            } else {
                registry.enter(context.channel, .answering)
                timer?.cancel()
                timer = nil
            }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            requestsInFlight = max(0, requestsInFlight - 1)
            // A body still arriving (after an early refusal) keeps its deadline and its place among the waiting.
            if requestsInFlight == 0, !bodyOutstanding {
                registry.enter(context.channel, .waitingForHeaders)
                arm(context, registry.limits.idleTimeout)
            }
        }
        context.write(data, promise: promise)
    }

    /// Closes the connection unless the timer is re-armed or cancelled within `delay`.
    private func arm(_ context: ChannelHandlerContext, _ delay: Duration) {
        timer?.cancel()
        let channel = context.channel
        timer = context.eventLoop.scheduleTask(in: .nanoseconds(Self.nanoseconds(delay))) {
            channel.close(promise: nil)
        }
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }
}
