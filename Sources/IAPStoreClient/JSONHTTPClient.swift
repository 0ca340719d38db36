package import Foundation
import IAPCore

/// JSON over HTTP for the clients of `iapkit serve` (the validation server here, the simulator's HTTP backend in
/// IAPStoreClientTesting): one place for the request shape, the time limit, the size limit of answers and the error
/// mapping, over any ``HTTPTransport``.
package struct JSONHTTPClient: Sendable {
    package let baseURL: URL
    package let headers: [(String, String)]
    package let timeout: Duration
    /// The code a transport failure is reported with (`networkError` for the store, `serverUnreachable` for the
    /// validation server).
    package let unreachable: StoreError.Code
    package let transport: any HTTPTransport
    /// When set, every request carries a nonce and every successful answer must be signed for it.
    package let answers: AnswerVerification?

    package static let maximumAnswerSize = 16 << 20

    package init(
        baseURL: URL, headers: [(String, String)], timeout: Duration, unreachable: StoreError.Code,
        transport: any HTTPTransport, answers: AnswerVerification? = nil
    ) {
        self.answers = answers
        self.baseURL = baseURL
        self.headers = headers
        self.timeout = timeout
        self.unreachable = unreachable
        self.transport = transport
    }

    /// The URL of `path` on the server.
    package func url(_ path: String) -> URL? { URL(string: baseURL.absoluteString.trimmingSuffix("/") + path) }

    /// Sends `body` (JSON; `{}` when a request that changes something has nothing to say, as the server requires a
    /// JSON body there) and returns the status and the answer's bytes.
    package func send(_ method: String, _ path: String, body: (any Encodable)? = nil) async throws(StoreError) -> (
        status: Int, body: [UInt8]
    ) {
        let bytes: [UInt8]?
        switch body {
        case let body?:
            guard let data = try? JSONEncoder().encode(body) else {
                throw StoreError(.systemError, "the request to \(path) cannot be written as JSON")
            }
            bytes = Array(data)
        case nil: bytes = ["GET", "HEAD"].contains(method) ? nil : Array("{}".utf8)
        }
        guard let url = url(path) else { throw StoreError(.systemError, "\(path) does not make a URL") }
        var headers = headers.map { (name: $0.0, value: $0.1) }
        if bytes != nil { headers.append((name: "Content-Type", value: "application/json")) }
        let nonce = answers?.nonce()
        if let nonce { headers.append((name: SignedAnswer.nonceHeader, value: nonce)) }
        let request = HTTPTransportRequest(
            method: method, url: url, headers: headers, body: bytes, timeout: timeout,
            maximumAnswerSize: Self.maximumAnswerSize)
        let answer: HTTPTransportAnswer
        do { answer = try await transport.send(request) } catch {
            throw StoreError(unreachable, "\(method) \(url) failed: \(error)")
        }
        if let answers, let nonce {
            try answers.check(
                answer, method: method, target: Self.target(of: url), requestBody: bytes ?? [], nonce: nonce)
        }
        return (answer.status, answer.body)
    }

    /// The request target of `url` as it goes on the wire: the path and the query.
    static func target(of url: URL) -> String {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let path = components?.percentEncodedPath ?? url.path
        return (path.isEmpty ? "/" : path) + (components?.percentEncodedQuery.map { "?" + $0 } ?? "")
    }

    /// Sends and decodes a 2xx answer; any other status becomes an error carrying the server's code.
    package func decode<T: Decodable>(
        _ type: T.Type, _ method: String, _ path: String, body: (any Encodable)? = nil, refused: StoreError.Code? = nil
    ) async throws(StoreError) -> T {
        let (status, bytes) = try await send(method, path, body: body)
        guard (200..<300).contains(status) else { throw Self.error(status: status, bytes, refused: refused) }
        do { return try Self.decoder.decode(T.self, from: Data(bytes)) } catch {
            throw StoreError(unreachable, "\(path) answered \(status) with a body that is not the expected JSON")
        }
    }

    /// The server's error body (`{"code": ..., "message": ...}`) as a StoreError: its own code, or `refused` when
    /// given.
    package static func error(status: Int, _ bytes: [UInt8], refused: StoreError.Code?) -> StoreError {
        struct Body: Decodable {
            var code: String
            var message: String?
        }
        let body = try? JSONDecoder().decode(Body.self, from: Data(bytes))
        let code = body?.code ?? "http\(status)"
        let message = body?.message ?? "HTTP \(status)"
        if let refused { return StoreError(refused, "\(code): \(message)") }
        return StoreError(.init(rawValue: code), message)
    }

    /// Dates as the server writes them: ISO 8601 with milliseconds.
    package static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            if let date = parseDate(text) { return date }
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "not a date: \(text)"))
        }
        return decoder
    }()

    static func parseDate(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) {
            return date
        }
        return try? Date(text, strategy: Date.ISO8601FormatStyle())
    }
}

extension String {
    package func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
