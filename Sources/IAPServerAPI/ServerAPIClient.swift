public import AsyncHTTPClient
public import Foundation
import IAPCore
public import IAPSignedData
import NIOCore
import NIOHTTP1

/// Where the App Store Server API is: Apple's production or sandbox hosts, or any URL (`iapkit serve`'s copy).
public enum ServerAPIEnvironment: Sendable, Hashable {
    case production
    case sandbox
    case custom(URL)

    public var baseURL: URL {
        switch self {
        case .production: URL(string: "https://api.storekit.apple.com")!
        case .sandbox: URL(string: "https://api.storekit-sandbox.apple.com")!
        case .custom(let url): url
        }
    }
}

/// How a refused or failed call is tried again: 429 (rate limited) and 5xx answers, at most `attempts` times in all
/// and never past `budget`; a `Retry-After` in seconds is honoured, otherwise the wait starts at `firstDelay` and
/// doubles.
public struct ServerAPIRetryPolicy: Sendable, Hashable {
    public var attempts: Int
    public var budget: Duration
    public var firstDelay: Duration

    public init(attempts: Int = 4, budget: Duration = .seconds(30), firstDelay: Duration = .milliseconds(500)) {
        self.attempts = max(attempts, 1)
        self.budget = budget
        self.firstDelay = firstDelay
    }
}

/// A client for Apple's App Store Server API. Every signed document in an answer is verified with the given verifier
/// before it is returned; one that does not verify is an error, never a result.
public struct ServerAPIClient: Sendable {
    public let environment: ServerAPIEnvironment
    public let verifier: SignedDataVerifier
    public let retry: ServerAPIRetryPolicy
    private let tokens: ServerAPITokens
    private let httpClient: HTTPClient
    private let timeout: Duration

    /// The largest answer read (a page of 20 documents is about 100 KB).
    static let maximumAnswerSize = 8 << 20

    public init(
        credentials: ServerAPICredentials, environment: ServerAPIEnvironment, verifier: SignedDataVerifier,
        retry: ServerAPIRetryPolicy = ServerAPIRetryPolicy(), timeout: Duration = .seconds(30),
        httpClient: HTTPClient = .shared, clock: @escaping @Sendable () -> Date = Date.init
    ) {
        self.environment = environment
        self.verifier = verifier
        self.retry = retry
        self.timeout = timeout
        self.httpClient = httpClient
        tokens = ServerAPITokens(credentials: credentials, clock: clock)
    }

    // MARK: - Endpoints

    /// `GET /inApps/v1/transactions/{transactionId}`: one transaction, verified.
    public func transactionInfo(_ transactionID: String) async throws(ServerAPIError) -> TransactionPayload {
        let answer = try await decode(
            AppStoreServerAPI.TransactionInfoResponse.self, .GET,
            "/inApps/v1/transactions/\(Self.segment(transactionID))")
        return try await verifiedTransaction(answer.signedTransactionInfo)
    }

    // MARK: - Requests

    /// Sends a request (retrying as the policy says) and decodes a 2xx answer.
    func decode<T: Decodable>(
        _ type: T.Type, _ method: HTTPMethod, _ path: String, query: [URLQueryItem] = [], body: [UInt8]? = nil
    ) async throws(ServerAPIError) -> T {
        let (status, bytes) = try await send(method, path, query: query, body: body)
        do { return try JSONDecoder().decode(T.self, from: Data(bytes)) } catch {
            throw ServerAPIError(
                .malformedAnswer, "\(method) \(path) answered \(status) with an unexpected body: \(error)",
                httpStatus: status)
        }
    }

    /// Sends a request; 429 and 5xx are tried again within the policy, other failures throw at once.
    func send(_ method: HTTPMethod, _ path: String, query: [URLQueryItem] = [], body: [UInt8]? = nil)
        async throws(ServerAPIError) -> (status: Int, body: [UInt8])
    {
        let clock = ContinuousClock()
        let deadline = clock.now + retry.budget
        var delay = retry.firstDelay
        var attempt = 1
        while true {
            let (status, retryAfter, bytes) = try await sendOnce(method, path, query: query, body: body)
            if (200..<300).contains(status) { return (status, bytes) }
            let refusal = Self.error(status: status, bytes, method: method, path: path)
            guard status == 429 || status >= 500, attempt < retry.attempts else { throw refusal }
            let wait = retryAfter ?? delay
            guard clock.now + wait < deadline else { throw refusal }
            do { try await Task.sleep(for: wait) } catch { throw refusal }
            delay *= 2
            attempt += 1
        }
    }

    private func sendOnce(_ method: HTTPMethod, _ path: String, query: [URLQueryItem], body: [UInt8]?)
        async throws(ServerAPIError) -> (status: Int, retryAfter: Duration?, body: [UInt8])
    {
        var components = URLComponents()
        components.queryItems = query
        let queryText = query.isEmpty ? "" : "?" + (components.percentEncodedQuery ?? "")
        let url = environment.baseURL.absoluteString.trimmingSuffix("/") + path + queryText
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(try await tokens.token())")
        request.headers.add(name: "Accept", value: "application/json")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        do {
            let ends = ContinuousClock.now + timeout
            let response = try await httpClient.execute(request, timeout: .init(timeout))
            var buffer = try await withDeadline(ends) { try await response.body.collect(upTo: Self.maximumAnswerSize) }
            let retryAfter = response.headers.first(name: "Retry-After").flatMap(Int.init).map {
                Duration.seconds(min(max($0, 0), 3600))
            }
            return (Int(response.status.code), retryAfter, buffer.readBytes(length: buffer.readableBytes) ?? [])
        } catch {
            throw ServerAPIError(.unreachable, "\(method) \(url) failed: \(error)")
        }
    }

    /// Apple's error body (`{"errorCode": 4040010, "errorMessage": "..."}`), or the bare status when there is none.
    static func error(status: Int, _ bytes: [UInt8], method: HTTPMethod, path: String) -> ServerAPIError {
        if let body = try? JSONDecoder().decode(AppStoreServerAPI.ErrorPayload.self, from: Data(bytes)) {
            return ServerAPIError(
                .apple, "\(method) \(path): \(body.errorCode) \(body.errorMessage ?? "")",
                appleErrorCode: body.errorCode, httpStatus: status)
        }
        return ServerAPIError(.apple, "\(method) \(path): HTTP \(status)", httpStatus: status)
    }

    // MARK: - Verification

    func verifiedTransaction(_ jws: String) async throws(ServerAPIError) -> TransactionPayload {
        try await verified("transaction") { () async throws(SignedDataParsingError) in
            try await verifier.verifyTransaction(jws)
        }
    }

    func verifiedTransactions(_ documents: [String]) async throws(ServerAPIError) -> [TransactionPayload] {
        var transactions: [TransactionPayload] = []
        for jws in documents { transactions.append(try await verifiedTransaction(jws)) }
        return transactions
    }

    /// The payload of a verdict that verified; anything else is a `verificationFailed` error, never a result.
    func verified<Payload: Sendable>(
        _ what: String, _ verdict: () async throws(SignedDataParsingError) -> SignedDataVerdict<Payload>
    ) async throws(ServerAPIError) -> Payload {
        let result: SignedDataVerdict<Payload>
        do { result = try await verdict() } catch {
            throw ServerAPIError(.verificationFailed, "a signed \(what) could not be read: \(error)")
        }
        guard let payload = result.verifiedPayload else {
            throw ServerAPIError(
                .verificationFailed,
                "a signed \(what) did not verify: " + result.failures.map(\.description).joined(separator: "; "))
        }
        return payload
    }

    /// A date as Apple's API writes it: epoch milliseconds.
    static func milliseconds(_ date: Date) -> Int64 { date.millisecondsSince1970 }

    /// A path segment, percent-encoded.
    static func segment(_ text: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
