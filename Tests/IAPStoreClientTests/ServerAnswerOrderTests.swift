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
/// server's state after every write, not with whichever answer came last, and a purchase returns only then.
@Suite struct ServerAnswerOrderTests {
    typealias F = FloristCatalog

    /// A transport that, once armed, makes two posts cross: the post of `first`'s product reaches the server first and
    /// the post of `second`'s second, and the answers come back the other way round, so the last answer the Store
    /// reads predates the second post's write.
    final class Crossing: HTTPTransport, Sendable {
        let base = URLSessionTransport()
        let first: String
        let second: String
        let armed = Atomic(false)
        let firstWritten = Atomic(false)
        let secondAnswered = Atomic(false)
        let reads = Atomic(0)

        init(first: String, second: String) {
            self.first = first
            self.second = second
        }

        func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportAnswer {
            if request.method == "GET" { reads.add(1, ordering: .sequentiallyConsistent) }
            guard armed.load(ordering: .sequentiallyConsistent), request.method == "POST",
                request.url.path == "/v1/transactions", let product = Self.product(posted: request.body)
            else { return try await base.send(request) }
            switch product {
            case first:
                let answer = try await base.send(request)
                firstWritten.store(true, ordering: .sequentiallyConsistent)
                try await Self.wait(for: secondAnswered)
                return answer
            case second:
                try await Self.wait(for: firstWritten)
                let answer = try await base.send(request)
                secondAnswered.store(true, ordering: .sequentiallyConsistent)
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
            #expect(came, "the other post never came")
        }

        /// The product of the signed transaction a `POST /v1/transactions` carries.
        static func product(posted body: [UInt8]?) -> String? {
            struct Body: Decodable { var signedTransaction: String }
            guard let body, let posted = try? JSONDecoder().decode(Body.self, from: Data(body)) else { return nil }
            return try? CompactJWS(posted.signedTransaction).decodePayload(as: TransactionPayload.self).productID
        }
    }

    /// A transport that, once armed, holds every post of `product` until released.
    final class HoldingPosts: HTTPTransport, Sendable {
        let base = URLSessionTransport()
        let product: String
        let armed = Atomic(false)
        let released = Atomic(false)
        let held = Atomic(0)

        init(of product: String) { self.product = product }

        func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportAnswer {
            if armed.load(ordering: .sequentiallyConsistent), request.method == "POST",
                Crossing.product(posted: request.body) == product
            {
                held.add(1, ordering: .sequentiallyConsistent)
                try await Crossing.wait(for: released)
            }
            return try await base.send(request)
        }
    }

    static let quiet: Logger = {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return logger
    }()

    /// A store of "ana" validating with the harness's server at `url` through `transport`.
    static func store(_ world: StoreHarness, _ url: URL, _ transport: any HTTPTransport) async throws -> Store {
        let server = ValidationServer(
            url: url, apiKey: StoreHarness.validationKey, transport: transport, timeout: .seconds(15),
            answerVerification: AnswerVerification(
                keys: [StoreHarness.answerSigner.keyID: StoreHarness.answerSigner.key.publicKey]))
        return Store(
            catalog: F.catalog, backend: try await world.backend("ana"), validation: .server(server),
            appAccountToken: UUID(), logger: quiet)
    }

    @Test func anUpgradeWhoseAnswersCrossEndsOnGold() async throws {
        let world = try StoreHarness(.server)
        try world.customer("ana")
        try await StoreHarness.serve(world.simulator, apiKeys: [StoreHarness.validationKey]) { url in
            let transport = Crossing(first: F.silver, second: F.gold)
            let store = try await Self.store(world, url, transport)
            await store.start()
            try await store.purchase(F.silver)
            #expect(await store.entitlements.subscriptionGroups.first?.currentProductID == F.silver)

            transport.armed.store(true, ordering: .sequentiallyConsistent)
            let readsBefore = transport.reads.load(ordering: .sequentiallyConsistent)
            try await store.purchase(F.gold)
            // The stale answer (silver) came after gold's; the purchase returned only after one more read.
            let crossed = transport.secondAnswered.load(ordering: .sequentiallyConsistent)
            #expect(crossed)
            #expect(await store.entitlements.subscriptionGroups.first?.currentProductID == F.gold)
            #expect(transport.reads.load(ordering: .sequentiallyConsistent) > readsBefore, "a read after the crossing")
            #expect(await store.isPurchased(F.gold))
            #expect(await !store.isPurchased(F.silver))
        }
    }

    @Test func aRefundHiddenForAMomentByAStaleAnswerIsAnnouncedOnce() async throws {
        let world = try StoreHarness(.server)
        try world.customer("ana")
        try await StoreHarness.serve(world.simulator, apiKeys: [StoreHarness.validationKey]) { url in
            // The purchase of chocolates is written first and answered last: its answer predates the refund.
            let transport = Crossing(first: F.chocolates, second: F.flowers)
            let store = try await Self.store(world, url, transport)
            let log = EventLog(await store.events())
            await store.start()
            let flowers = try #require(try await store.purchase(F.flowers).transaction?.id)
            transport.armed.store(true, ordering: .sequentiallyConsistent)
            let readsBefore = transport.reads.load(ordering: .sequentiallyConsistent)
            let buying = Task { try await store.purchase(F.chocolates) }
            try await Crossing.wait(for: transport.firstWritten)
            try world.simulator.refund(flowers)
            _ = try await buying.value
            // The stale answer hid the refund; the purchase returned only after the read that brings it back.
            #expect(await !store.isPurchased(F.flowers))
            #expect(await store.isPurchased(F.chocolates))
            #expect(transport.reads.load(ordering: .sequentiallyConsistent) > readsBefore, "a read after the crossing")
            try await Task.sleep(for: .milliseconds(200))  // anything announced late would arrive by now
            #expect(log.count(.refunded, product: F.flowers) == 1)
        }
    }

    /// A reconciliation can take long (the App Store's sync, then a post of each transaction): a purchase made
    /// meanwhile returns without waiting for it, and the reconciliation catches up when it ends.
    @Test func aPurchaseDoesNotWaitForAReconciliationUnderWay() async throws {
        let world = try StoreHarness(.server)
        try world.customer("ana")
        try await StoreHarness.serve(world.simulator, apiKeys: [StoreHarness.validationKey]) { url in
            let transport = HoldingPosts(of: F.chocolates)
            let store = try await Self.store(world, url, transport)
            await store.start()
            #expect(try await store.purchase(F.chocolates) == .purchased)
            transport.armed.store(true, ordering: .sequentiallyConsistent)
            let reconciling = Task { await store.reconcile() }
            for _ in 0..<1_000 where transport.held.load(ordering: .sequentiallyConsistent) == 0 {
                try await Task.sleep(for: .milliseconds(10))
            }
            let held = transport.held.load(ordering: .sequentiallyConsistent)
            #expect(held == 1, "the reconciliation's post of chocolates is held")
            #expect(try await store.purchase(F.flowers) == .purchased)
            #expect(await store.isPurchased(F.flowers))
            let stillHeld = !transport.released.load(ordering: .sequentiallyConsistent)
            #expect(stillHeld)
            transport.released.store(true, ordering: .sequentiallyConsistent)
            await reconciling.value
            #expect(await store.isPurchased(F.flowers))
            #expect(await store.isPurchased(F.chocolates))
        }
    }
}
