import Foundation
import IAPSignedData
import IAPTestSupport
import Testing

@testable import IAPSimulator

/// The Retention Messaging API's rules in the simulator: images checked chunk by chunk, messages by Apple's limits,
/// review in and out of the sandbox, default messages, the realtime URL, and performance tests. Apple's own client
/// drives the same API over HTTP in `AppleServerAPIClientTests`.
@Suite struct RetentionMessagingTests {
    static let gold = "com.example.florist.vip.gold"

    /// A PNG of the given size and colour type whose chunks are well formed (the pixel data is not decoded).
    static func png(width: UInt32, height: UInt32, colorType: UInt8 = 2, extra: [(String, [UInt8])] = []) -> [UInt8] {
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return bigEndian(UInt32(data.count)) + body + bigEndian(CRC32.checksum(body))
        }
        let header = bigEndian(width) + bigEndian(height) + [8, colorType, 0, 0, 0]
        return PNGHeader.signature + chunk("IHDR", header) + extra.flatMap { chunk($0.0, $0.1) }
            + chunk("IDAT", [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]) + chunk("IEND", [])
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) }
    }

    static let picture = png(width: 3840, height: 1080)
    static let icon = png(width: 1024, height: 1024)

    /// The App Store error code `body` is refused with, or nil when it succeeds.
    func code(_ body: () throws -> Void) -> Int? {
        do { try body() } catch let error as SimulatorError { return error.appStoreErrorCode ?? -1 } catch {
            return -2
        }
        return nil
    }

    @Test func crcMatchesTheStandardCheckValue() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
    }

    @Test func imagesAreCheckedChunkByChunk() throws {
        let store = try SimulatorHarness().store
        #expect(code { try store.uploadRetentionImage(UUID(), size: .fullSize, png: Self.picture) } == nil)
        #expect(code { try store.uploadRetentionImage(UUID(), size: .bulletPoint, png: Self.icon) } == nil)
        var corrupt = Self.picture
        corrupt[20] ^= 1  // inside IHDR: its checksum fails
        let refused: [(String, [UInt8], RetentionImageSize)] = [
            ("empty", [], .fullSize),
            ("signature only", PNGHeader.signature, .fullSize),
            ("cut short", Array(Self.picture.dropLast(3)), .fullSize),
            ("trailing bytes", Self.picture + [0], .fullSize),
            ("bad checksum", corrupt, .fullSize),
            ("alpha", Self.png(width: 3840, height: 1080, colorType: 6), .fullSize),
            ("grey and alpha", Self.png(width: 3840, height: 1080, colorType: 4), .fullSize),
            ("tRNS", Self.png(width: 3840, height: 1080, extra: [("tRNS", [0, 0, 0, 0, 0, 0])]), .fullSize),
            ("too narrow", Self.png(width: 3839, height: 1080), .fullSize),
            ("too short", Self.png(width: 3840, height: 159), .fullSize),
            ("too tall", Self.png(width: 3840, height: 2161), .fullSize),
            ("icon as picture", Self.icon, .fullSize),
            ("picture as icon", Self.picture, .bulletPoint),
            ("unknown colour type", Self.png(width: 1024, height: 1024, colorType: 5), .bulletPoint),
            (
                "length past the end",
                PNGHeader.signature + [0xFF, 0xFF, 0xFF, 0xF0] + Array("IHDR".utf8) + [0, 0, 0, 0],
                .bulletPoint
            ),
        ]
        for (name, bytes, size) in refused {
            #expect(code { try store.uploadRetentionImage(UUID(), size: size, png: bytes) } == 4_000_161, "\(name)")
        }
        #expect(store.retentionImages().count == 2)
    }

    @Test func messagesFollowApplesRules() throws {
        let store = try SimulatorHarness().store
        let picture = UUID()
        let icon = UUID()
        try store.uploadRetentionImage(picture, size: .fullSize, png: Self.picture)
        try store.uploadRetentionImage(icon, size: .bulletPoint, png: Self.icon)
        let point = RetentionMessage.BulletPoint(text: "Fresh", image: .init(imageIdentifier: icon, altText: "tulip"))
        func message(_ change: (inout RetentionMessage) -> Void = { _ in }) -> RetentionMessage {
            var message = RetentionMessage(header: "Stay", body: "Flowers every month")
            change(&message)
            return message
        }
        // Limits count Unicode scalars: 66 scalars pass, 67 do not, whatever their UTF-8 length.
        #expect(
            code { try store.uploadRetentionMessage(UUID(), message { $0.header = String(repeating: "é", count: 66) }) }
                == nil)
        let cases: [(String, RetentionMessage, Int)] = [
            ("header", message { $0.header = String(repeating: "h", count: 67) }, 4_000_162),
            ("body", message { $0.body = String(repeating: "b", count: 145) }, 4_000_163),
            ("bullets", message { $0.bulletPoints = Array(repeating: point, count: 6) }, 4_000_218),
            (
                "bullet text",
                message { $0.bulletPoints = [.init(text: String(repeating: "t", count: 67), image: point.image)] },
                4_000_219
            ),
            (
                "alt text",
                message { $0.image = .init(imageIdentifier: picture, altText: String(repeating: "a", count: 151)) },
                4_000_175
            ),
            ("missing image", message { $0.image = .init(imageIdentifier: UUID(), altText: "x") }, 4_040_014),
            ("icon as picture", message { $0.image = .init(imageIdentifier: icon, altText: "x") }, 4_000_216),
            (
                "picture as bullet",
                message { $0.bulletPoints = [.init(text: "t", image: .init(imageIdentifier: picture, altText: "x"))] },
                4_000_216
            ),
            ("above no image", message { $0.headerPosition = .aboveImage }, 4_000_224),
        ]
        for (name, body, expected) in cases {
            #expect(code { try store.uploadRetentionMessage(UUID(), body) } == expected, "\(name)")
        }
        let full = UUID()
        let complete = message {
            $0.image = .init(imageIdentifier: picture, altText: "tulips")
            $0.headerPosition = .aboveImage
            $0.bulletPoints = Array(repeating: point, count: 5)
        }
        #expect(code { try store.uploadRetentionMessage(full, complete) } == nil)
        #expect(code { try store.uploadRetentionMessage(full, complete) } == 4_090_001)
        #expect(code { try store.deleteRetentionImage(icon) } == 4_030_019, "a bullet point's icon is in use")
        #expect(code { try store.deleteRetentionImage(picture) } == 4_030_019)
        try store.configureDefaultRetentionMessage(productID: Self.gold, locale: "en-US", messageID: full)
        try store.deleteRetentionMessage(full)
        #expect(
            code { _ = try store.defaultRetentionMessage(productID: Self.gold, locale: "en-US") } == 4_040_020,
            "a deleted message is no longer the default")
        #expect(code { try store.deleteRetentionImage(icon) } == nil)
        #expect(code { try store.deleteRetentionMessage(full) } == 4_040_015)
    }

    @Test func outsideTheSandboxContentWaitsForReview() throws {
        let store = try SimulatorHarness { $0.environment = .production }.store
        let picture = UUID()
        let message = UUID()
        try store.uploadRetentionImage(picture, size: .fullSize, png: Self.picture)
        try store.uploadRetentionMessage(
            message, RetentionMessage(header: "h", body: "b", image: .init(imageIdentifier: picture, altText: "a")))
        #expect(store.retentionImages().map(\.state) == [.pending])
        #expect(store.retentionMessages().map(\.state) == [.pending])
        let configure = { () throws in
            try store.configureDefaultRetentionMessage(productID: Self.gold, locale: "fr-FR", messageID: message)
        }
        #expect(code(configure) == 4_030_017)
        try store.reviewRetentionContent(message, approved: true)
        #expect(code(configure) == 4_030_018, "its image is not approved yet")
        try store.reviewRetentionContent(picture, approved: false)
        #expect(store.retentionImages().map(\.state) == [.rejected])
        #expect(code(configure) == 4_030_018)
        try store.reviewRetentionContent(picture, approved: true)
        #expect(code(configure) == nil)
        #expect(try store.defaultRetentionMessage(productID: Self.gold, locale: "fr-FR") == message)
        #expect(code { _ = try store.defaultRetentionMessage(productID: Self.gold, locale: "FR-fr") } == 4_000_164)
        #expect(
            code { _ = try store.defaultRetentionMessage(productID: "com.example.florist.flowers", locale: "fr-FR") }
                == 4_000_023)
        // Production needs a passing performance test before a realtime URL.
        #expect(code { try store.configureRealtimeURL("https://example.com/retention") } == 4_030_026)
    }

    @Test func realtimeURLsAndPerformanceTests() throws {
        let harness = try SimulatorHarness()
        let store = harness.store
        try harness.customer("ana")
        let gold = try #require(try store.purchase(Self.gold, account: "ana").transaction)
        let flowers = try #require(try store.purchase("com.example.florist.flowers", account: "ana").transaction)
        for bad in [
            "ftp://example.com", "http://example.com/x", "https://", "not a url",
            "https://example.com/" + String(repeating: "a", count: 240),
        ] {
            #expect(code { try store.configureRealtimeURL(bad) } == 4_000_215, "\(bad)")
        }
        #expect(
            code { _ = try store.startPerformanceTest(originalTransactionID: gold.transactionID) } == 4_000_211,
            "no realtime URL yet")
        try store.configureRealtimeURL("http://127.0.0.1:9/retention")
        #expect(store.realtimeURL() == "http://127.0.0.1:9/retention")
        #expect(code { _ = try store.startPerformanceTest(originalTransactionID: flowers.transactionID) } == 4_000_211)
        #expect(code { _ = try store.startPerformanceTest(originalTransactionID: "abc") } == 4_000_006)
        let configuration = PerformanceTestConfiguration(
            maxConcurrentRequests: 2, totalRequests: 4, totalDuration: 1_000, responseTimeThreshold: 700,
            successRateThreshold: 75)
        let run = try store.startPerformanceTest(
            originalTransactionID: gold.transactionID, configuration: configuration)
        #expect(run.result == .pending && run.pendingCount == 4)
        #expect(code { _ = try store.startPerformanceTest(originalTransactionID: gold.transactionID) } == 4_000_213)

        // Each request is signed like the App Store's and decodes to Apple's fields.
        let body = try store.signedRealtimeRequest(for: run)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: String])
        let parts = try #require(object["signedPayload"]).split(separator: ".")
        let payloadBytes = try #require(Base64URL.decode(String(parts[1])))
        let payload = try #require(try JSONSerialization.jsonObject(with: Data(payloadBytes)) as? [String: Any])
        #expect(payload["originalTransactionId"] as? String == gold.transactionID)
        #expect(payload["productId"] as? String == Self.gold)
        #expect(payload["environment"] as? String == "Sandbox")
        #expect(payload["userLocale"] as? String == "en-US")
        #expect(UUID(uuidString: payload["requestIdentifier"] as? String ?? "") != nil)

        for (result, milliseconds) in [("SUCCESS", 10), ("SUCCESS", 30), ("SUCCESS", 20), ("TIMED_OUT", 700)] {
            store.recordPerformanceTestOutcome(
                .init(result: result, milliseconds: Int64(milliseconds)), requestID: run.requestID)
        }
        store.recordPerformanceTestOutcome(.init(result: "SUCCESS", milliseconds: 1), requestID: run.requestID)
        let ended = try store.performanceTest(run.requestID)
        #expect(ended.outcomes.count == 4, "a fifth outcome of a four-request test is ignored")
        #expect(ended.result == .pass && ended.successRate == 75 && ended.pendingCount == 0)
        #expect(ended.failures == ["TIMED_OUT": 1])
        let times = ended.responseTimes
        #expect([times.average, times.p50, times.p90, times.p95, times.p99] == [190, 20, 700, 700, 700])
        #expect(code { _ = try store.performanceTest(UUID()) } == 4_040_018)
        store.deleteRealtimeURL()
        #expect(store.realtimeURL() == nil)
    }
}
