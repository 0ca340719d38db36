import Foundation
import Hummingbird
import IAPServer
import IAPSignedData
import IAPSimulator
import IAPSimulatorDelivery

/// The Retention Messaging API under `/inApps/v1/messaging`, at Apple's paths with Apple's JSON and codes: images
/// (PNG bodies up to the server's 4 MiB upload limit), messages, default messages, the realtime URL and performance
/// tests, whose requests the server sends to the realtime URL in the background.
extension InAppsRoutes {
    func addRetentionMessaging(to group: RouterGroup<ServerRequestContext>) {
        route(group, .put, "v1/messaging/image/:imageIdentifier") { request, context in
            let id = try Self.identifier("imageIdentifier", context)
            var size = RetentionImageSize.fullSize
            if let text = request.uri.queryParameters.get("imageSize") {
                guard let value = RetentionImageSize(rawValue: text) else {
                    throw InAppsRefusal(4_000_216, "Invalid request. The image's size is invalid: '\(text)'.")
                }
                size = value
            }
            let png: [UInt8]
            do {
                png = try await JSONBody.bytes(of: request, limit: context.maxUploadSize, requireJSON: false)
            } catch let error as APIError {
                throw InAppsRefusal(4_000_161, "Invalid request. The image is invalid: \(error.reason).")
            }
            try store.uploadRetentionImage(id, size: size, png: png)
            return Response(status: .ok)
        }
        route(group, .delete, "v1/messaging/image/:imageIdentifier") { _, context in
            try store.deleteRetentionImage(try Self.identifier("imageIdentifier", context))
            return Response(status: .ok)
        }
        route(group, .get, "v1/messaging/image/list") { _, _ in
            let images: [JSONValue] = store.retentionImages().map {
                .object(
                    JSONObject([
                        ("imageIdentifier", .string($0.identifier.uuidString.lowercased())),
                        ("imageState", .string($0.state.rawValue)), ("imageSize", .string($0.size.rawValue)),
                    ]))
            }
            return Self.json([("imageIdentifiers", .array(images))])
        }
        route(group, .put, "v1/messaging/message/:messageIdentifier") { request, context in
            let id = try Self.identifier("messageIdentifier", context)
            try store.uploadRetentionMessage(id, try Self.retentionMessage(try await Self.body(request)))
            return Response(status: .ok)
        }
        route(group, .delete, "v1/messaging/message/:messageIdentifier") { _, context in
            try store.deleteRetentionMessage(try Self.identifier("messageIdentifier", context))
            return Response(status: .ok)
        }
        route(group, .get, "v1/messaging/message/list") { _, _ in
            let messages: [JSONValue] = store.retentionMessages().map {
                .object(
                    JSONObject([
                        ("messageIdentifier", .string($0.identifier.uuidString.lowercased())),
                        ("messageState", .string($0.state.rawValue)),
                    ]))
            }
            return Self.json([("messageIdentifiers", .array(messages))])
        }
        route(group, .put, "v1/messaging/default/:productId/:locale") { request, context in
            let body = try await Self.body(request)
            guard let text = body["messageIdentifier"]?.stringValue, let messageID = UUID(uuidString: text) else {
                throw InAppsRefusal(4_000_000, "Invalid request: messageIdentifier must be a UUID.")
            }
            try store.configureDefaultRetentionMessage(
                productID: try Self.parameter("productId", context), locale: try Self.parameter("locale", context),
                messageID: messageID)
            return Response(status: .ok)
        }
        route(group, .get, "v1/messaging/default/:productId/:locale") { _, context in
            let id = try store.defaultRetentionMessage(
                productID: try Self.parameter("productId", context), locale: try Self.parameter("locale", context))
            return Self.json([("messageIdentifier", .string(id.uuidString.lowercased()))])
        }
        route(group, .delete, "v1/messaging/default/:productId/:locale") { _, context in
            try store.deleteDefaultRetentionMessage(
                productID: try Self.parameter("productId", context), locale: try Self.parameter("locale", context))
            return Response(status: .ok)
        }
        route(group, .put, "v1/messaging/realtime/url") { request, _ in
            let body = try await Self.body(request)
            guard let url = body["realtimeURL"]?.stringValue else {
                throw InAppsRefusal(4_000_215, "Invalid request. The url is invalid: realtimeURL is required.")
            }
            try store.configureRealtimeURL(url)
            return Response(status: .ok)
        }
        route(group, .get, "v1/messaging/realtime/url") { _, _ in
            guard let url = store.realtimeURL() else { throw InAppsRefusal(4_040_021, "Realtime URL not found.") }
            return Self.json([("realtimeURL", .string(url))])
        }
        route(group, .delete, "v1/messaging/realtime/url") { _, _ in
            store.deleteRealtimeURL()
            return Response(status: .ok)
        }
        route(group, .post, "v1/messaging/performanceTest") { request, _ in
            let body = try await Self.body(request)
            guard let id = body["originalTransactionId"]?.stringValue else {
                throw InAppsRefusal(4_000_211, "Invalid request: originalTransactionId is required.")
            }
            let run = try store.startPerformanceTest(originalTransactionID: id)
            let store = store
            Task { await RealtimeURLTester().run(run, on: store) }
            return Self.json([
                ("config", .object(JSONObject(Self.fields(run.configuration)))),
                ("requestId", .string(run.requestID.uuidString.lowercased())),
            ])
        }
        route(group, .get, "v1/messaging/performanceTest/result/:requestId") { _, context in
            guard let requestID = UUID(uuidString: try Self.parameter("requestId", context)) else {
                throw InAppsRefusal(4_000_212, "Invalid request: requestId is not a UUID.")
            }
            let run = try store.performanceTest(requestID)
            let times = run.responseTimes
            let number = { (value: Int64) in JSONValue.number(JSONNumber(value)) }
            return Self.json([
                ("config", .object(JSONObject(Self.fields(run.configuration)))), ("target", .string(run.target)),
                ("result", .string(run.result.rawValue)), ("successRate", number(Int64(run.successRate))),
                ("numPending", number(Int64(run.pendingCount))),
                (
                    "responseTimes",
                    .object(
                        JSONObject([
                            ("average", number(times.average)), ("p50", number(times.p50)), ("p90", number(times.p90)),
                            ("p95", number(times.p95)), ("p99", number(times.p99)),
                        ]))
                ),
                (
                    "failures",
                    .object(
                        JSONObject(run.failures.sorted { $0.key < $1.key }.map { ($0.key, number(Int64($0.value))) }))
                ),
            ])
        }
    }

    /// A path identifier that must be a UUID (any case, as Apple's libraries send either).
    static func identifier(_ name: String, _ context: ServerRequestContext) throws -> UUID {
        let text = try parameter(name, context)
        guard let id = UUID(uuidString: text) else {
            throw InAppsRefusal(4_000_000, "Invalid request: '\(text)' is not a UUID.")
        }
        return id
    }

    static func fields(_ configuration: PerformanceTestConfiguration) -> [(String, JSONValue)] {
        [
            ("maxConcurrentRequests", .number(JSONNumber(Int64(configuration.maxConcurrentRequests)))),
            ("totalRequests", .number(JSONNumber(Int64(configuration.totalRequests)))),
            ("totalDuration", .number(JSONNumber(configuration.totalDuration))),
            ("responseTimeThreshold", .number(JSONNumber(configuration.responseTimeThreshold))),
            ("successRateThreshold", .number(JSONNumber(Int64(configuration.successRateThreshold)))),
        ]
    }

    /// `UploadMessageRequestBody`: header and body required; image, headerPosition and bulletPoints optional.
    static func retentionMessage(_ body: JSONValue) throws -> RetentionMessage {
        guard let header = body["header"]?.stringValue else {
            throw InAppsRefusal(4_000_000, "Invalid request: header is required.")
        }
        guard let text = body["body"]?.stringValue else {
            throw InAppsRefusal(4_000_000, "Invalid request: body is required.")
        }
        func image(_ value: JSONValue?, _ what: String) throws -> RetentionMessage.Image {
            guard let value, case .object = value, let idText = value["imageIdentifier"]?.stringValue,
                let id = UUID(uuidString: idText)
            else { throw InAppsRefusal(4_000_000, "Invalid request: \(what) needs an imageIdentifier UUID.") }
            guard let altText = value["altText"]?.stringValue else {
                throw InAppsRefusal(4_000_000, "Invalid request: \(what) needs altText.")
            }
            return RetentionMessage.Image(imageIdentifier: id, altText: altText)
        }
        var message = RetentionMessage(header: header, body: text)
        if let value = body["image"], value != .null { message.image = try image(value, "image") }
        if let value = optionalString(body["headerPosition"]) {
            guard let position = RetentionMessage.HeaderPosition(rawValue: value) else {
                throw InAppsRefusal(4_000_000, "Invalid request: headerPosition is ABOVE_BODY or ABOVE_IMAGE.")
            }
            message.headerPosition = position
        }
        if let value = body["bulletPoints"], value != .null {
            guard case .array(let points) = value else {
                throw InAppsRefusal(4_000_000, "Invalid request: bulletPoints is a list.")
            }
            guard points.count <= 5 else {
                throw InAppsRefusal(4_000_218, "Invalid request. The number of bullet points is too many.")
            }
            for point in points {
                guard let pointText = point["text"]?.stringValue else {
                    throw InAppsRefusal(4_000_000, "Invalid request: a bullet point needs text.")
                }
                message.bulletPoints.append(.init(text: pointText, image: try image(point, "a bullet point")))
            }
        }
        return message
    }

    // MARK: - JSON of the Retention Messaging API (no client of its own in IAPKit: read and written here only)

    static func json(_ fields: [(String, JSONValue)]) -> Response {
        JSONBody.response(bytes: JSONValue.object(JSONObject(fields)).jsonBytes())
    }

    /// The request body as a JSON object; anything else is Apple's general bad request.
    static func body(_ request: Request) async throws -> JSONValue {
        let bytes: [UInt8]
        do { bytes = try await JSONBody.bytes(of: request, limit: bodyLimit) } catch {
            throw InAppsRefusal(4_000_000, "Bad request: \(error.reason)")
        }
        guard let value = try? JSONValue(jsonBytes: bytes), case .object = value else {
            throw InAppsRefusal(4_000_000, "Bad request: the body is not a JSON object.")
        }
        return value
    }

    static func integer(_ value: JSONValue?) -> Int? {
        guard case .number(let number)? = value, let integer = number.int64Value else { return nil }
        return Int(exactly: integer)
    }

    static func optionalString(_ value: JSONValue?) -> String? {
        guard case .string(let text)? = value else { return nil }
        return text
    }
}
