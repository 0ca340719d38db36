import Foundation
package import HTTPTypes
package import Hummingbird
package import IAPCore
import NIOCore

/// Reading request bodies and writing JSON answers, the same way for every route.
package enum JSONBody {
    /// The body's bytes, at most `limit` of them (413 past it); a declared content type must be JSON in UTF-8 (415).
    package static func bytes(of request: Request, limit: Int, requireJSON: Bool = true) async throws(APIError)
        -> [UInt8]
    {
        if requireJSON, let type = request.headers[.contentType], let refusal = contentTypeRefusal(type) {
            throw refusal
        }
        var request = request
        return Array(try await collect(&request, limit: limit).readableBytesView)
    }

    /// The 415 for a `Content-Type` that does not declare JSON in UTF-8, nil for one that does: `application/json`,
    /// alone or with `charset=utf-8` (or `us-ascii`, a part of it; JSON is UTF-8, RFC 8259, and a body declared in
    /// another charset would be misread).
    /// Other parameters are ignored, as the media type defines none.
    package static func contentTypeRefusal(_ contentType: String?) -> APIError? {
        guard let contentType else {
            return APIError(415, "unsupportedMediaType", "send the body as application/json (Content-Type is missing)")
        }
        if contentType == "application/json" { return nil }  // what nearly every request sends
        let type = mediaType(contentType)
        guard type == "application/json" else {
            return APIError(415, "unsupportedMediaType", "send the body as application/json, not \(type.prefix(100))")
        }
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "charset" else {
                continue
            }
            let charset = pair[1].trimmingCharacters(in: .whitespaces)
                .trimmingCharacters(in: CharacterSet(charactersIn: "\"")).lowercased()
            guard ["utf-8", "utf8", "us-ascii"].contains(charset) else {
                return APIError(
                    415, "unsupportedMediaType", "send the JSON in UTF-8, not charset=\(charset.prefix(40))")
            }
        }
        return nil
    }

    /// A `Content-Type`'s media type: its first non-empty `;`-separated part without surrounding blanks, in lower case.
    static func mediaType(_ contentType: String) -> String {
        guard let type = contentType.split(separator: ";").first else { return "" }
        let trimmed = type.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed()
        return String(trimmed).lowercased()
    }

    /// Collects the body into `request` (later readers read it again) and answers it: 413 past `limit`.
    package static func collect(_ request: inout Request, limit: Int) async throws(APIError) -> ByteBuffer {
        // A body declared larger than the limit is refused before a byte of it is waited for.
        if let declared = request.headers[.contentLength], let length = Int(declared), length > limit {
            throw APIError(413, "bodyTooLarge", "the body is larger than \(limit) bytes")
        }
        do {
            return try await request.collectBody(upTo: limit)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            throw APIError(413, "bodyTooLarge", "the body is larger than \(limit) bytes")
        } catch {
            throw APIError(400, "unreadableBody", "the body could not be read: \(error)")
        }
    }

    /// Reads a request body as a `T` (see ``RequestDocument/decode(_:from:)``): a request that changes something must
    /// send one (`{}` when it has nothing to say).
    package static func decode<T: KnownFields>(_ type: T.Type, from request: Request, limit: Int)
        async throws(APIError) -> T
    {
        let bytes = try await Self.bytes(of: request, limit: limit)
        if bytes.isEmpty && RequestGuardMiddleware<ServerRequestContext>.needsBody(request.method) {
            throw APIError(400, "emptyBody", "the body is empty: send a JSON object ({} when there is nothing to say)")
        }
        return try RequestDocument.decode(T.self, from: bytes.isEmpty ? Array("{}".utf8) : bytes)
    }

    /// A response with JSON already written.
    package static func response(bytes: [UInt8], status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// A JSON response.
    package static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        let bytes =
            (try? StreamingJSONEncoder().encode(value)) ?? Array(#"{"code":"encodingFailed","message":"?"}"#.utf8)
        return response(bytes: bytes, status: status)
    }
}
