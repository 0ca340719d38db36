import AsyncAlgorithms
import HTTPTypes
import Hummingbird
import IAPServer
import IAPSimulator
import NIOCore
import ServiceLifecycle

/// `Transaction.updates` over HTTP: a `text/event-stream` (server-sent events, as a browser's `EventSource` reads
/// them) of one account's signed transactions.
///
/// The account's unfinished transactions come first, then every transaction the store makes or changes for it while
/// the stream is open (renewals, approvals, refunds, purchases on other devices), each as
///
/// ```text
/// event: transaction
/// id: 2000000000000042
/// data: eyJhbGciOiJFUzI1NiIs...
/// ```
///
/// An idle stream sends a comment line every `heartbeat`, so a client can tell a quiet store from a dead connection.
/// Nothing is buffered here: each event waits until the one before is written (the unfinished transactions are read
/// one by one as the client takes them), so a slow reader only fills the simulator's bounded buffer, and the
/// simulator ends it (it reconnects and gets the unfinished ones again). The stream also ends when the client goes
/// away or the server shuts down gracefully.
struct TransactionUpdateEvents: Sendable {
    let updates: TransactionUpdates
    let heartbeat: Duration

    private enum Event: Sendable {
        case transaction(SimulatorTransaction)
        case heartbeat
    }

    func response() -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in try await stream(to: &writer) })
    }

    private func stream(to writer: inout any ResponseBodyWriter) async throws {
        let events = AsyncChannel<Event>()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await transaction in updates { await events.send(.transaction(transaction)) }
                events.finish()
            }
            group.addTask {
                while !Task.isCancelled {
                    try await Task.sleep(for: heartbeat)
                    await events.send(.heartbeat)
                }
            }
            // A comment at once: the client knows the subscription is live before anything happens.
            try await writer.write(ByteBuffer(string: ": subscribed\n\n"))
            for await event in events.cancelOnGracefulShutdown() {
                switch event {
                case .transaction(let transaction):
                    try await writer.write(
                        ByteBuffer(
                            string: "event: transaction\nid: \(transaction.transactionID)\ndata: \(transaction.jws)\n\n"
                        ))
                case .heartbeat:
                    try await writer.write(ByteBuffer(string: ": heartbeat\n\n"))
                }
            }
            group.cancelAll()
        }
        try await writer.finish(nil)
    }
}
