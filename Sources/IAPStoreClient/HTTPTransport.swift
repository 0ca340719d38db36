public import Foundation

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// How the app side sends one HTTP request to a server of its own (`iapkit serve`): `URLSession` by default, as an
/// app does; a test or a server-side program can hand in another (IAPStoreClientTesting has one over AsyncHTTPClient).
public protocol HTTPTransport: Sendable {
    /// Sends `request` and answers the status and at most `request.maximumAnswerSize` bytes of the body; throws when
    /// the server cannot be reached, the time limit passes, or the answer is larger.
    func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportAnswer
}

/// One request.
public struct HTTPTransportRequest: Sendable {
    /// `GET`, `POST`, ...
    public var method: String
    public var url: URL
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]?
    /// The limit of the whole exchange.
    public var timeout: Duration
    /// Answers larger than this are refused.
    public var maximumAnswerSize: Int

    public init(
        method: String, url: URL, headers: [(name: String, value: String)] = [], body: [UInt8]? = nil,
        timeout: Duration, maximumAnswerSize: Int
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.maximumAnswerSize = maximumAnswerSize
    }
}

/// One answer.
public struct HTTPTransportAnswer: Sendable {
    public var status: Int
    public var body: [UInt8]
    /// The answer's header fields (names as sent; compare them without regard to case).
    public var headers: [(name: String, value: String)]

    public init(status: Int, body: [UInt8], headers: [(name: String, value: String)] = []) {
        self.status = status
        self.body = body
        self.headers = headers
    }

    /// The first value of the header `name`, compared without regard to case.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// A refusal of the transport itself.
public struct HTTPTransportError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// `URLSession`, the app's own networking: the default transport. The answer is collected in pieces and refused as
/// soon as it passes the request's size limit.
public struct URLSessionTransport: HTTPTransport {
    private let configuration: URLSessionConfiguration

    /// A transport with `configuration` (ephemeral by default: no cookies or caches kept for the validation server).
    public init(configuration: URLSessionConfiguration = .ephemeral) {
        self.configuration = configuration
    }

    public func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportAnswer {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        let timeout =
            Double(request.timeout.components.seconds)
            + Double(request.timeout.components.attoseconds) / 1e18
        // The request's interval bounds each wait for data. The whole exchange is bounded here, so a server sending
        // its answer a byte at a time cannot hold the send (it did for 99 s with a 1 s timeout): the session's
        // resource timeout on Apple's platforms, and a deadline of our own, which Linux's Foundation needs.
        #if os(Linux)
            // Linux's Foundation ends a request with an interval under a second at once (0.5 s timed out in 5 ms);
            // the deadline below still ends the exchange at `timeout`.
            urlRequest.timeoutInterval = max(timeout, 1)
        #else
            urlRequest.timeoutInterval = timeout
        #endif
        for header in request.headers { urlRequest.addValue(header.value, forHTTPHeaderField: header.name) }
        urlRequest.httpBody = request.body.map { Data($0) }
        let collector = AnswerCollector(limit: request.maximumAnswerSize)
        let bounded = configuration.copy() as! URLSessionConfiguration
        bounded.timeoutIntervalForResource = min(bounded.timeoutIntervalForResource, timeout)
        let session = URLSession(configuration: bounded, delegate: collector, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let deadline = Task { [collector, limit = request.timeout] in
            guard (try? await Task.sleep(for: limit)) != nil else { return }
            collector.expire()
        }
        defer { deadline.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                collector.start(session.dataTask(with: urlRequest), continuation)
            }
        } onCancel: {
            collector.cancel()
        }
    }
}

/// Collects one task's answer for ``URLSessionTransport``, with the size limit.
private final class AnswerCollector: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // Guarded by `lock`: the delegate's queue and the caller's task both reach it.
    private let lock = NSLock()
    private let limit: Int
    private var data = Data()
    private var task: URLSessionDataTask?
    private var continuation: CheckedContinuation<HTTPTransportAnswer, any Error>?
    private var failure: (any Error)?

    init(limit: Int) { self.limit = limit }

    func start(_ task: URLSessionDataTask, _ continuation: CheckedContinuation<HTTPTransportAnswer, any Error>) {
        lock.withLock {
            self.task = task
            self.continuation = continuation
        }
        task.resume()
    }

    func cancel() { lock.withLock { task }?.cancel() }

    /// Ends the exchange as timed out: the request's whole timeout passed.
    func expire() {
        let task = lock.withLock {
            if failure == nil { failure = URLError(.timedOut) }
            return self.task
        }
        task?.cancel()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let tooLarge = lock.withLock {
            self.data.append(data)
            guard self.data.count > limit, failure == nil else { return false }
            failure = HTTPTransportError("the answer is larger than \(limit) bytes")
            return true
        }
        if tooLarge { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (continuation, result):
            (CheckedContinuation<HTTPTransportAnswer, any Error>?, Result<HTTPTransportAnswer, any Error>) =
                lock.withLock {
                    defer { self.continuation = nil }
                    if let failure = failure ?? error { return (self.continuation, .failure(failure)) }
                    let response = task.response as? HTTPURLResponse
                    let headers = (response?.allHeaderFields ?? [:]).compactMap {
                        field -> (name: String, value: String)? in
                        guard let name = field.key as? String, let value = field.value as? String else { return nil }
                        return (name: name, value: value)
                    }
                    return (
                        self.continuation,
                        .success(
                            HTTPTransportAnswer(status: response?.statusCode ?? 0, body: Array(data), headers: headers))
                    )
                }
        continuation?.resume(with: result)
    }
}
