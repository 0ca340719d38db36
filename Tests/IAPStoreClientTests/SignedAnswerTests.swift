import Crypto
import Foundation
import IAPCore
import IAPServer
import IAPSimulator
import IAPStoreClient
import IAPTestSupport
import Synchronization
import Testing

/// Answers the server signs over the app's nonce, checked by the Store before it unlocks: a real server on a loopback
/// socket, and between it and the app a transport that plays the customer's own proxy (rewriting, replaying).
@Suite struct SignedAnswerTests {
    typealias F = FloristCatalog

    /// What the proxy on the device does to the server's answers.
    enum Meddling: Sendable {
        case none
        /// Rewrites every successful answer's body (a product the customer did not buy appears).
        case rewriteBody
        /// Hands every later request the first successful answer it saw.
        case replayFirst
        /// Answers a request sent again (same method, URL and body) with the answer it got the first time.
        case replaySame
        /// Drops the signature header.
        case stripSignature
        /// Sends the server another request body than the app's (keeping the nonce).
        case swapRequestBody
    }

    /// A transport that passes requests on and meddles with the answers.
    struct Proxy: HTTPTransport {
        let meddling: Meddling
        let recorder = Recorder()
        let base = URLSessionTransport()

        final class Recorder: Sendable {
            let first = Mutex<HTTPTransportAnswer?>(nil)
            let byRequest = Mutex<[String: HTTPTransportAnswer]>([:])
        }

        func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportAnswer {
            var request = request
            if case .swapRequestBody = meddling, request.method == "POST", let body = request.body {
                // The same purchase claimed for another customer: the app account token swapped.
                let text = String(decoding: body, as: UTF8.self)
                if let range = text.range(of: #""appAccountToken":""#) {
                    let start = range.upperBound
                    let end = text.index(start, offsetBy: 36, limitedBy: text.endIndex) ?? text.endIndex
                    request.body = Array(
                        text.replacingCharacters(in: start..<end, with: "00000000-0000-4000-8000-000000000001").utf8)
                }
            }
            var answer = try await base.send(request)
            guard (200..<300).contains(answer.status) else { return answer }
            switch meddling {
            case .none: break
            case .rewriteBody:
                let text = String(decoding: answer.body, as: UTF8.self)
                answer.body = Array(
                    text.replacingOccurrences(
                        of: "\"entitledProductIds\":[", with: "\"entitledProductIds\":[\"\(F.gold)\","
                    ).utf8)
            case .replayFirst:
                let recorded = recorder.first.withLock { first in
                    if first == nil { first = answer }
                    return first
                }
                if let recorded { answer = recorded }
            case .replaySame:
                let key = "\(request.method) \(request.url) \(request.body ?? [])"
                answer = recorder.byRequest.withLock { known in
                    if let earlier = known[key] { return earlier }
                    known[key] = answer
                    return answer
                }
            case .stripSignature:
                answer.headers.removeAll { $0.name.lowercased() == SignedAnswer.signatureHeader.lowercased() }
            case .swapRequestBody: break
            }
            return answer
        }
    }

    /// The code a purchase of flowers fails with, in server validation through `proxy`, with the device's clock
    /// `skew` seconds from the server's (both the wall clock; the store's own clock plays no part) and trusting `keys`
    /// (the server's own by default).
    static func purchaseFailure(
        _ meddling: Meddling, skew: TimeInterval = 0, keys: [String: P256.Signing.PublicKey]? = nil,
        signer: AnswerSigner? = StoreHarness.answerSigner, warmUp: Bool = false
    ) async throws -> StoreError.Code? {
        let world = try StoreHarness(.server)
        try world.customer("ana")
        let simulator = world.simulator
        return try await StoreHarness.serve(simulator, apiKeys: [StoreHarness.validationKey], answerSigner: signer) {
            url in
            let verification = AnswerVerification(
                keys: keys ?? [StoreHarness.answerSigner.keyID: StoreHarness.answerSigner.key.publicKey],
                clock: { Date().addingTimeInterval(skew) })
            let server = ValidationServer(
                url: url, apiKey: StoreHarness.validationKey, transport: Proxy(meddling: meddling),
                timeout: StoreHarness.requestLimit, answerVerification: verification)
            let store = Store(
                catalog: F.catalog, backend: try await world.backend("ana"), validation: .server(server),
                persistence: MemoryStorePersistence())
            await store.start()
            if warmUp { _ = try? await store.purchase(F.chocolates) }
            do {
                _ = try await store.purchase(F.flowers)
            } catch let error as StoreError {
                #expect(await !store.purchasedProductIDs.contains(F.flowers), "nothing unlocked")
                #expect(await !store.purchasedProductIDs.contains(F.gold))
                return error.code
            }
            return nil
        }
    }

    @Test func signedAnswersAreBelieved() async throws {
        #expect(try await Self.purchaseFailure(.none) == nil)
    }

    @Test func aRewrittenAnswerIsRefused() async throws {
        #expect(try await Self.purchaseFailure(.rewriteBody) == .answerSignatureInvalid)
    }

    @Test func anAnswerToAnotherRequestIsRefused() async throws {
        // The first answer the proxy sees (launch's reconciliation, or a first purchase) comes back for the purchase:
        // signed for another request line or body, it does not verify for this one.
        #expect(try await Self.purchaseFailure(.replayFirst, warmUp: true) == .answerSignatureInvalid)
    }

    @Test func anEarlierAnswerToTheSameRequestIsAReplay() async throws {
        // The same question asked twice (what does this customer own?): the second time the proxy answers with the
        // first answer, signed for the first nonce.
        let world = try StoreHarness(.server)
        try world.customer("ana")
        let token = UUID()
        let bought = try #require(
            try world.simulator.purchase(F.flowers, account: "ana", options: .init(appAccountToken: token)).transaction)
        try await StoreHarness.serve(world.simulator, apiKeys: [StoreHarness.validationKey]) { url in
            let client = JSONHTTPClient(
                baseURL: url, headers: [("Authorization", "Bearer \(StoreHarness.validationKey)")],
                timeout: StoreHarness.requestLimit, unreachable: .serverUnreachable,
                transport: Proxy(meddling: .replaySame),
                answers: AnswerVerification(
                    keys: [StoreHarness.answerSigner.keyID: StoreHarness.answerSigner.key.publicKey]))
            struct Posted: Encodable { var signedTransaction: String }
            _ = try await client.send("POST", "/v1/transactions", body: Posted(signedTransaction: bought.jws))
            let path = "/v1/customers/\(token.uuidString.lowercased())/entitlements"
            #expect(try await client.send("GET", path).status == 200)
            do {
                _ = try await client.send("GET", path)
                Issue.record("a replayed answer was accepted")
            } catch let error as StoreError {
                #expect(error.code == .answerReplayed)
            }
        }
    }

    @Test func anAnswerToAnotherRequestBodyIsRefused() async throws {
        #expect(try await Self.purchaseFailure(.swapRequestBody) == .answerSignatureInvalid)
    }

    @Test func anUnsignedAnswerIsRefused() async throws {
        #expect(try await Self.purchaseFailure(.stripSignature) == .answerNotSigned)
        #expect(try await Self.purchaseFailure(.none, signer: nil) == .answerNotSigned, "a server that does not sign")
    }

    @Test func anAnswerSignedByAnotherKeyIsRefused() async throws {
        let other = TestJWS.key("somebody else's answer key").publicKey
        #expect(
            try await Self.purchaseFailure(.none, keys: [StoreHarness.answerSigner.keyID: other])
                == .answerSignatureInvalid)
        #expect(try await Self.purchaseFailure(.none, keys: ["another-id": other]) == .answerSignatureInvalid)
    }

    @Test func aStaleAnswerIsRefused() async throws {
        // The device's clock stands an hour after the server's: the answer is older than the five minutes allowed.
        #expect(try await Self.purchaseFailure(.none, skew: 3_600) == .answerStale)
        #expect(try await Self.purchaseFailure(.none, skew: -3_600) == .answerStale)
    }

    @Test func theSignedBytesAreTheHeaderFormatsOwn() throws {
        let key = TestJWS.key("header check")
        let message = SignedAnswer.message(
            method: "GET", target: "/v1/customers/x/entitlements", status: 200, nonce: "0123456789abcdef",
            time: 1_767_225_600_000, requestBody: [UInt8](), body: Array("{}".utf8))
        let signature = SignedAnswer.Signature(
            keyID: "k1", time: 1_767_225_600_000, nonce: "0123456789abcdef",
            signature: Array(try key.signature(for: message).derRepresentation))
        let read = try #require(SignedAnswer.Signature(header: signature.header))
        #expect(read == signature)
        for bad in [
            "v2; kid=k1; t=1; n=0123456789abcdef; sig=AA==", "v1; kid=k1; t=x; n=0123456789abcdef; sig=AA==",
            "v1; kid=k1; kid=k2; t=1; n=0123456789abcdef; sig=AA==", "v1; t=1; n=0123456789abcdef; sig=AA==",
        ] {
            #expect(SignedAnswer.Signature(header: bad) == nil, "\(bad)")
        }
        // The request's body is signed too: the same answer to another request body is another message.
        let otherRequest = SignedAnswer.message(
            method: "GET", target: "/v1/customers/x/entitlements", status: 200, nonce: "0123456789abcdef",
            time: 1_767_225_600_000, requestBody: Array("{}".utf8), body: Array("{}".utf8))
        #expect(otherRequest != message)
        #expect(SignedAnswer.isValidNonce("0123456789abcdef") && !SignedAnswer.isValidNonce("short"))
        #expect(!SignedAnswer.isValidNonce("0123456789abcdef\n"))
    }
}
