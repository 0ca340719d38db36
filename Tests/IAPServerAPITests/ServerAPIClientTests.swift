import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import IAPServerAPI
import IAPSignedData
import IAPTestSupport
import NIOCore
import Synchronization
import Testing

/// The client against a real HTTP server on a loopback socket that answers as Apple does: a verified transaction,
/// Apple's error codes, a rate limit with `Retry-After`, an outage, a forged document and an answer that is not JSON.
@Suite struct ServerAPIClientTests {
    static let credentials = ServerAPITokensTests.credentials

    /// What the fake API saw and how often.
    final class Counters: Sendable {
        let busy = Mutex(0)
        let down = Mutex(0)
        let unauthorized = Mutex(0)
    }

    /// An Apple-shaped `/inApps/v1/transactions/{id}` on a loopback port for the length of `body`.
    static func withFakeAPI(
        _ counters: Counters, _ body: @Sendable (URL) async throws -> Void
    ) async throws {
        let router = Router()
        router.get("/inApps/v1/transactions/:id") { request, context -> Response in
            // The bearer token must verify with the key's public half.
            let header = request.headers[.authorization] ?? ""
            guard header.hasPrefix("Bearer "), let jws = try? CompactJWS(String(header.dropFirst(7))),
                let signature = try? P256.Signing.ECDSASignature(rawRepresentation: jws.signature),
                ServerAPITokensTests.key.publicKey.isValidSignature(signature, for: jws.signingInput)
            else {
                counters.unauthorized.withLock { $0 += 1 }
                return Response(status: .unauthorized)
            }
            let id = try context.parameters.require("id")
            switch id {
            case "2000000123456789":
                return try json(["signedTransactionInfo": try TestJWS.signer().sign(TestJWS.transaction())])
            case "forged":
                let forged = try TestJWS.signer(key: TestJWS.key("forger")).sign(TestJWS.transaction())
                return try json(["signedTransactionInfo": forged])
            case "busy":
                if counters.busy.withLock({ count in
                    defer { count += 1 }; return count
                }) == 0 {
                    var headers = HTTPFields()
                    headers[.retryAfter] = "1"
                    return try json(
                        ["errorCode": 4_290_000, "errorMessage": "Rate limit exceeded."], status: .tooManyRequests,
                        headers: headers)
                }
                return try json(["signedTransactionInfo": try TestJWS.signer().sign(TestJWS.transaction())])
            case "down":
                counters.down.withLock { $0 += 1 }
                return Response(status: .serviceUnavailable)
            case "garbage":
                return Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: "<html>")))
            default:
                return try json(
                    ["errorCode": 4_040_010, "errorMessage": "Transaction id not found."], status: .notFound)
            }
        }
        try await LoopbackServer.serve({ onRunning in
            Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: onRunning, logger: LoopbackServer.logger)
        }) { port in try await body(URL(string: "http://127.0.0.1:\(port)")!) }
    }

    static func json(_ object: [String: Any], status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) throws
        -> Response
    {
        var headers = headers
        headers[.contentType] = "application/json"
        let data = try JSONSerialization.data(withJSONObject: object)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func client(_ url: URL, retry: ServerAPIRetryPolicy = ServerAPIRetryPolicy()) -> ServerAPIClient {
        ServerAPIClient(
            credentials: credentials, environment: .custom(url), verifier: TestJWS.verifier(), retry: retry,
            timeout: .seconds(10))
    }

    @Test func aTransactionComesBackVerified() async throws {
        try await Self.withFakeAPI(Counters()) { url in
            let transaction = try await Self.client(url).transactionInfo("2000000123456789")
            #expect(transaction.transactionID == "2000000123456789")
            #expect(transaction.productID == "com.example.florist.vip.gold.monthly")
        }
    }

    @Test func applesErrorsKeepTheirNumbersAndForgeriesAreRefused() async throws {
        let counters = Counters()
        try await Self.withFakeAPI(counters) { url in
            let client = Self.client(url, retry: ServerAPIRetryPolicy(attempts: 3, firstDelay: .milliseconds(50)))
            let missing = await #expect(throws: ServerAPIError.self) { try await client.transactionInfo("1") }
            #expect(missing?.code == .apple && missing?.appleErrorCode == 4_040_010 && missing?.httpStatus == 404)

            let forged = await #expect(throws: ServerAPIError.self) { try await client.transactionInfo("forged") }
            #expect(forged?.code == .verificationFailed)

            let garbage = await #expect(throws: ServerAPIError.self) { try await client.transactionInfo("garbage") }
            #expect(garbage?.code == .malformedAnswer)

            let down = await #expect(throws: ServerAPIError.self) { try await client.transactionInfo("down") }
            #expect(down?.code == .apple && down?.appleErrorCode == nil && down?.httpStatus == 503)
            #expect(counters.down.withLock { $0 } == 3, "tried three times, then gave up")
        }
    }

    @Test func aRateLimitIsWaitedOutAsRetryAfterSays() async throws {
        let counters = Counters()
        try await Self.withFakeAPI(counters) { url in
            let started = ContinuousClock.now
            let transaction = try await Self.client(url).transactionInfo("busy")
            #expect(transaction.transactionID == "2000000123456789")
            #expect(counters.busy.withLock { $0 } == 2)
            #expect(ContinuousClock.now - started >= .seconds(1), "Retry-After: 1 was honoured")
        }
        // Without the time to wait, the rate limit is the answer.
        let impatient = Counters()
        try await Self.withFakeAPI(impatient) { url in
            let client = Self.client(url, retry: ServerAPIRetryPolicy(budget: .milliseconds(200)))
            let error = await #expect(throws: ServerAPIError.self) { try await client.transactionInfo("busy") }
            #expect(error?.appleErrorCode == 4_290_000 && error?.httpStatus == 429)
        }
    }

    @Test func anUnreachableServerIsACodedError() async throws {
        let client = Self.client(URL(string: "http://127.0.0.1:9")!)
        let error = await #expect(throws: ServerAPIError.self) {
            try await ServerAPIClient(
                credentials: Self.credentials, environment: .custom(URL(string: "http://127.0.0.1:9")!),
                verifier: TestJWS.verifier(), timeout: .seconds(2)
            ).transactionInfo("1")
        }
        #expect(error?.code == .unreachable)
        #expect(client.environment == .custom(URL(string: "http://127.0.0.1:9")!))
    }
}
