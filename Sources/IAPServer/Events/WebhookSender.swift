public import AsyncHTTPClient
public import Foundation
import IAPCore
public import IAPEntitlements
import IAPServerAPI
import IAPSignedData
public import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// Wakes the sender when this instance stored events, so a delivery leaves at once rather than at the next poll, and
/// counts the requests this instance answered, so the sender can keep behind them while they come fast
/// (`DeliveryPacer`).
public final class OutboxSignal: Sendable {
    private let state = Mutex<(pending: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))
    private let requestCount = Atomic<Int>(0)

    public init() {}

    /// A request arrived.
    public func countRequest() { requestCount.add(1, ordering: .relaxed) }

    /// The requests counted so far.
    public var requests: Int { requestCount.load(ordering: .relaxed) }

    /// Something may be due.
    public func nudge() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns at the next nudge (at once if one came since the last wait), after `timeout`, or when cancelled. Only a
    /// nudge is remembered for the next wait: the timer that ends a wait leaves nothing behind (an earlier version had
    /// the cancelled timer nudge, so after the first real nudge every wait returned at once and an idle sender spun).
    package func wait(upTo timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: timeout) }
            group.addTask { await self.nextNudge() }
            await group.next()
            group.cancelAll()
        }
    }

    /// Returns at the next nudge, or when the task is cancelled.
    private func nextNudge() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    if state.pending {
                        state.pending = false
                        return true
                    }
                    // Cancelled before waiting: the handler below found no waiter to resume.
                    if Task.isCancelled { return true }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}

/// Sends the outbox's events to the apps' webhooks: leases what is due (one delivery per customer and endpoint at a
/// time, so a customer's events arrive in order), posts each signed with its app's secret (`WebhookSignature`),
/// and records every attempt: a 2xx is delivered; anything else (another status, a refused connection, a timeout) is
/// tried again after ``DeliverySettings/firstRetry``, twice as late each time (at most six hours apart), until
/// ``DeliverySettings/retryFor`` after the event, when it is given up (the console can retry it).
///
/// Several instances on one database each run one: a lease keeps a delivery with one of them; a lease whose instance
/// died (a kill -9) ends after ``DeliverySettings/lease`` and another instance picks the delivery up.
public struct WebhookSender: Sendable {
    let storage: any ServerStorage
    /// The secret of each app with webhooks, by bundle id.
    let secrets: [String: String]
    /// The App Store Server API client of each app that answers consumption requests, by bundle id.
    let serverAPIs: [String: ServerAPIClient]
    /// Where answers to Apple's consumption requests go: the app's App Store Server API, not a webhook.
    public static let consumptionEndpoint = "appstore:consumption"
    let settings: DeliverySettings
    let signal: OutboxSignal
    let client: HTTPClient
    let clock: @Sendable () -> Date
    let logger: Logger
    /// Names this instance in leases and attempts.
    public let instance: String
    /// A customer's entitlements at a moment, added to each event as it is sent (nil: events go without them).
    let entitlements: (@Sendable (CustomerKey, Date) async -> EntitlementSnapshot?)?
    /// What announces the writes left for later (``EventAnnouncer/defers``) before each lease (nil: none are).
    let announcer: EventAnnouncer?
    /// The sender's own storage failures, logged at most once in 10 s each (with the count held back): while the
    /// database is away every round fails, several times a second.
    let failures: FailureLog

    /// A sender for `service`'s apps, storage and signal, adding each event's entitlements from it.
    public init(
        service: ValidationService, settings: DeliverySettings, client: HTTPClient = .shared,
        clock: @escaping @Sendable () -> Date = { Date() }, logger: Logger,
        instance: String = WebhookSender.instanceName()
    ) {
        self.init(
            storage: service.storage, apps: service.appConfigurations, settings: settings,
            signal: service.outboxSignal, client: client, clock: clock, logger: logger, instance: instance,
            entitlements: { customer, moment in try? await service.entitlements(of: customer, at: moment) },
            announcer: service.announcer)
    }

    public init(
        storage: any ServerStorage, apps: [AppConfiguration], settings: DeliverySettings, signal: OutboxSignal,
        client: HTTPClient = .shared, clock: @escaping @Sendable () -> Date = { Date() }, logger: Logger,
        instance: String = WebhookSender.instanceName(),
        entitlements: (@Sendable (CustomerKey, Date) async -> EntitlementSnapshot?)? = nil,
        announcer: EventAnnouncer? = nil
    ) {
        self.entitlements = entitlements
        self.announcer = announcer
        self.storage = storage
        var secrets: [String: String] = [:]
        var serverAPIs: [String: ServerAPIClient] = [:]
        for app in apps {
            if let webhooks = app.webhooks { secrets[app.bundleID] = webhooks.secret }
            if app.consumptionAnswers != nil, let client = app.serverAPI { serverAPIs[app.bundleID] = client }
        }
        self.secrets = secrets
        self.serverAPIs = serverAPIs
        self.settings = settings
        self.signal = signal
        self.client = client
        self.clock = clock
        self.logger = logger
        failures = FailureLog(
            interval: 10_000_000_000,
            summary: { [logger] code, unlogged in
                logger.warning(
                    "storage failures of the sender not logged one by one",
                    metadata: ["code": "\(code)", "unloggedSinceLast": "\(unlogged)"])
            })
        self.instance = instance
    }

    /// Host name, process id and a random suffix.
    public static func instanceName() -> String {
        "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)-"
            + String(UInt32.random(in: 0...UInt32.max), radix: 16)
    }

    /// Whether any app has webhooks (else there is nothing to run).
    public var hasWork: Bool { !secrets.isEmpty || !serverAPIs.isEmpty }

    /// Sends until cancelled, keeping behind the requests while they come fast (`DeliveryPacer`).
    public func run() async {
        var pacer = DeliveryPacer(settings: settings, requests: signal.requests, now: .now)
        while !Task.isCancelled {
            let allowed = pacer.allowance(requests: signal.requests, now: .now, limit: settings.leaseBatch)
            guard allowed > 0 else {
                try? await Task.sleep(for: DeliveryPacer.busyPause)
                continue
            }
            let started = ContinuousClock.now
            let done = await sendDue(limit: allowed)
            pacer.spent(.now - started)
            if done == 0 { await signal.wait(upTo: settings.pollInterval) }
        }
    }

    /// One round: announces writes left for later (at most `limit`), leases what is due (at most `limit`, by default
    /// ``DeliverySettings/leaseBatch``), sends it, records the outcome. Answers how much it did: the writes announced
    /// and the deliveries attempted (0: nothing was waiting).
    @discardableResult
    public func sendDue(limit: Int? = nil) async -> Int {
        let limit = limit ?? settings.leaseBatch
        var announced = 0
        if let announcer {
            do { announced = try await storage.announceDeferred(by: announcer, limit: limit) } catch {
                warn("writes could not be announced", code: "announce", error)
            }
        }
        let now = clock()
        let leased: [LeasedDelivery]
        do {
            leased = try await storage.leaseDeliveries(
                now: now, leaseUntil: now.addingTimeInterval(settings.lease.seconds), instance: instance,
                limit: limit)
        } catch {
            warn("the outbox could not be read", code: "lease", error)
            return announced
        }
        guard !leased.isEmpty else { return announced }
        let reports = await withTaskGroup(of: DeliveryReport.self) { group in
            var reports: [DeliveryReport] = []
            var next = leased.makeIterator()
            for _ in 0..<settings.concurrency {
                guard let delivery = next.next() else { break }
                group.addTask { await self.send(delivery) }
            }
            for await report in group {
                reports.append(report)
                if let delivery = next.next() { group.addTask { await self.send(delivery) } }
            }
            return reports
        }
        do { try await storage.finishDeliveries(reports) } catch {
            // The leases run out and the deliveries go again: at least once.
            warn("delivery outcomes could not be recorded", code: "record", error)
        }
        return announced + leased.count
    }

    /// Logs a storage failure of the sender's own, unless one of its kind was logged in the last 10 s.
    private func warn(_ message: Logger.Message, code: String, _ error: StorageError) {
        guard case .log(let unlogged) = failures.admit(code) else { return }
        logger.warning(message, metadata: ["reason": "\(error.reason)", "unloggedSinceLast": "\(unlogged)"])
    }

    /// Posts one event to one endpoint and says what came of it.
    func send(_ delivery: LeasedDelivery) async -> DeliveryReport {
        if delivery.endpoint == Self.consumptionEndpoint { return await answerConsumptionRequest(delivery) }
        var body = delivery.event.body
        if let entitlements, let moment = EventEntitlements.moment(in: body),
            let snapshot = await entitlements(
                CustomerKey(bundleID: delivery.event.bundleID, id: delivery.event.customerID), moment)
        {
            body = EventEntitlements(
                entitledProductIds: snapshot.entitledProductIDs.sorted(), entitlements: snapshot
            ).appended(to: body)
        }
        let started = clock()
        var request = HTTPClientRequest(url: delivery.endpoint)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "iapkit-webhooks/1")
        request.headers.add(name: WebhookSignature.eventIDHeader, value: delivery.event.id)
        request.headers.add(name: "IAPKit-Event-Type", value: delivery.event.type)
        request.headers.add(
            name: WebhookSignature.header,
            value: WebhookSignature.sign(
                body: Array(body.utf8), secret: secrets[delivery.event.bundleID] ?? "", time: started))
        request.body = .bytes(ByteBuffer(string: body))
        var status: Int?
        var failure: String?
        let timer = ContinuousClock.now
        do {
            let response = try await client.execute(request, timeout: .init(settings.timeout))
            status = Int(response.status.code)
            // The answer's body is not read, only drained (up to 64 KiB) so the connection can be used again, within
            // the same timeout: an endpoint that sends its head and then nothing does not hold the sender.
            _ = try? await withDeadline(timer + settings.timeout) { try await response.body.collect(upTo: 64 << 10) }
            if !(200..<300).contains(Int(response.status.code)) { failure = "the endpoint answered \(response.status)" }
        } catch {
            failure = "\(error)"
        }
        return report(delivery, started: started, took: ContinuousClock.now - timer, status: status, failure: failure)
    }

    /// Sends Apple the consumption information queued for a refund request (`PUT
    /// /inApps/v2/transactions/consumption/{id}`). Apple's 202 is delivered; a refusal Apple would repeat (400, 403,
    /// 404) is given up at once; anything else is tried again until Apple's deadline.
    func answerConsumptionRequest(_ delivery: LeasedDelivery) async -> DeliveryReport {
        struct Body: Decodable {
            var transactionId: String
            var request: AppStoreServerAPI.ConsumptionRequest
        }
        let started = clock()
        let timer = ContinuousClock.now
        guard let client = serverAPIs[delivery.event.bundleID],
            let body = try? JSONDecoder().decode(Body.self, from: Data(delivery.event.body.utf8))
        else {
            return report(
                delivery, started: started, took: .zero, status: nil,
                failure: "no App Store Server API key is configured for \(delivery.event.bundleID)", permanent: true)
        }
        do {
            try await client.sendConsumptionInformation(body.transactionId, body.request)
            return report(delivery, started: started, took: ContinuousClock.now - timer, status: 202, failure: nil)
        } catch {
            return report(
                delivery, started: started, took: ContinuousClock.now - timer, status: error.httpStatus,
                failure: "\(error.code): \(error.reason)", permanent: [400, 403, 404].contains(error.httpStatus ?? 0))
        }
    }

    /// The outcome of one attempt: delivered, pending again after the backoff, or given up (past the event's last
    /// moment, or `permanent`).
    private func report(
        _ delivery: LeasedDelivery, started: Date, took elapsed: Duration, status: Int?, failure: String?,
        permanent: Bool = false
    ) -> DeliveryReport {
        let attempt = DeliveryAttempt(
            number: delivery.attempts + 1, startedAt: started, status: status, error: failure,
            milliseconds: Int(elapsed.seconds * 1_000), instance: instance)
        guard failure != nil else {
            ServerMetrics.delivery("delivered")
            return DeliveryReport(delivery: delivery, attempt: attempt, state: .delivered, nextAttempt: nil)
        }
        let delay = min(settings.firstRetry.seconds * pow(2, Double(delivery.attempts)), 6 * 3_600)
        let nextAttempt = started.addingTimeInterval(delay)
        let lastMoment =
            delivery.event.giveUpAt ?? delivery.event.createdAt.addingTimeInterval(settings.retryFor.seconds)
        if permanent || nextAttempt > lastMoment {
            ServerMetrics.delivery("failed")
            logger.warning(
                "an event was given up after its last attempt",
                metadata: ["event": "\(delivery.event.id)", "endpoint": "\(delivery.endpoint)"])
            return DeliveryReport(delivery: delivery, attempt: attempt, state: .failed, nextAttempt: nil)
        }
        ServerMetrics.delivery("retry")
        return DeliveryReport(delivery: delivery, attempt: attempt, state: .pending, nextAttempt: nextAttempt)
    }
}

/// Keeps deliveries behind requests while the server is busy: when this instance answered more than
/// ``DeliverySettings/busyRequests`` requests a second (over the last quarter of a second, or the 50 ms of a load that
/// just started), the sender's rounds may take at most ``DeliverySettings/busyShare`` of the time, in rounds of
/// ``busyBatch`` deliveries; below that rate it sends as fast as it can. Time, not a count of deliveries, is what is
/// shared: a delivery (its event derived and stored, the customer's entitlements read, the post, the outcome) costs
/// several cheap requests' worth, so a share per request would take more from fast requests than from slow ones.
/// Events wait in the outbox meanwhile (stored, so nothing is lost) and go once the load drops.
package struct DeliveryPacer {
    /// How long a sender out of allowance waits before it looks again.
    static let busyPause: Duration = .milliseconds(20)
    /// While busy, the deliveries of one round: a round costs a few writes whatever it carries (announcing, leasing,
    /// recording outcomes), so rounds are few and full rather than many and small.
    package static let busyBatch = 16
    /// The most time a sender saves up while it waits (its rounds then go back to back for at most this long).
    static let savedTime = 0.05
    let busyRequests: Double
    let share: Double
    private var windowStart: ContinuousClock.Instant
    private var windowRequests: Int
    private var rate = 0.0
    /// Seconds of rounds the sender may still spend while busy (negative after a round that took more).
    private var credit = 0.0
    private var credited: ContinuousClock.Instant
    /// Whether the last allowance was given while busy.
    private var busy = false

    package init(settings: DeliverySettings, requests: Int, now: ContinuousClock.Instant) {
        busyRequests = Double(settings.busyRequests)
        share = settings.busyShare
        windowStart = now
        windowRequests = requests
        credited = now
    }

    /// How many deliveries the sender's next round may make now (at most `limit`; 0: wait), given the requests
    /// counted so far.
    package mutating func allowance(requests: Int, now: ContinuousClock.Instant, limit: Int) -> Int {
        let elapsed = (now - windowStart).seconds
        // The window still open counts once it is long enough to tell: a load that starts is seen within 50 ms, not
        // after a quarter second at full speed.
        let recent = elapsed >= 0.05 ? Double(requests - windowRequests) / elapsed : 0
        if elapsed >= 0.25 {
            rate = recent
            windowStart = now
            windowRequests = requests
        }
        credit = min(credit + share * (now - credited).seconds, Self.savedTime)
        credited = now
        busy = busyRequests > 0 && max(rate, recent) >= busyRequests
        guard busy else {
            credit = 0
            return limit
        }
        return credit > 0 ? min(limit, Self.busyBatch) : 0
    }

    /// A round ended after `duration` (counted against the share when it was made while busy).
    package mutating func spent(_ duration: Duration) {
        if busy { credit -= duration.seconds }
    }
}

extension Duration {
    /// The duration in seconds, with fractions.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

extension TimeAmount {
    init(_ duration: Duration) {
        self = .nanoseconds(Int64(duration.seconds * 1e9))
    }
}
