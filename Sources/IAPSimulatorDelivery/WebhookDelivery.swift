public import AsyncHTTPClient
public import Foundation
import IAPCatalog
import IAPCore
public import IAPSimulator
import NIOCore
import NIOHTTP1
import Synchronization

/// When the App Store tries a notification again after a failed delivery.
///
/// Apple retries a notification that did not get an HTTP 200 five times, 1, 12, 24, 48 and 72 hours after the
/// previous attempt. A simulation running faster than real time compresses that schedule by the same factor.
public struct RetrySchedule: Hashable, Sendable {
    /// The wait before each retry, in order; its length is the number of retries.
    public var delays: [Duration]

    public init(delays: [Duration]) { self.delays = delays }

    /// Apple's schedule divided by `factor` (1 is real time).
    public static func apple(compressedBy factor: Double = 1) -> RetrySchedule {
        let hours: [Double] = [1, 12, 24, 48, 72]
        return RetrySchedule(delays: hours.map { .milliseconds(Int64(($0 * 3_600_000 / max(factor, 1)).rounded())) })
    }

    /// Apple's schedule compressed as much as a time rate compresses a month (real time: not at all).
    public static func apple(for rate: TimeRate) -> RetrySchedule {
        let start = Date(timeIntervalSince1970: 0)
        let month = SubscriptionPeriod(value: 1, unit: .month)
        let accelerated = rate.advance(start, by: month).timeIntervalSince(start)
        let real = TimeRate.realTime.advance(start, by: month).timeIntervalSince(start)
        return apple(compressedBy: real / accelerated)
    }
}

/// One attempt to deliver a notification.
public struct DeliveryAttempt: Hashable, Sendable {
    public let notificationUUID: String
    /// 0 for the first attempt, then 1...5 for the retries.
    public let retry: Int
    /// The HTTP status the endpoint answered, or nil when the request failed (no connection, timeout).
    public let status: Int?
    /// Why the attempt failed, when it did.
    public let failure: String?

    public var succeeded: Bool { status == 200 }
}

/// Posts a simulator's notifications to a webhook the way the App Store does: `POST` with the JSON body
/// `{"signedPayload":"..."}`, success only on HTTP 200, retries on the (compressed) Apple schedule.
///
/// Attach it to a simulator; every notification issued afterwards is queued and delivered in order of issue (retries
/// run alongside later notifications, as Apple's do). ``drain()`` waits until every delivery has succeeded or run out
/// of retries.
public final class WebhookDelivery: Sendable {
    public let url: URL
    public let schedule: RetrySchedule
    private let client: HTTPClient
    private let timeout: TimeAmount
    private let state = Mutex<State>(State())
    private let queue: AsyncStream<SimulatorNotification>.Continuation
    private let worker: Task<Void, Never>

    private struct State {
        var attempts: [DeliveryAttempt] = []
        var outstanding = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    /// A delivery to `url`; `client` defaults to the shared HTTP client.
    public init(
        url: URL, schedule: RetrySchedule = .apple(), client: HTTPClient = .shared, timeout: Duration = .seconds(10)
    ) {
        self.url = url
        self.schedule = schedule
        self.client = client
        self.timeout = .nanoseconds(
            timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000)
        let (stream, continuation) = AsyncStream.makeStream(of: SimulatorNotification.self)
        self.queue = continuation
        let box = WeakBox()
        self.worker = Task {
            for await notification in stream {
                guard let delivery = box.value else { break }
                await delivery.deliver(notification, retry: 0)
            }
        }
        box.value = self
    }

    deinit {
        queue.finish()
        worker.cancel()
    }

    /// Sends every notification `simulator` issues from now on.
    public func attach(to simulator: AppStoreSimulator) {
        simulator.addNotificationSink { [weak self] notification in self?.enqueue(notification) }
    }

    /// Queues one notification.
    public func enqueue(_ notification: SimulatorNotification) {
        state.withLock { $0.outstanding += 1 }
        queue.yield(notification)
    }

    /// Every attempt so far, in the order they finished.
    public var attempts: [DeliveryAttempt] { state.withLock { $0.attempts } }

    /// Waits until every queued notification was delivered or ran out of retries.
    public func drain() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.outstanding == 0 { return true }
                state.waiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private func deliver(_ notification: SimulatorNotification, retry: Int) async {
        let attempt = await post(notification, retry: retry)
        state.withLock { $0.attempts.append(attempt) }
        if !attempt.succeeded, retry < schedule.delays.count {
            let delay = schedule.delays[retry]
            Task {
                try? await Task.sleep(for: delay)
                await self.deliver(notification, retry: retry + 1)
            }
            return
        }
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.outstanding -= 1
            guard state.outstanding == 0 else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private func post(_ notification: SimulatorNotification, retry: Int) async -> DeliveryAttempt {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: notification.requestBody))
        do {
            let ends = ContinuousClock.now + .nanoseconds(timeout.nanoseconds)
            let response = try await client.execute(request, timeout: timeout)
            _ = try? await withDeadline(ends) { try await response.body.collect(upTo: 1 << 20) }
            let status = Int(response.status.code)
            return DeliveryAttempt(
                notificationUUID: notification.uuid, retry: retry, status: status,
                failure: status == 200 ? nil : "HTTP \(status)")
        } catch {
            return DeliveryAttempt(
                notificationUUID: notification.uuid, retry: retry, status: nil, failure: String(describing: error))
        }
    }
}

/// The worker's weak reference to its delivery, set once during initialisation and only read afterwards.
private final class WeakBox: @unchecked Sendable {
    weak var value: WebhookDelivery?
}
