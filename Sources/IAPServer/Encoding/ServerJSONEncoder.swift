import Foundation
import HTTPTypes
public import Hummingbird
import NIOCore

/// How every route's answer value becomes JSON: the context's response encoder (``ServerRequestContext``), so a
/// handler returns a value and the bytes, dates (ISO 8601 with milliseconds) and content type are decided here once.
public struct ServerJSONEncoder: ResponseEncoder {
    public init() {}

    public func encode(_ value: some Encodable, from request: Request, context: some RequestContext) throws -> Response
    {
        let bytes = try StreamingJSONEncoder().encode(value)
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
