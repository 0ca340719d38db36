import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Reading request bodies and writing JSON answers, the same way for every route.
enum JSONBody {
    /// The body's bytes, at most `limit` of them (413 past it); a declared content type must be JSON (415).
    static func bytes(of request: Request, limit: Int, requireJSON: Bool = true) async throws(APIError) -> [UInt8] {
        if requireJSON, let type = request.headers[.contentType] {
            let essence = type.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard essence == "application/json" else {
                throw APIError(415, "unsupportedMediaType", "send the body as application/json, not \(type)")
            }
        }
        var request = request
        do {
            let buffer = try await request.collectBody(upTo: limit)
            return Array(buffer.readableBytesView)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            throw APIError(413, "bodyTooLarge", "the body is larger than \(limit) bytes")
        } catch {
            throw APIError(400, "unreadableBody", "the body could not be read: \(error)")
        }
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(DateFormat.text(date))
        }
        return encoder
    }()

    /// A response with JSON already written.
    static func response(bytes: [UInt8], status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// A JSON response.
    static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        let data = (try? encoder.encode(value)) ?? Data(#"{"code":"encodingFailed","message":"?"}"#.utf8)
        return response(bytes: Array(data), status: status)
    }
}

/// Dates in answers: ISO 8601 in UTC with milliseconds, as the App Store's dates have them.
enum DateFormat {
    static func text(_ date: Date) -> String {
        date.formatted(
            Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: TimeZone(secondsFromGMT: 0)!))
    }
}
