import Foundation
import Logging
import NIOCore
import NIOHTTPTypes
import Synchronization

/// Time limits and a ceiling on connections, so slow or idle clients cannot hold the server:
/// - a new connection must deliver a request's headers within ``headerTimeout``, and a kept-alive one its next
///   request's headers within ``idleTimeout`` of the last answer;
/// - a request's body must arrive within ``bodyTimeout`` of its headers;
/// - at most ``maximumConnections`` are open: past it, the connection that has waited longest for a request's headers
///   is closed to make room (a slow-connection flood evicts itself, and `/health` keeps answering); when every
///   connection is busy with a request, the new one is closed.
///
/// Answers being written (a long update stream included) are never cut.
public struct ConnectionLimits: Sendable, Equatable {
    public var headerTimeout: Duration
    public var bodyTimeout: Duration
    public var idleTimeout: Duration
    public var maximumConnections: Int

    public init(
        headerTimeout: Duration = .seconds(10), bodyTimeout: Duration = .seconds(30),
        idleTimeout: Duration = .seconds(60),
        maximumConnections: Int = ConnectionLimits.defaultMaximumConnections
    ) {
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.idleTimeout = idleTimeout
        self.maximumConnections = maximumConnections
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
    struct Entry {
        let channel: any Channel
        /// When the connection began waiting for a request's headers, or nil while it serves a request.
        var waitingSince: NIODeadline?
    }

    let limits: ConnectionLimits
    private let entries = Mutex<[ObjectIdentifier: Entry]>([:])

    init(limits: ConnectionLimits) { self.limits = limits }

    var count: Int { entries.withLock { $0.count } }

    /// Registers a new connection; returns the connection to close to stay within the ceiling, if any (the one that
    /// has waited longest for headers, or the new one when every other is busy).
    func open(_ channel: any Channel) -> (any Channel)? {
        entries.withLock { entries in
            entries[ObjectIdentifier(channel)] = Entry(channel: channel, waitingSince: .now())
            guard entries.count > limits.maximumConnections else { return nil }
            let idle = entries.filter { $0.key != ObjectIdentifier(channel) && $0.value.waitingSince != nil }
            let victim = idle.min { $0.value.waitingSince! < $1.value.waitingSince! }?.value.channel ?? channel
            entries[ObjectIdentifier(victim)] = nil
            return victim
        }
    }

    func waiting(_ channel: any Channel, _ waiting: Bool) {
        entries.withLock { $0[ObjectIdentifier(channel)]?.waitingSince = waiting ? .now() : nil }
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
        switch unwrapInboundIn(data) {
        case .head:
            requestsInFlight += 1
            registry.waiting(context.channel, false)
            arm(context, registry.limits.bodyTimeout)
        case .body: break
        case .end:
            // The request is in: no deadline while it is answered; but when its answer already went out (an early
            // refusal before the body came), the connection is idle again.
            if requestsInFlight == 0 {
                registry.waiting(context.channel, true)
                arm(context, registry.limits.idleTimeout)
            } else {
                timer?.cancel()
                timer = nil
            }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            requestsInFlight = max(0, requestsInFlight - 1)
            if requestsInFlight == 0 {
                registry.waiting(context.channel, true)
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
