public import AsyncHTTPClient
import Foundation
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
        do {
            response = try await client.execute(outgoing, timeout: .init(request.timeout))
        } catch ChannelError.ioOnClosedChannel {
            // The pool handed out a connection the server had closed (it stopped or restarted) before the client saw
            // the close: the request could not be written, so it never reached a server. Once more, on a new one.
            response = try await client.execute(outgoing, timeout: .init(request.timeout))
        }
        var buffer = try await response.body.collect(upTo: request.maximumAnswerSize)
        return HTTPTransportAnswer(
            status: Int(response.status.code), body: buffer.readBytes(length: buffer.readableBytes) ?? [],
            headers: response.headers.map { (name: $0.name, value: $0.value) })
    }
}
