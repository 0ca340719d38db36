import AsyncHTTPClient
import Foundation
import IAPCore
public import IAPSimulator
import NIOCore
import NIOHTTP1

/// Runs a Retention Messaging performance test the way the App Store does: `POST`s of `{"signedPayload": JWS}` to
/// the realtime URL, at most `maxConcurrentRequests` at a time, each answer judged and timed, until `totalRequests`
/// have ended or `totalDuration` has passed.
///
/// An answer counts as `SUCCESS` when it is HTTP 200 within `responseTimeThreshold` with a body that holds exactly one
/// of Apple's four choices (`message`, `alternateProduct`, `promotionalOffer`, `advancedCommerceInfo`), each naming a
/// `messageIdentifier` UUID. Anything else gets the send-attempt result Apple uses for it: `TIMED_OUT`,
/// `UNSUCCESSFUL_HTTP_RESPONSE_CODE` (redirects included: they are not followed), `INVALID_RESPONSE`, `NO_RESPONSE`,
/// `PREMATURE_CLOSE`, `TLS_ISSUE` or `OTHER`.
public struct RealtimeURLTester: Sendable {
    /// The largest answer read; Apple's answers are a few hundred bytes.
    static let answerLimit = 64 << 10

    public init() {}

    /// Sends every request of `run`, records each outcome in `simulator` and returns the run as it ended.
    @discardableResult
    public func run(_ run: PerformanceTestRun, on simulator: AppStoreSimulator) async -> PerformanceTestRun {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.timeout.connect = .milliseconds(run.configuration.responseTimeThreshold)
        // A connection refused is an answer: no response. (Retrying until the deadline made a closed port a time-out
        // whenever the first refusal came after it, as it did under load.)
        configuration.connectionPool.retryConnectionEstablishment = false
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let deadline = ContinuousClock.now + .milliseconds(run.configuration.totalDuration)
        let total = run.configuration.totalRequests
        let width = max(1, min(run.configuration.maxConcurrentRequests, total))
        await withTaskGroup(of: PerformanceTestOutcome.self) { group in
            var started = 0
            func startNext() {
                guard started < total else { return }
                started += 1
                group.addTask { await send(run, on: simulator, client: client, deadline: deadline) }
            }
            for _ in 0..<width { startNext() }
            for await outcome in group {
                simulator.recordPerformanceTestOutcome(outcome, requestID: run.requestID)
                startNext()
            }
        }
        try? await client.shutdown()
        return (try? simulator.performanceTest(run.requestID)) ?? run
    }

    private func send(
        _ run: PerformanceTestRun, on simulator: AppStoreSimulator, client: HTTPClient,
        deadline: ContinuousClock.Instant
    ) async -> PerformanceTestOutcome {
        let threshold = run.configuration.responseTimeThreshold
        let start = ContinuousClock.now
        guard start < deadline else { return PerformanceTestOutcome(result: "TIMED_OUT", milliseconds: threshold) }
        func elapsed() -> Int64 {
            let duration = ContinuousClock.now - start
            return duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        }
        let body: [UInt8]
        do { body = try simulator.signedRealtimeRequest(for: run) } catch {
            return PerformanceTestOutcome(result: "OTHER", milliseconds: 0)
        }
        var request = HTTPClientRequest(url: run.target)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: body))
        let wait = min(
            TimeAmount.milliseconds(threshold), TimeAmount.nanoseconds(max(0, Self.nanoseconds(deadline - start))))
        do {
            let ends = ContinuousClock.now + .nanoseconds(wait.nanoseconds)
            let response = try await client.execute(request, timeout: wait)
            let answer = try await withDeadline(ends) { try await response.body.collect(upTo: Self.answerLimit) }
            let milliseconds = elapsed()
            guard milliseconds <= threshold else {
                return PerformanceTestOutcome(result: "TIMED_OUT", milliseconds: milliseconds)
            }
            guard response.status == .ok else {
                return PerformanceTestOutcome(result: "UNSUCCESSFUL_HTTP_RESPONSE_CODE", milliseconds: milliseconds)
            }
            let valid = Self.isRetentionAnswer(Array(buffer: answer))
            return PerformanceTestOutcome(result: valid ? "SUCCESS" : "INVALID_RESPONSE", milliseconds: milliseconds)
        } catch {
            return PerformanceTestOutcome(result: Self.sendAttemptResult(for: error), milliseconds: elapsed())
        }
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }

    /// Whether an answer body is a `RealtimeResponseBody`: a JSON object with exactly one of the four choices, each an
    /// object whose `messageIdentifier` is a UUID.
    static func isRetentionAnswer(_ bytes: [UInt8]) -> Bool {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else { return false }
        let choices = ["message", "alternateProduct", "promotionalOffer", "advancedCommerceInfo"].filter {
            object[$0] != nil
        }
        guard choices.count == 1, let choice = object[choices[0]] as? [String: Any],
            let identifier = choice["messageIdentifier"] as? String, UUID(uuidString: identifier) != nil
        else { return false }
        switch choices[0] {
        case "alternateProduct": return choice["productId"] is String
        case "promotionalOffer":
            return (choice["promotionalOfferSignatureV2"] is String)
                != (choice["promotionalOfferSignatureV1"] is [String: Any])
        case "advancedCommerceInfo": return choice["advancedCommerceData"] != nil
        default: return true
        }
    }

    /// Apple's send-attempt result for a request that failed before an answer.
    static func sendAttemptResult(for error: any Error) -> String {
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout: return "TIMED_OUT"
            case .remoteConnectionClosed: return "PREMATURE_CLOSE"
            case .tlsHandshakeTimeout: return "TLS_ISSUE"
            default: return "OTHER"
            }
        }
        if error is DeadlinePassed { return "TIMED_OUT" }
        if error is NIOTooManyBytesError { return "INVALID_RESPONSE" }
        let kind = String(reflecting: type(of: error))
        if error is IOError || kind.contains("NIOConnectionError") { return "NO_RESPONSE" }
        if kind.contains("SSL") { return "TLS_ISSUE" }
        return "OTHER"
    }
}
