import AsyncAlgorithms
import HTTPTypes
import Hummingbird
import IAPServer
import IAPSimulator
import NIOCore
import ServiceLifecycle

/// A `text/event-stream` answer (server-sent events, as a browser's `EventSource` reads them): one event per element
/// of `events`, written as `render` says, e.g. `Transaction.updates` over HTTP:
///
/// ```text
/// event: transaction
/// id: 2000000000000042
/// data: eyJhbGciOiJFUzI1NiIs...
/// ```
///
/// An idle stream sends a comment line every `heartbeat`, so a client can tell a quiet store from a dead connection.
/// Nothing is buffered here: each event waits until the one before is written, so a slow reader only fills the
/// source's own bounded buffer. The stream ends when the source ends, the client goes away or the server shuts down
/// gracefully.
struct ServerSentEvents<Events: AsyncSequence & Sendable>: Sendable
where Events.Element: Sendable, Events.Failure == Never {
    let events: Events
    let heartbeat: Duration
    /// One event's lines (`event:`, `id:`, `data:`), without the blank line that ends it.
    let render: @Sendable (Events.Element) -> String

    private enum Beat: Sendable {
        case event(Events.Element)
        case heartbeat
    }

    func response() -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in try await stream(to: &writer) })
    }

    private func stream(to writer: inout any ResponseBodyWriter) async throws {
        let beats = AsyncChannel<Beat>()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in events { await beats.send(.event(event)) }
                beats.finish()
            }
            group.addTask {
                while !Task.isCancelled {
                    try await Task.sleep(for: heartbeat)
                    await beats.send(.heartbeat)
                }
            }
            // A comment at once: the client knows the subscription is live before anything happens.
            try await writer.write(ByteBuffer(string: ": subscribed\n\n"))
            for await beat in beats.cancelOnGracefulShutdown() {
                switch beat {
                case .event(let event): try await writer.write(ByteBuffer(string: render(event) + "\n\n"))
                case .heartbeat: try await writer.write(ByteBuffer(string: ": heartbeat\n\n"))
                }
            }
            group.cancelAll()
        }
        try await writer.finish(nil)
    }
}

extension ServerSentEvents where Events == TransactionUpdates {
    /// `Transaction.updates` over HTTP: the account's unfinished transactions first (read one by one as the client
    /// takes them), then every transaction the store makes or changes for it while the stream is open (renewals,
    /// approvals, refunds, purchases on other devices), each as `event: transaction`, its id, and the signed
    /// transaction as data. A reader too slow for the simulator's bounded buffer is dropped; it reconnects and gets
    /// the unfinished ones again.
    init(transactions: TransactionUpdates, heartbeat: Duration) {
        self.init(events: transactions, heartbeat: heartbeat) { transaction in
            "event: transaction\nid: \(transaction.transactionID)\ndata: \(transaction.jws)"
        }
    }
}

extension ServerSentEvents where Events == AsyncStream<String> {
    /// `Storefront.updates` over HTTP: the account's storefront at once, then each new one, as `event: storefront`
    /// with the country code (ISO 3166-1 alpha-3) as data.
    init(storefronts: AsyncStream<String>, heartbeat: Duration) {
        self.init(events: storefronts, heartbeat: heartbeat) { "event: storefront\ndata: \($0)" }
    }
}
