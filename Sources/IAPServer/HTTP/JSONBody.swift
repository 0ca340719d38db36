import Foundation
import HTTPTypes
import Hummingbird
import IAPCore
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

    /// A response with JSON already written.
    static func response(bytes: [UInt8], status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// A JSON response.
    static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        let bytes =
            (try? StreamingJSONEncoder().encode(value)) ?? Array(#"{"code":"encodingFailed","message":"?"}"#.utf8)
        return response(bytes: bytes, status: status)
    }
}

/// Dates in answers: ISO 8601 in UTC with milliseconds, as the App Store's dates have them
/// (`2026-11-23T17:56:44.108Z`). Written by hand: Foundation's format style took a tenth of an answer's time.
enum DateFormat {
    /// An ISO 8601 date-time (`2027-01-31T09:00:00Z`, with or without fractional seconds, any offset); nil otherwise.
    static func parse(_ text: String) -> Date? {
        (try? Date(text, strategy: .iso8601))
            ?? (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
    }

    static func text(_ date: Date) -> String {
        let millis = epochMilliseconds(date)
        let (days, dayMillis) = floorDivision(millis, 86_400_000)
        let (year, month, day) = CivilCalendar.date(fromDays: Int(days))
        var text = year < 0 ? "-" : ""
        text.reserveCapacity(24)
        func append(_ value: Int64, digits: Int) {
            let written = String(value)
            text += String(repeating: "0", count: max(digits - written.count, 0)) + written
        }
        append(Int64(abs(year)), digits: 4)
        text += "-"
        append(Int64(month), digits: 2)
        text += "-"
        append(Int64(day), digits: 2)
        text += "T"
        append(dayMillis / 3_600_000, digits: 2)
        text += ":"
        append(dayMillis / 60_000 % 60, digits: 2)
        text += ":"
        append(dayMillis / 1000 % 60, digits: 2)
        text += "."
        append(dayMillis % 1000, digits: 3)
        text += "Z"
        return text
    }

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let quotient = value >= 0 ? value / divisor : -((-value + divisor - 1) / divisor)
        return (quotient, value - quotient * divisor)
    }
}
