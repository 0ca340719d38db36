import Crypto
import Foundation
import IAPEntitlements
import IAPServer
import IAPSignedData
import IAPSimulator
import IAPStoreClient
import IAPTestSupport
import Logging
import Synchronization
import Testing

/// Answers from a validation server arriving in another order than the server wrote them: the Store ends with the
/// server's state after every write, not with whichever answer came last.
@Suite struct ServerAnswerOrderTests {
    typealias F = FloristCatalog

    /// A transport that, once armed, makes an upgrade's two posts cross: the update to the replaced subscription
    /// (silver) reaches the server first, the purchase of gold second, and the answers come back the other way round,
    /// so the last answer the Store reads predates the purchase.
    final class Crossing: HTTPTransport, Sendable {
        let base = URLSessionTransport()
        let armed = Atomic(false)
        let silverWritten = Atomic(false)
        let goldAnswered = Atomic(false)
        let reads = Atomic(0)

        func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportAnswer {
            if request.method == "GET" { reads.add(1, ordering: .sequentiallyConsistent) }
            guard armed.load(ordering: .sequentiallyConsistent), request.method == "POST",
                request.url.path == "/v1/transactions", let product = Self.product(posted: request.body)
            else { return try await base.send(request) }
            switch product {
            case F.silver:
                let answer = try await base.send(request)
                silverWritten.store(true, ordering: .sequentiallyConsistent)
                try await Self.wait(for: goldAnswered)
                return answer
            case F.gold:
                try await Self.wait(for: silverWritten)
                let answer = try await base.send(request)
                goldAnswered.store(true, ordering: .sequentiallyConsistent)
                return answer
            default:
                return try await base.send(request)
            }
        }

        /// Waits up to 10 s for `flag`.
        static func wait(for flag: borrowing Atomic<Bool>) async throws {
            for _ in 0..<1_000 where !flag.load(ordering: .sequentiallyConsistent) {
                try await Task.sleep(for: .milliseconds(10))
            }
            let came = flag.load(ordering: .sequentiallyConsistent)
            #expect(came, "the other post of the upgrade never came")
        }

        /// The product of the signed transaction a `POST /v1/transactions` carries.
        static func product(posted body: [UInt8]?) -> String? {
            struct Body: Decodable { var signedTransaction: String }
            guard let body, let posted = try? JSONDecoder().decode(Body.self, from: Data(body)) else { return nil }
            return try? CompactJWS(posted.signedTransaction).decodePayload(as: TransactionPayload.self).productID
        }
    }

    static let quiet: Logger = {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return logger
    }()

    @Test func anUpgradeWhoseAnswersCrossEndsOnGold() async throws {
        let world = try StoreHarness(.server)
        try world.customer("ana")
        try await StoreHarness.serve(world.simulator, apiKeys: [StoreHarness.validationKey]) { url in
            let transport = Crossing()
            let server = ValidationServer(
                url: url, apiKey: StoreHarness.validationKey, transport: transport, timeout: .seconds(15),
                answerVerification: AnswerVerification(
                    keys: [StoreHarness.answerSigner.keyID: StoreHarness.answerSigner.key.publicKey]))
            let store = Store(
                catalog: F.catalog, backend: try await world.backend("ana"), validation: .server(server),
                appAccountToken: UUID(), logger: Self.quiet)
            await store.start()
            try await store.purchase(F.silver)
            #expect(await store.entitlements.subscriptionGroups.first?.currentProductID == F.silver)

            transport.armed.store(true, ordering: .sequentiallyConsistent)
            let readsBefore = transport.reads.load(ordering: .sequentiallyConsistent)
            try await store.purchase(F.gold)
            // The stale answer (silver) is read after the purchase returns; the Store then asks once more.
            var current: String?
            for _ in 0..<1_000 {
                current = await store.entitlements.subscriptionGroups.first?.currentProductID
                if current == F.gold, transport.reads.load(ordering: .sequentiallyConsistent) > readsBefore { break }
                try await Task.sleep(for: .milliseconds(10))
            }
            let crossed = transport.goldAnswered.load(ordering: .sequentiallyConsistent)
            #expect(crossed)
            #expect(current == F.gold)
            #expect(transport.reads.load(ordering: .sequentiallyConsistent) > readsBefore, "a read after the crossing")
            #expect(await store.isPurchased(F.gold))
            #expect(await !store.isPurchased(F.silver))
        }
    }
}
