public import Foundation
import IAPCore

/// Where a retention image or message stands in Apple's review. The sandbox approves uploads at once (Apple does the
/// same); in any other environment they wait for ``AppStoreSimulator/reviewRetentionContent(_:approved:)``.
public enum RetentionReviewState: String, Hashable, Sendable, Codable, CaseIterable {
    case pending = "PENDING"
    case approved = "APPROVED"
    case rejected = "REJECTED"
}

/// The two kinds of retention image: a message's picture, or a bullet point's icon.
public enum RetentionImageSize: String, Hashable, Sendable, Codable, CaseIterable {
    /// 3840 pixels wide, 160 to 2160 high.
    case fullSize = "FULL_SIZE"
    /// 1024 by 1024 pixels.
    case bulletPoint = "BULLET_POINT"

    /// Whether an image of `width` by `height` pixels is of this kind.
    func admits(width: UInt32, height: UInt32) -> Bool {
        switch self {
        case .fullSize: width == 3840 && (160...2160).contains(height)
        case .bulletPoint: width == 1024 && height == 1024
        }
    }
}

/// An uploaded retention image: its kind, size and review state (the pixels are checked, not kept).
public struct RetentionImage: Hashable, Sendable, Codable {
    public let identifier: UUID
    public let size: RetentionImageSize
    public let width: UInt32
    public let height: UInt32
    public internal(set) var state: RetentionReviewState
}

/// A retention message as uploaded: the text, an optional image and up to five bullet points.
public struct RetentionMessage: Hashable, Sendable, Codable {
    /// A reference to an uploaded image with the text that stands for it.
    public struct Image: Hashable, Sendable, Codable {
        public var imageIdentifier: UUID
        public var altText: String

        public init(imageIdentifier: UUID, altText: String) {
            self.imageIdentifier = imageIdentifier
            self.altText = altText
        }
    }

    /// One bullet point: its text and its icon (a ``RetentionImageSize/bulletPoint`` image).
    public struct BulletPoint: Hashable, Sendable, Codable {
        public var text: String
        public var image: Image

        public init(text: String, image: Image) {
            self.text = text
            self.image = image
        }
    }

    /// Where the header goes.
    public enum HeaderPosition: String, Hashable, Sendable, CaseIterable, Codable {
        case aboveBody = "ABOVE_BODY"
        case aboveImage = "ABOVE_IMAGE"
    }

    public var header: String
    public var body: String
    public var image: Image?
    public var headerPosition: HeaderPosition?
    public var bulletPoints: [BulletPoint]

    public init(
        header: String, body: String, image: Image? = nil, headerPosition: HeaderPosition? = nil,
        bulletPoints: [BulletPoint] = []
    ) {
        self.header = header
        self.body = body
        self.image = image
        self.headerPosition = headerPosition
        self.bulletPoints = bulletPoints
    }

    /// Every image the message uses.
    var imageIdentifiers: [UUID] {
        (image.map { [$0.imageIdentifier] } ?? []) + bulletPoints.map(\.image.imageIdentifier)
    }
}

/// A stored message with its identifier and review state.
public struct StoredRetentionMessage: Hashable, Sendable, Codable {
    public let identifier: UUID
    public let message: RetentionMessage
    public internal(set) var state: RetentionReviewState
}

/// How the App Store load-tests a developer's "Get Retention Message" endpoint. Apple publishes the shape, not the
/// values; ``standard`` uses a response-time threshold of 700 ms, the figure Apple's documentation gives.
public struct PerformanceTestConfiguration: Hashable, Sendable, Codable {
    public var maxConcurrentRequests: Int
    public var totalRequests: Int
    /// The longest the test runs, in milliseconds; requests still unanswered then count as timed out.
    public var totalDuration: Int64
    /// An answer slower than this, in milliseconds, counts as timed out.
    public var responseTimeThreshold: Int64
    /// The percentage of good answers a test needs to pass.
    public var successRateThreshold: Int

    public init(
        maxConcurrentRequests: Int, totalRequests: Int, totalDuration: Int64, responseTimeThreshold: Int64,
        successRateThreshold: Int
    ) {
        self.maxConcurrentRequests = maxConcurrentRequests
        self.totalRequests = totalRequests
        self.totalDuration = totalDuration
        self.responseTimeThreshold = responseTimeThreshold
        self.successRateThreshold = successRateThreshold
    }

    public static let standard = PerformanceTestConfiguration(
        maxConcurrentRequests: 10, totalRequests: 100, totalDuration: 60_000, responseTimeThreshold: 700,
        successRateThreshold: 95)
}

/// One request of a performance test as it ended: Apple's send-attempt result (`SUCCESS`, `TIMED_OUT`,
/// `INVALID_RESPONSE`, ...) and how long the answer took.
public struct PerformanceTestOutcome: Hashable, Sendable, Codable {
    public var result: String
    public var milliseconds: Int64

    public init(result: String, milliseconds: Int64) {
        self.result = result
        self.milliseconds = milliseconds
    }
}

/// A performance test of the realtime URL: what it sends, where, and what came back so far.
public struct PerformanceTestRun: Hashable, Sendable, Codable {
    public enum Result: String, Hashable, Sendable {
        case pending = "PENDING"
        case pass = "PASS"
        case fail = "FAIL"
    }

    public let requestID: UUID
    public let configuration: PerformanceTestConfiguration
    /// The realtime URL the test calls.
    public let target: String
    public let originalTransactionID: String
    public let productID: String
    public internal(set) var outcomes: [PerformanceTestOutcome] = []

    /// Requests not answered yet.
    public var pendingCount: Int { max(0, configuration.totalRequests - outcomes.count) }
    /// Good answers, in percent of the requests answered (0 before any).
    public var successRate: Int {
        outcomes.isEmpty ? 0 : outcomes.filter { $0.result == "SUCCESS" }.count * 100 / outcomes.count
    }
    public var result: Result {
        guard pendingCount == 0 else { return .pending }
        return successRate >= configuration.successRateThreshold ? .pass : .fail
    }
    /// How many requests ended with each result other than `SUCCESS`.
    public var failures: [String: Int] {
        outcomes.reduce(into: [:]) { counts, outcome in
            if outcome.result != "SUCCESS" { counts[outcome.result, default: 0] += 1 }
        }
    }

    /// The answers' times in milliseconds: mean and percentiles (nearest rank), zeros before any answer.
    public var responseTimes: (average: Int64, p50: Int64, p90: Int64, p95: Int64, p99: Int64) {
        let times = outcomes.map(\.milliseconds).sorted()
        guard !times.isEmpty else { return (0, 0, 0, 0, 0) }
        func percentile(_ p: Int) -> Int64 { times[max(0, (times.count * p + 99) / 100 - 1)] }
        let average = times.reduce(0, +) / Int64(times.count)
        return (average, percentile(50), percentile(90), percentile(95), percentile(99))
    }
}

/// What the Retention Messaging API keeps for the simulated app: images, messages, default messages, the realtime URL
/// and performance tests, with Apple's rules and error codes. Text lengths count Unicode scalars, as Apple's own
/// libraries check them.
struct RetentionMessagingRecords: Codable {
    /// Apple's limits per app.
    static let maximumImages = 2000
    static let maximumMessages = 2000
    static let maximumBulletPoints = 5
    static let headerLength = 66
    static let bodyLength = 144
    static let altTextLength = 150
    static let bulletPointTextLength = 66
    static let realtimeURLLength = 256

    /// App Store Connect's locale short codes (case-sensitive), the locales a default message can be set for.
    static let locales: Set<String> = [
        "ar-SA", "bn-BD", "ca", "cs", "da", "de-DE", "el", "en-AU", "en-CA", "en-GB", "en-US", "es-ES", "es-MX", "fi",
        "fr-CA", "fr-FR", "gu-IN", "he", "hi", "hr", "hu", "id", "it", "ja", "kn-IN", "ko", "ml-IN", "mr-IN", "ms",
        "nl-NL", "no", "or-IN", "pa-IN", "pl", "pt-BR", "pt-PT", "ro", "ru", "sk", "sl-SI", "sv", "ta-IN", "te-IN",
        "th", "tr", "uk", "ur-PK", "vi", "zh-Hans", "zh-Hant",
    ]

    var images: [UUID: RetentionImage] = [:]
    var imageOrder: [UUID] = []
    var messages: [UUID: StoredRetentionMessage] = [:]
    var messageOrder: [UUID] = []
    /// Default messages by product id and locale.
    var defaults: [DefaultKey: UUID] = [:]
    var realtimeURL: String?
    var performanceTests: [UUID: PerformanceTestRun] = [:]

    struct DefaultKey: Hashable, Codable {
        let productID: String
        let locale: String
    }

    // MARK: - Images

    mutating func uploadImage(_ id: UUID, size: RetentionImageSize, png: [UInt8], approved: Bool)
        throws(SimulatorError)
    {
        let header: PNGHeader
        do { header = try PNGHeader(png) } catch {
            throw Self.refusal(4_000_161, "Invalid request. The image is invalid: \(error.reason).")
        }
        guard !header.hasTransparency else {
            throw Self.refusal(4_000_161, "Invalid request. The image is invalid: it has transparency.")
        }
        guard size.admits(width: header.width, height: header.height) else {
            throw Self.refusal(
                4_000_161,
                "Invalid request. The image is invalid: \(header.width)x\(header.height) pixels is no \(size.rawValue) "
                    + "size (\(size == .fullSize ? "3840 wide, 160 to 2160 high" : "1024x1024")).")
        }
        guard images[id] == nil else { throw Self.conflict(4_090_000, "The image identifier already exists.") }
        guard images.count < Self.maximumImages else {
            throw Self.forbidden(4_030_014, "The app has \(Self.maximumImages) images, the most it may have.")
        }
        images[id] = RetentionImage(
            identifier: id, size: size, width: header.width, height: header.height,
            state: approved ? .approved : .pending)
        imageOrder.append(id)
    }

    mutating func deleteImage(_ id: UUID) throws(SimulatorError) {
        guard images[id] != nil else { throw Self.notFound(4_040_014, "Image not found.") }
        if let user = messageOrder.first(where: { messages[$0]?.message.imageIdentifiers.contains(id) == true }) {
            throw Self.forbidden(
                4_030_019, "The image is in use by message \(user.uuidString.lowercased()): delete the message first.")
        }
        images[id] = nil
        imageOrder.removeAll { $0 == id }
    }

    var imageList: [RetentionImage] { imageOrder.compactMap { images[$0] } }

    // MARK: - Messages

    mutating func uploadMessage(_ id: UUID, _ message: RetentionMessage, approved: Bool) throws(SimulatorError) {
        guard message.header.unicodeScalars.count <= Self.headerLength else {
            throw Self.refusal(4_000_162, "Invalid request. The header is longer than \(Self.headerLength) characters.")
        }
        guard message.body.unicodeScalars.count <= Self.bodyLength else {
            throw Self.refusal(4_000_163, "Invalid request. The body is longer than \(Self.bodyLength) characters.")
        }
        guard message.bulletPoints.count <= Self.maximumBulletPoints else {
            throw Self.refusal(4_000_218, "Invalid request. The number of bullet points is too many.")
        }
        for point in message.bulletPoints where point.text.unicodeScalars.count > Self.bulletPointTextLength {
            throw Self.refusal(
                4_000_219, "Invalid request. A bullet point is longer than \(Self.bulletPointTextLength) characters.")
        }
        let references =
            (message.image.map { [($0, RetentionImageSize.fullSize)] } ?? [])
            + message.bulletPoints.map { ($0.image, RetentionImageSize.bulletPoint) }
        for (reference, size) in references {
            guard reference.altText.unicodeScalars.count <= Self.altTextLength else {
                throw Self.refusal(
                    4_000_175, "Invalid request. The alternative text is longer than \(Self.altTextLength) characters.")
            }
            guard let image = images[reference.imageIdentifier] else {
                throw Self.notFound(4_040_014, "Image \(reference.imageIdentifier.uuidString.lowercased()) not found.")
            }
            guard image.size == size else {
                throw Self.refusal(
                    4_000_216,
                    "Invalid request. The image's size is invalid: \(image.size.rawValue) where "
                        + "\(size.rawValue) is needed.")
            }
        }
        if message.headerPosition == .aboveImage && message.image == nil {
            throw Self.refusal(4_000_224, "Invalid request. A header above the image needs an image.")
        }
        guard messages[id] == nil else { throw Self.conflict(4_090_001, "The message identifier already exists.") }
        guard messages.count < Self.maximumMessages else {
            throw Self.forbidden(4_030_016, "The app has \(Self.maximumMessages) messages, the most it may have.")
        }
        messages[id] = StoredRetentionMessage(identifier: id, message: message, state: approved ? .approved : .pending)
        messageOrder.append(id)
    }

    /// Deletes a message; the default messages that named it go with it.
    mutating func deleteMessage(_ id: UUID) throws(SimulatorError) {
        guard messages[id] != nil else { throw Self.notFound(4_040_015, "Message not found.") }
        messages[id] = nil
        messageOrder.removeAll { $0 == id }
        defaults = defaults.filter { $0.value != id }
    }

    var messageList: [StoredRetentionMessage] { messageOrder.compactMap { messages[$0] } }

    /// Sets where an image or a message stands in review.
    mutating func review(_ id: UUID, state: RetentionReviewState) throws(SimulatorError) {
        if images[id] != nil {
            images[id]?.state = state
        } else if messages[id] != nil {
            messages[id]?.state = state
        } else {
            throw SimulatorError(.invalidArgument, "no retention image or message \(id.uuidString.lowercased())")
        }
    }

    // MARK: - Default messages

    /// Checks a default message's product (an auto-renewable subscription of the catalog) and locale.
    static func defaultKey(productID: String, locale: String, subscriptions: Set<String>) throws(SimulatorError)
        -> DefaultKey
    {
        guard subscriptions.contains(productID) else {
            throw refusal(4_000_023, "Invalid product id: '\(productID)' is no auto-renewable subscription of the app.")
        }
        guard locales.contains(locale) else { throw refusal(4_000_164, "Invalid request. Locale is invalid.") }
        return DefaultKey(productID: productID, locale: locale)
    }

    mutating func configureDefault(_ key: DefaultKey, messageID: UUID) throws(SimulatorError) {
        guard let stored = messages[messageID] else { throw Self.notFound(4_040_015, "Message not found.") }
        guard stored.state == .approved else {
            throw Self.forbidden(4_030_017, "The message is \(stored.state.rawValue), not APPROVED.")
        }
        for imageID in stored.message.imageIdentifiers where images[imageID]?.state != .approved {
            throw Self.forbidden(4_030_018, "The message's image \(imageID.uuidString.lowercased()) is not APPROVED.")
        }
        defaults[key] = messageID
    }

    func defaultMessage(_ key: DefaultKey) throws(SimulatorError) -> UUID {
        guard let id = defaults[key] else { throw Self.notFound(4_040_020, "Default message not found.") }
        return id
    }

    // MARK: - Realtime URL

    /// Sets the URL the App Store calls for a retention message: `https://`, at most 256 characters (plain `http` is
    /// accepted for loopback hosts only, so a developer's server on this machine can be tested). Outside the sandbox
    /// a performance test must have passed first.
    mutating func configureRealtimeURL(_ text: String, environmentIsSandbox: Bool) throws(SimulatorError) {
        guard text.utf8.count <= Self.realtimeURLLength, let url = URL(string: text), let host = url.host,
            !host.isEmpty, url.scheme == "https" || (url.scheme == "http" && isLoopbackHost(host))
        else { throw Self.refusal(4_000_215, "Invalid request. The url is invalid.") }
        guard environmentIsSandbox || performanceTests.values.contains(where: { $0.result == .pass }) else {
            throw Self.forbidden(4_030_026, "A performance test must pass before a production URL is set.")
        }
        realtimeURL = text
    }

    // MARK: - Performance tests

    /// Starts a performance test against the realtime URL for a customer's active subscription.
    mutating func startPerformanceTest(
        requestID: UUID, originalTransactionID: String, productID: String,
        configuration: PerformanceTestConfiguration
    ) throws(SimulatorError) -> PerformanceTestRun {
        guard let target = realtimeURL else {
            throw Self.refusal(4_000_211, "Invalid request: configure a realtime URL before testing it.")
        }
        if performanceTests.values.contains(where: { $0.result == .pending }) {
            throw Self.refusal(4_000_213, "Invalid request. Existing performance test run.")
        }
        let run = PerformanceTestRun(
            requestID: requestID, configuration: configuration, target: target,
            originalTransactionID: originalTransactionID, productID: productID)
        performanceTests[requestID] = run
        return run
    }

    mutating func record(_ outcome: PerformanceTestOutcome, requestID: UUID) {
        guard var run = performanceTests[requestID], run.pendingCount > 0 else { return }
        run.outcomes.append(outcome)
        performanceTests[requestID] = run
    }

    func performanceTest(_ requestID: UUID) throws(SimulatorError) -> PerformanceTestRun {
        guard let run = performanceTests[requestID] else {
            throw Self.notFound(4_040_018, "Performance test run not found.")
        }
        return run
    }

    // MARK: - Refusals

    static func refusal(_ code: Int, _ reason: String) -> SimulatorError {
        SimulatorError(.invalidArgument, reason, appStoreErrorCode: code)
    }

    static func forbidden(_ code: Int, _ reason: String) -> SimulatorError {
        SimulatorError(.invalidState, reason, appStoreErrorCode: code)
    }

    static func notFound(_ code: Int, _ reason: String) -> SimulatorError {
        SimulatorError(.unknownRequest, reason, appStoreErrorCode: code)
    }

    static func conflict(_ code: Int, _ reason: String) -> SimulatorError {
        SimulatorError(.invalidState, reason, appStoreErrorCode: code)
    }
}

/// What an image upload needs to know of a PNG: its size and whether it can be transparent, from a walk over every
/// chunk with its checksum (the pixel data is not decoded).
struct PNGHeader {
    struct Invalid: Error {
        let reason: String
    }

    let width: UInt32
    let height: UInt32
    let hasTransparency: Bool

    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    init(_ bytes: [UInt8]) throws(Invalid) {
        guard bytes.count >= 8, Array(bytes[0..<8]) == Self.signature else { throw Invalid(reason: "not a PNG file") }
        var offset = 8
        var chunks: [(type: String, data: Range<Int>)] = []
        while offset < bytes.count {
            guard bytes.count - offset >= 12 else { throw Invalid(reason: "a chunk is cut short") }
            let length = Int(Self.uint32(bytes, at: offset))
            let start = offset + 8
            guard length <= bytes.count - start - 4 else { throw Invalid(reason: "a chunk is cut short") }
            let type = String(decoding: bytes[(offset + 4)..<start], as: UTF8.self)
            let stored = Self.uint32(bytes, at: start + length)
            guard CRC32.checksum(bytes[(offset + 4)..<(start + length)]) == stored else {
                throw Invalid(reason: "chunk \(type) fails its checksum")
            }
            chunks.append((type, start..<(start + length)))
            offset = start + length + 4
            if type == "IEND" { break }
        }
        guard offset == bytes.count, chunks.last?.type == "IEND" else {
            throw Invalid(reason: "the file does not end with IEND")
        }
        guard let ihdr = chunks.first, ihdr.type == "IHDR", ihdr.data.count == 13 else {
            throw Invalid(reason: "the first chunk is not IHDR")
        }
        guard chunks.contains(where: { $0.type == "IDAT" }) else { throw Invalid(reason: "no image data") }
        width = Self.uint32(bytes, at: ihdr.data.lowerBound)
        height = Self.uint32(bytes, at: ihdr.data.lowerBound + 4)
        guard width > 0, height > 0 else { throw Invalid(reason: "the image has no pixels") }
        let colorType = bytes[ihdr.data.lowerBound + 9]
        guard [0, 2, 3, 4, 6].contains(colorType) else { throw Invalid(reason: "unknown colour type \(colorType)") }
        hasTransparency = colorType == 4 || colorType == 6 || chunks.contains { $0.type == "tRNS" }
    }

    static func uint32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }
}

/// The CRC-32 PNG chunks carry (ISO 3309, reflected polynomial 0xEDB88320).
enum CRC32 {
    static let table: [UInt32] = (0..<256).map { n in
        (0..<8).reduce(UInt32(n)) { c, _ in c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
    }

    static func checksum(_ bytes: some Collection<UInt8>) -> UInt32 {
        ~bytes.reduce(~UInt32(0)) { c, byte in table[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
    }
}
