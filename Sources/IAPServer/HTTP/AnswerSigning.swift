public import Crypto
public import Foundation
import HTTPTypes
import Hummingbird
import IAPCore
import NIOCore
import Synchronization

/// The server's own key for signing answers (`SignedAnswer`): an app embeds its public half and believes an answer
/// only when it verifies. To rotate, the app ships with the old and the new public keys, then the server moves to the
/// new key id; answers name the key that signed them.
public struct AnswerSigner: Sendable {
    public var keyID: String
    public var key: P256.Signing.PrivateKey
    /// The time answers are signed at: the wall clock, which a device compares with its own (never a simulated store's
    /// clock, which may be paused or months ahead).
    public var clock: @Sendable () -> Date

    public init(keyID: String, key: P256.Signing.PrivateKey, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.keyID = keyID
        self.key = key
        self.clock = clock
    }

    /// The signature header of an answer.
    func header(
        method: String, target: String, status: Int, nonce: String, requestBody: ByteBuffer, body: ByteBuffer
    ) throws -> String {
        let time = clock().millisecondsSince1970
        let message = SignedAnswer.message(
            method: method, target: target, status: status, nonce: nonce, time: time,
            requestBody: requestBody.readableBytesView, body: body.readableBytesView)
        let signature = try key.signature(for: message)
        return SignedAnswer.Signature(
            keyID: keyID, time: time, nonce: nonce, signature: Array(signature.derRepresentation)
        ).header
    }
}

/// Signs each successful answer of a request that carries a nonce (`X-IAPKit-Nonce`), over the nonce, the request
/// line and body, the status, the server's time and the answer's body. A malformed nonce is refused (400
/// `invalidNonce`); without a signer configured, answers go unsigned (an app that requires signatures then refuses
/// them itself). The request body is read first (at most `bodyLimit` bytes, 413 past it) so the signature covers it.
struct AnswerSigningMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let signer: AnswerSigner?
    let bodyLimit: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard let name = HTTPField.Name(SignedAnswer.nonceHeader), let nonce = request.headers[name] else {
            return try await next(request, context)
        }
        guard SignedAnswer.isValidNonce(nonce) else {
            throw APIError(
                400, "invalidNonce", "\(SignedAnswer.nonceHeader) must be 16 to 128 letters, digits, '-' or '_'")
        }
        guard let signer else { return try await next(request, context) }
        var request = request
        let requestBody = try await JSONBody.collect(&request, limit: bodyLimit)
        var response = try await next(request, context)
        guard (200..<300).contains(Int(response.status.code)) else { return response }
        let body = try await Self.collect(response.body)
        let header = try signer.header(
            method: request.method.rawValue, target: request.uri.description, status: Int(response.status.code),
            nonce: nonce, requestBody: requestBody, body: body)
        if let signature = HTTPField.Name(SignedAnswer.signatureHeader) { response.headers[signature] = header }
        response.body = ResponseBody(byteBuffer: body)
        return response
    }

    /// An answer's body in one buffer (the server's answers to apps are small JSON documents).
    static func collect(_ body: ResponseBody) async throws -> ByteBuffer {
        let collected = Collected()
        try await body.write(CollectingWriter(into: collected))
        return collected.buffer.withLock { $0 }
    }

    private final class Collected: Sendable {
        let buffer = Mutex(ByteBuffer())
    }

    private struct CollectingWriter: ResponseBodyWriter {
        let into: Collected
        mutating func write(_ buffer: ByteBuffer) async throws {
            into.buffer.withLock { collected in
                var buffer = buffer
                collected.writeBuffer(&buffer)
            }
        }
        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}
