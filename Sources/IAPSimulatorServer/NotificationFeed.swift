import IAPCore
import IAPServer
import IAPSignedData
import IAPSimulator
import Logging

/// The simulator's notifications, applied by the server in the order the simulator made them (as if Apple had
/// posted each one to `/v1/notifications`); each application is recorded as the notification's send attempt, so the
/// simulated notification history tells what reached the server.
///
/// Until the change that made it is saved, while the database does not answer, or while the store's lease is not
/// confirmed lately, the notification at the head waits and is tried again (after 1 s, then twice as long each time,
/// at most 5 s apart) and the others wait behind it, in order; such tries are not send attempts. A store that lost its
/// lease drops what it still has queued. A notification the server refuses for what it is gets an unsuccessful
/// attempt. Stopping ends the tries: what was not applied has no attempt and is sent again by the next server that
/// sells.
final class NotificationFeed: Sendable {
    private let continuation: AsyncStream<SimulatorNotification>.Continuation
    private let worker: Task<Void, Never>
    private let stopping: Locked<Bool>

    /// Whether a notification without a successful attempt is sent again when a server starts selling the store: one
    /// that never reached the server, or was refused fewer than five times (Apple's retries, here one per start).
    static func sendsAgain(_ attempts: [NotificationSendAttempt]) -> Bool {
        !attempts.contains { $0.result == "SUCCESS" } && attempts.count < 5
    }

    /// Whether the feed applies notifications now.
    enum Gate: Sendable {
        /// It does.
        case open
        /// Not yet: the change that made it is not saved, or the store's lease is not confirmed lately (another server
        /// may be taking it over); the notification waits, as for a database that does not answer.
        case held
        /// Never: the store lost its lease, and what it made after its last save is not the store's; dropped.
        case closed
    }

    /// - Parameter gate: whether a notification is applied now, waits, or is dropped.
    init(
        service: ValidationService, simulator: AppStoreSimulator, logger: Logger,
        gate: @escaping @Sendable () async -> Gate = { .open }
    ) {
        let (stream, continuation) = AsyncStream.makeStream(of: SimulatorNotification.self)
        self.continuation = continuation
        let stopping = Locked(false)
        self.stopping = stopping
        worker = Task {
            for await notification in stream {
                let body = String(decoding: notification.requestBody, as: UTF8.self)
                var delay = Duration.seconds(1)
                /// Waits before the next try, in slices, so a stop need not wait out the delay.
                func pause() async {
                    let until = ContinuousClock.now + delay
                    while ContinuousClock.now < until, !stopping.withLock({ $0 }) {
                        try? await Task.sleep(for: .milliseconds(100))
                    }
                    delay = min(delay * 2, .seconds(5))
                }
                tries: while true {
                    switch await gate() {
                    case .closed: break tries
                    case .held:
                        if stopping.withLock({ $0 }) { break tries }
                        await pause()
                        continue tries
                    case .open: break
                    }
                    do {
                        let outcome = try await service.receiveNotification(
                            signedPayload: notification.signedPayload, body: body, receivedAt: notification.date)
                        logger.info(
                            "simulator notification applied",
                            metadata: [
                                "type": "\(notification.type.rawValue)",
                                "subtype": "\(notification.subtype?.rawValue ?? "")",
                                "uuid": "\(notification.uuid)", "outcome": "\(outcome.rawValue)",
                            ])
                        simulator.recordSendAttempt(notificationUUID: notification.uuid, result: "SUCCESS")
                    } catch let error as ServiceError where error.kind == .unavailable && error.code != "storageCorrupt"
                    {
                        guard !stopping.withLock({ $0 }) else { break tries }
                        if delay == .seconds(1) {
                            logger.warning(
                                "a simulator notification waits for the database: it is tried again until it answers",
                                metadata: ["uuid": "\(notification.uuid)", "error": "\(error)"])
                        }
                        await pause()
                        continue tries
                    } catch {
                        logger.error(
                            "simulator notification refused",
                            metadata: ["uuid": "\(notification.uuid)", "error": "\(error)"])
                        simulator.recordSendAttempt(
                            notificationUUID: notification.uuid, result: "UNSUCCESSFUL_HTTP_RESPONSE_CODE")
                    }
                    break tries
                }
            }
        }
    }

    func send(_ notification: SimulatorNotification) { continuation.yield(notification) }

    /// Ends the feed: the notifications queued are tried once more each (none again while the database does not
    /// answer).
    func finish() {
        stopping.withLock { $0 = true }
        continuation.finish()
    }

    func drained() async { await worker.value }
}
