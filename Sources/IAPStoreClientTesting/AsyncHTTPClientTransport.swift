public import AsyncHTTPClient
import Foundation
import IAPCore
public import IAPStoreClient
import NIOCore
import NIOHTTP1

/// `HTTPTransport` (IAPStoreClient) over AsyncHTTPClient: what tests, command-line tools and the terminal example send with on Linux,
/// where it is the faster and more predictable client.
public struct AsyncHTTPClientTransport: HTTPTransport {
    public let client: HTTPClient

    public init(client: HTTPClient = .shared) {
        self.client = client
    }

    public func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportAnswer {
        var outgoing = HTTPClientRequest(url: request.url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for header in request.headers { outgoing.headers.add(name: header.name, value: header.value) }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        let response: HTTPClientResponse
        // One deadline for the whole exchange: a second try and the body included.
        let ends = ContinuousClock.now + request.timeout
        let deadline = NIODeadline.now() + TimeAmount(request.timeout)
        do {
            response = try await client.execute(outgoing, deadline: deadline)
        } catch ChannelError.ioOnClosedChannel {
            // The pool handed out a connection the server had closed (it stopped or restarted) before the client saw
            // the close: the request could not be written, so it never reached a server. Once more, on a new one.
            response = try await client.execute(outgoing, deadline: deadline)
        }
        // AsyncHTTPClient's deadline ends with the answer's head: the body is read against the rest of it.
        let limit = request.maximumAnswerSize
        let body = try await withDeadline(ends) {
            var buffer = try await response.body.collect(upTo: limit)
            return buffer.readBytes(length: buffer.readableBytes) ?? []
        }
        return HTTPTransportAnswer(
            status: Int(response.status.code), body: body,
            headers: response.headers.map { (name: $0.name, value: $0.value) })
    }
}
