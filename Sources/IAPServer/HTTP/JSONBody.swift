import Foundation
package import HTTPTypes
package import Hummingbird
package import IAPCore
import NIOCore

/// Reading request bodies and writing JSON answers, the same way for every route.
package enum JSONBody {
    /// The body's bytes, at most `limit` of them (413 past it); a declared content type must be JSON (415).
    package static func bytes(of request: Request, limit: Int, requireJSON: Bool = true) async throws(APIError)
        -> [UInt8]
    {
        if requireJSON, let type = request.headers[.contentType], type != "application/json" {
            let essence = type.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard essence == "application/json" else {
                throw APIError(415, "unsupportedMediaType", "send the body as application/json, not \(type)")
            }
        }
        var request = request
        return Array(try await collect(&request, limit: limit).readableBytesView)
    }

    /// Collects the body into `request` (later readers read it again) and answers it: 413 past `limit`.
    package static func collect(_ request: inout Request, limit: Int) async throws(APIError) -> ByteBuffer {
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
