public import Foundation
import HTTPTypes
import Hummingbird
import IAPSignedData
import Synchronization

/// An app backend's webhook endpoint on loopback, for tests: a real HTTP server that checks every delivery's
/// signature, keeps what arrived in order, and answers with the status the test sets (200 by default).
public final class WebhookReceiver: Sendable {
    /// One request as it arrived.
    public struct Delivery: Sendable {
        public var eventID: String
        public var type: String
        public var body: Data
        /// Whether `IAPKit-Signature` signs the body with the receiver's secret, at a time within five minutes.
        public var signatureValid: Bool
        /// The status the receiver answered.
        public var answered: Int

        /// The body as a JSON object.
        public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        /// The event's customer.
        public var customerID: String { json["customerId"] as? String ?? "" }
    }

    public let url: URL
    private let received = Mutex<[Delivery]>([])
    /// Statuses to answer next, in order; 200 once they run out.
    private let script = Mutex<[Int]>([])
    /// While true, requests wait before they are answered; `held` counts those waiting.
    private let holding = Mutex(false)
    private let waiting = Mutex(0)

    private init(url: URL) { self.url = url }

    /// Runs a receiver checking signatures with `secret` for the time of `body`, then stops it.
    public static func run<R: Sendable>(
        secret: String, path: String = "/hooks", _ body: @Sendable (WebhookReceiver) async throws -> R
    ) async throws -> R {
        let holder = Mutex<WebhookReceiver?>(nil)
        let router = Router()
        router.post(RouterPath(path)) { request, context -> Response in
            let bytes = try await request.body.collect(upTo: 1 << 20)
            let data = Data(bytes.readableBytesView)
            guard let receiver = holder.withLock({ $0 }) else { return Response(status: .serviceUnavailable) }
            if receiver.holding.withLock({ $0 }) {
                receiver.waiting.withLock { $0 += 1 }
                while receiver.holding.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
                receiver.waiting.withLock { $0 -= 1 }
            }
            let status = receiver.script.withLock { $0.isEmpty ? 200 : $0.removeFirst() }
            let valid =
                (try? WebhookSignature.verify(
                    body: data, header: request.headers[HTTPField.Name(WebhookSignature.header)!], secrets: [secret],
                    now: Date())) != nil
            receiver.received.withLock {
                $0.append(
                    Delivery(
                        eventID: request.headers[HTTPField.Name(WebhookSignature.eventIDHeader)!] ?? "",
                        type: request.headers[HTTPField.Name("IAPKit-Event-Type")!] ?? "", body: data,
                        signatureValid: valid, answered: status))
            }
            return Response(status: .init(code: status))
        }
        return try await LoopbackServer.serve({ onRunning in
            Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: onRunning, logger: LoopbackServer.logger)
        }) { port in
            let receiver = WebhookReceiver(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
            holder.withLock { $0 = receiver }
            // Held requests are let go, so the graceful shutdown after `body` need not wait for them.
            defer { receiver.hold(false) }
            return try await body(receiver)
        }
    }

    /// Everything that arrived, in order (retries included).
    public var deliveries: [Delivery] { received.withLock { $0 } }

    /// The deliveries answered 2xx, in order.
    public var accepted: [Delivery] { deliveries.filter { (200..<300).contains($0.answered) } }

    /// Holds every request unanswered (`true`) until released (`false`).
    public func hold(_ on: Bool) { holding.withLock { $0 = on } }

    /// How many requests are held now.
    public var held: Int { waiting.withLock { $0 } }

    /// Answers the next requests with these statuses, in order.
    public func answerNext(_ statuses: [Int]) { script.withLock { $0 += statuses } }

    /// Waits (polling, at most `timeout`) until `condition` holds for the accepted deliveries; answers them.
    @discardableResult
    public func waitUntil(
        timeout: Duration = .seconds(60), _ condition: @Sendable ([Delivery]) -> Bool
    ) async throws -> [Delivery] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let accepted = self.accepted
            if condition(accepted) { return accepted }
            try await Task.sleep(for: .milliseconds(20))
        }
        return accepted
    }
}
