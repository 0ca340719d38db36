import ArgumentParser
import AsyncHTTPClient
import Crypto
import Foundation
import IAPCatalog
import IAPKitCLI
import IAPSignedData
import IAPSimulator
import IAPSimulatorDelivery
import IAPTestSupport
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization
import Testing
import _CryptoExtras

/// A real HTTP server on a loopback socket that records every request body and answers with scripted statuses
/// (then 200), each with the same body.
final class RecordingServer: Sendable {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let channel: any Channel
    let requests = Mutex<[(path: String, body: [UInt8])]>([])
    let script: Mutex<[UInt]>
    let answer: [UInt8]

    init(statuses: [UInt] = [], answer: [UInt8] = []) throws {
        script = Mutex(statuses)
        self.answer = answer
        let box = ServerBox()
        channel = try ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(RecordingHandler(server: box))
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
        box.server = self
    }

    var url: URL { URL(string: "http://127.0.0.1:\(channel.localAddress!.port!)/notifications")! }

    func record(path: String, body: [UInt8]) -> UInt {
        requests.withLock { $0.append((path, body)) }
        return script.withLock { $0.isEmpty ? 200 : $0.removeFirst() }
    }

    func shutdown() async throws {
        try await channel.close()
        try await group.shutdownGracefully()
    }
}

final class ServerBox: @unchecked Sendable {
    weak var server: RecordingServer?
}

final class RecordingHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    let server: ServerBox
    var path = ""
    var body: [UInt8] = []

    init(server: ServerBox) { self.server = server }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            path = head.uri
            body = []
        case .body(var buffer):
            body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            let status = server.server?.record(path: path, body: body) ?? 500
            let answer = server.server?.answer ?? []
            var headers = HTTPHeaders()
            headers.add(name: "Content-Length", value: String(answer.count))
            let head = HTTPResponseHead(
                version: .http1_1, status: HTTPResponseStatus(statusCode: Int(status)), headers: headers)
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            if !answer.isEmpty {
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: answer)))), promise: nil)
            }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}

@Suite("Webhook delivery", .serialized)
struct WebhookDeliveryTests {
    static let pki = SimulatorTestKeys.pki

    func simulator() throws -> AppStoreSimulator {
        try AppStoreSimulator(
            catalog: FloristCatalog.catalog, configuration: SimulatorConfiguration(bundleID: "com.example.florist"),
            pki: Self.pki)
    }

    @Test func notificationsArePostedAsApplePostsThem() async throws {
        let server = try RecordingServer()
        let store = try simulator()
        let delivery = WebhookDelivery(url: server.url)
        delivery.attach(to: store)
        try store.createAccount("ana")
        _ = try store.purchase(FloristCatalog.flowers, account: "ana")
        _ = try store.purchase(FloristCatalog.gold, account: "ana")
        try store.advance(by: 8 * 86_400)
        await delivery.drain()

        let requests = server.requests.withLock { $0 }
        #expect(requests.count == 3)
        #expect(requests.allSatisfy { $0.path == "/notifications" })
        let verifier = try SignedDataVerifier(
            trustStore: Self.pki.trustStore,
            configuration: .init(bundleID: "com.example.florist", environments: [.sandbox]))
        var types: [String] = []
        for request in requests {
            let body = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: String])
            let verdict = try await verifier.verifyNotification(try #require(body["signedPayload"]))
            #expect(verdict.isValid, "\(verdict.failures)")
            types.append(verdict.verifiedPayload?.notificationType?.rawValue ?? "?")
        }
        #expect(types == ["ONE_TIME_CHARGE", "SUBSCRIBED", "DID_RENEW"])
        let allSucceeded = delivery.attempts.allSatisfy { $0.succeeded }
        #expect(allSucceeded)
        try await server.shutdown()
    }

    @Test func failedDeliveriesAreRetriedOnTheCompressedSchedule() async throws {
        // Apple's schedule (1, 12, 24, 48, 72 hours) compressed a million times: 3.6 ms ... 259 ms.
        let server = try RecordingServer(statuses: [500, 503, 404])
        let store = try simulator()
        let delivery = WebhookDelivery(url: server.url, schedule: .apple(compressedBy: 1_000_000))
        delivery.attach(to: store)
        try store.createAccount("ana")
        _ = try store.purchase(FloristCatalog.chocolates, account: "ana")
        await delivery.drain()
        let attempts = delivery.attempts
        #expect(attempts.map(\.status) == [500, 503, 404, 200])
        #expect(attempts.map(\.retry) == [0, 1, 2, 3])
        #expect(Set(attempts.map(\.notificationUUID)).count == 1)
        try await server.shutdown()
    }

    @Test func anEndpointThatNeverAnswersRunsOutOfRetries() async throws {
        let server = try RecordingServer(statuses: Array(repeating: 500, count: 10))
        let store = try simulator()
        let delivery = WebhookDelivery(url: server.url, schedule: .apple(compressedBy: 10_000_000))
        delivery.attach(to: store)
        try store.createAccount("ana")
        _ = try store.purchase(FloristCatalog.chocolates, account: "ana")
        await delivery.drain()
        #expect(delivery.attempts.count == 6, "the first attempt and five retries")
        let anySucceeded = delivery.attempts.contains { $0.succeeded }
        #expect(!anySucceeded)
        try await server.shutdown()

        // Nothing listening at all: the attempts fail with a reason, not a crash.
        let nowhere = WebhookDelivery(
            url: URL(string: "http://127.0.0.1:9/notifications")!, schedule: RetrySchedule(delays: [.milliseconds(1)]),
            timeout: .milliseconds(500))
        nowhere.attach(to: store)
        _ = try store.purchase(FloristCatalog.flowers, account: "ana")
        await nowhere.drain()
        #expect(nowhere.attempts.count == 2)
        let allFailed = nowhere.attempts.allSatisfy { $0.status == nil && $0.failure != nil }
        #expect(allFailed)
    }

    @Test func iapkitSimulatePostsTheStorysNotifications() async throws {
        let server = try RecordingServer(statuses: [500])
        let scenario = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Examples/Florist/florist-story.yaml").path
        let output = CapturedOutput()
        let command = try SimulateCommand.parse([
            scenario, "--webhook", server.url.absoluteString, "--retry-compression", "1000000",
        ])
        #expect(await command.execute(output: output) == 0)
        #expect(
            output.lines.contains(
                "Webhook \(server.url.absoluteString): 21 of 21 notifications delivered, 22 attempts."))
        #expect(server.requests.withLock { $0.count } == 22)
        try await server.shutdown()
        #expect(throws: (any Error).self) { try SimulateCommand.parse([scenario, "--webhook", "ftp://x"]) }
    }

    @Test func theScheduleFollowsTheTimeRate() {
        #expect(RetrySchedule.apple().delays.first == .seconds(3600))
        let fast = RetrySchedule.apple(for: .monthlyRenewalEveryThirtySeconds)
        // A 31-day month in 30 seconds: one hour becomes 30/31 × 3600/86400 s.
        #expect(fast.delays.count == 5)
        #expect(fast.delays[0] < .milliseconds(50))
        #expect(fast.delays[4] < .seconds(4))
    }
}
