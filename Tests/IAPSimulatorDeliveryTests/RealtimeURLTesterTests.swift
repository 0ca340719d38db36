import Foundation
import IAPSimulator
import IAPTestSupport
import Synchronization
import Testing

@testable import IAPSimulatorDelivery

/// Performance tests of a developer's "Get Retention Message" endpoint, run over real loopback sockets: every request
/// signed like the App Store's, answers judged by Apple's rules, failures named with Apple's send-attempt results.
@Suite("Realtime URL tester", .serialized)
struct RealtimeURLTesterTests {
    static let configuration = PerformanceTestConfiguration(
        maxConcurrentRequests: 4, totalRequests: 12, totalDuration: 60_000, responseTimeThreshold: 30_000,
        successRateThreshold: 95)

    func run(against url: String, configuration: PerformanceTestConfiguration = configuration) async throws
        -> PerformanceTestRun
    {
        let store = try WebhookDeliveryTests().simulator()
        try store.createAccount("ana")
        let gold = try #require(try store.purchase("com.example.florist.vip.gold", account: "ana").transaction)
        try store.configureRealtimeURL(url)
        let run = try store.startPerformanceTest(
            originalTransactionID: gold.transactionID, configuration: configuration)
        return await RealtimeURLTester().run(run, on: store)
    }

    @Test func aGoodEndpointPasses() async throws {
        let answer = #"{"message":{"messageIdentifier":"\#(UUID().uuidString)"}}"#
        let server = try RecordingServer(answer: Array(answer.utf8))
        let ended = try await run(against: server.url.absoluteString)
        try await server.shutdown()
        #expect(ended.result == .pass && ended.successRate == 100 && ended.pendingCount == 0, "\(ended.failures)")
        let requests = server.requests.withLock { $0 }
        #expect(requests.count == 12)
        let signed = Set(
            requests.compactMap {
                (try? JSONSerialization.jsonObject(with: Data($0.body)) as? [String: String])?["signedPayload"]
            })
        #expect(signed.count == 12, "each request is signed anew, with its own request identifier")
    }

    @Test func badAnswersFailWithApplesResults() async throws {
        let statuses = try RecordingServer(statuses: Array(repeating: 503, count: 12))
        let refused = try await run(against: statuses.url.absoluteString)
        try await statuses.shutdown()
        #expect(refused.result == .fail)
        #expect(refused.failures == ["UNSUCCESSFUL_HTTP_RESPONSE_CODE": 12])

        let nonsense = try RecordingServer(answer: Array(#"{"message":{}}"#.utf8))
        let invalid = try await run(against: nonsense.url.absoluteString)
        try await nonsense.shutdown()
        #expect(invalid.failures == ["INVALID_RESPONSE": 12] && invalid.successRate == 0)

        // A port nobody listens on.
        let closed = try RecordingServer()
        let url = closed.url.absoluteString
        try await closed.shutdown()
        // The refusal fails each request at once, well within the 30 s threshold: the tester does not retry
        // connecting until the deadline (with retries, a 200 ms threshold gave TIMED_OUT under load in CI).
        let clock = ContinuousClock()
        let started = clock.now
        let unanswered = try await run(against: url)
        #expect(clock.now - started < .seconds(20))
        #expect(
            unanswered.result == .fail && unanswered.failures.keys.sorted() == ["NO_RESPONSE"], "\(unanswered.failures)"
        )
    }

    @Test func answersAreJudgedAsTheAppStoreJudgesThem() {
        let id = UUID().uuidString
        let good = [
            #"{"message":{"messageIdentifier":"\#(id)"}}"#,
            #"{"alternateProduct":{"messageIdentifier":"\#(id)","productId":"p"}}"#,
            #"{"promotionalOffer":{"messageIdentifier":"\#(id)","promotionalOfferSignatureV2":"a.b.c"}}"#,
            #"{"advancedCommerceInfo":{"messageIdentifier":"\#(id)","advancedCommerceData":"x"}}"#,
        ]
        let bad = [
            "", "[]", "{}", #"{"message":{}}"#, #"{"message":{"messageIdentifier":"nope"}}"#,
            #"{"message":{"messageIdentifier":"\#(id)"},"alternateProduct":{"messageIdentifier":"\#(id)","productId":"p"}}"#,
            #"{"alternateProduct":{"messageIdentifier":"\#(id)"}}"#,
            #"{"promotionalOffer":{"messageIdentifier":"\#(id)"}}"#,
        ]
        for body in good { #expect(RealtimeURLTester.isRetentionAnswer(Array(body.utf8)), "\(body)") }
        for body in bad { #expect(!RealtimeURLTester.isRetentionAnswer(Array(body.utf8)), "\(body)") }
    }
}
