import AsyncHTTPClient
import Foundation
import IAPCore
import NIOCore
import NIOHTTP1

/// JSON over HTTP for the two clients of `iapkit serve` (the simulator backend and the validation server): one
/// place for the request shape, the time limit, the size limit of answers and the error mapping.
struct JSONHTTPClient: Sendable {
    let baseURL: URL
    let headers: [(String, String)]
    let timeout: Duration
    /// The code a transport failure is reported with (`networkError` for the store, `serverUnreachable` for the
    /// validation server).
    let unreachable: StoreError.Code
    let client: HTTPClient

    static let maximumAnswerSize = 16 << 20

    /// Sends `body` (a JSON object; `{}` when a request that changes something has nothing to say, as the server
    /// requires a JSON body there) and returns the status and the answer's bytes.
    func send(_ method: HTTPMethod, _ path: String, json body: [String: Any]? = nil) async throws(StoreError) -> (
        status: Int, body: [UInt8]
    ) {
        let body = body ?? ([.GET, .HEAD].contains(method) ? nil : [:])
        let url = baseURL.absoluteString.trimmingSuffix("/") + path
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            guard let data = try? JSONSerialization.data(withJSONObject: body) else {
                throw StoreError(.systemError, "the request to \(path) cannot be written as JSON")
            }
            request.body = .bytes(ByteBuffer(bytes: data))
        }
        do {
            let response = try await client.execute(request, timeout: .init(timeout))
            var buffer = try await response.body.collect(upTo: Self.maximumAnswerSize)
            return (Int(response.status.code), buffer.readBytes(length: buffer.readableBytes) ?? [])
        } catch {
            throw StoreError(unreachable, "\(method) \(url) failed: \(error)")
        }
    }

    /// Sends and decodes a 2xx answer; any other status becomes an error carrying the server's code.
    func decode<T: Decodable>(
        _ type: T.Type, _ method: HTTPMethod, _ path: String, json body: [String: Any]? = nil,
        refused: StoreError.Code? = nil
    ) async throws(StoreError) -> T {
        let (status, bytes) = try await send(method, path, json: body)
        guard (200..<300).contains(status) else { throw Self.error(status: status, bytes, refused: refused) }
        do { return try Self.decoder.decode(T.self, from: Data(bytes)) } catch {
            throw StoreError(unreachable, "\(path) answered \(status) with a body that is not the expected JSON")
        }
    }

    /// The server's error body (`{"code": ..., "message": ...}`) as a StoreError: its own code, or `refused` when
    /// given.
    static func error(status: Int, _ bytes: [UInt8], refused: StoreError.Code?) -> StoreError {
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
    static let decoder: JSONDecoder = {
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
    func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
