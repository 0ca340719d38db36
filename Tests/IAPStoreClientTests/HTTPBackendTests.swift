import AsyncHTTPClient
import Crypto
import Foundation
import IAPCatalog
import IAPCore
import IAPSignedData
import IAPSimulator
import IAPTestSupport
import NIOCore
import NIOHTTP1
import Testing

@testable import IAPStoreClient
@testable import IAPStoreClientTesting

/// What only the HTTP backend has: the event-stream format, the stream's life (unfinished first, heartbeats, a server
/// that goes away and comes back), the admin token, accounts and devices, offers, and the calls no scenario makes.
@Suite struct HTTPBackendTests {
    typealias F = FloristCatalog

    // MARK: - The event-stream format

    @Test func theParserReadsEveryLineEndingWhateverTheChunks() throws {
        let text =
            ": subscribed\r\n\r\nevent: transaction\r\nid: 7\r\ndata: abc\r\n\r\n"
            + "data: one\rdata:two\r\rfield-we-ignore: x\nevent:transaction\ndata: last\n\n: heartbeat\n\n"
        let expected = [
            ServerSentEventParser.Event(type: "transaction", data: "abc", id: "7"),
            ServerSentEventParser.Event(type: "message", data: "one\ntwo", id: "7"),
            ServerSentEventParser.Event(type: "transaction", data: "last", id: "7"),
        ]
        var whole = ServerSentEventParser()
        #expect(try whole.feed(Array(text.utf8)) == expected)
        // Split at every byte: the same events.
        var bytewise = ServerSentEventParser()
        var events: [ServerSentEventParser.Event] = []
        for byte in text.utf8 { events += try bytewise.feed([byte]) }
        #expect(events == expected)
    }

    @Test func theParserRefusesAnEventPastItsLimit() {
        var longLine = ServerSentEventParser()
        #expect(throws: ServerSentEventParser.Oversized.self) {
            _ = try longLine.feed(
                Array(repeating: UInt8(ascii: "a"), count: ServerSentEventParser.maximumEventSize + 1))
        }
        var manyLines = ServerSentEventParser()
        let line = Array("data: ".utf8) + Array(repeating: UInt8(ascii: "a"), count: 1000) + [0x0A]
        #expect(throws: ServerSentEventParser.Oversized.self) {
            for _ in 0...(ServerSentEventParser.maximumEventSize / 1000) { _ = try manyLines.feed(line) }
        }
    }

    // MARK: - The stream on the wire

    @Test func theStreamSendsUnfinishedTransactionsFirstThenNewOnesAndHeartbeats() async throws {
        let world = try StoreHarness(.signedTransactions)
        try world.customer("ana")
        let waiting = try #require(try world.simulator.purchase(F.flowers, account: "ana").transaction)
        try await StoreHarness.serve(world.simulator, heartbeat: .milliseconds(100)) { url in
            var request = HTTPClientRequest(url: url.absoluteString + "/simulator/accounts/ana/updates")
            request.headers.add(name: "Accept", value: "text/event-stream")
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
            #expect(response.status == .ok)
            #expect(response.headers.first(name: "Content-Type") == "text/event-stream")
            var text = ""
            var parser = ServerSentEventParser()
            var events: [ServerSentEventParser.Event] = []
            var bought: SimulatorTransaction?
            let deadline = ContinuousClock.now + .seconds(60)
            for try await chunk in response.body {
                text += String(buffer: chunk)
                events += try parser.feed(chunk.readableBytesView)
                if events.count == 1, bought == nil {
                    bought = try world.simulator.purchase(F.chocolates, account: "ana").transaction
                }
                if events.count == 2, text.contains(": heartbeat") { break }
                guard ContinuousClock.now < deadline else { break }
            }
            #expect(text.hasPrefix(": subscribed\n\n"))
            #expect(events.map(\.type) == ["transaction", "transaction"])
            #expect(events.map(\.id) == [waiting.transactionID, bought?.transactionID])
            #expect(events.map(\.data) == [waiting.jws, bought?.jws])
            #expect(text.contains(": heartbeat\n\n"))
        }
    }

    @Test func aBadStreamRequestGetsACodedError() async throws {
        let world = try StoreHarness(.signedTransactions)
        try world.customer("ana")
        try await StoreHarness.serve(world.simulator) { url in
            let cases = [
                ("/simulator/accounts/ana/updates?deviceId=nope", 400, "invalidQuery"),
                ("/simulator/accounts/bob/updates", 404, "unknownAccount"),
                ("/simulator/accounts/ana/updates?deviceId=\(UUID())", 404, "unknownDevice"),
                ("/simulator/accounts/ana/app-transaction?deviceId=nope", 400, "invalidQuery"),
            ]
            for (path, status, code) in cases {
                let response = try await HTTPClient.shared.execute(
                    HTTPClientRequest(url: url.absoluteString + path), timeout: .seconds(10))
                let body = try await response.body.collect(upTo: 1 << 16)
                #expect(Int(response.status.code) == status, "\(path)")
                #expect(String(buffer: body).contains("\"code\":\"\(code)\""), "\(path): \(String(buffer: body))")
            }
        }
    }

    @Test func updatesResumeWhenTheServerComesBack() async throws {
        let world = try StoreHarness(.signedTransactions)
        try world.customer("kid", askToBuy: true)
        // The first server: the app starts and asks to buy; then the server stops.
        let (port, store, log) = try await StoreHarness.serve(world.simulator) { url in
            let backend = try await HTTPStoreBackend.connect(
                to: url, account: "kid", timeout: .seconds(5), updatesIdleLimit: .seconds(5))
            let (store, log) = try await world.store(backend)
            #expect(try await store.purchase(F.flowers) == .pending)
            return (try #require(url.port), store, log)
        }
        // The parent approves while no server runs; the app's stream keeps trying.
        _ = try world.simulator.approve(try #require(world.simulator.pendingPurchases.first).id)
        #expect(await !store.isPurchased(F.flowers))
        // A server on the same port again: the stream reconnects and the approved purchase arrives.
        try await StoreHarness.serve(world.simulator, port: port) { _ in
            await log.wait(for: .purchaseSucceeded, product: F.flowers)
            #expect(await store.isPurchased(F.flowers))
            // Finished with the store after it was unlocked (a request of its own, which may still be on its way).
            await log.wait(for: .transactionFinished, product: F.flowers)
            let unfinished = try world.simulator.unfinishedTransactions(account: "kid")
            #expect(unfinished.isEmpty)
        }
    }

    // MARK: - Access, accounts and devices

    @Test func theAdminTokenIsSentEverywhereTheServerRequiresIt() async throws {
        let world = try StoreHarness(.signedTransactions)
        try world.customer("kid", askToBuy: true)
        try await StoreHarness.serve(world.simulator, adminToken: "s3cret-token") { url in
            for (token, code) in [(nil, "adminTokenMissing"), ("wrong", "adminTokenInvalid")] {
                await #expect(throws: StoreError(.init(rawValue: code), "")) {
                    _ = try await HTTPStoreBackend.connect(to: url, account: "kid", adminToken: token)
                }
            }
            let backend = try await HTTPStoreBackend.connect(to: url, account: "kid", adminToken: "s3cret-token")
            let (store, log) = try await world.store(backend)
            #expect(try await store.purchase(F.flowers) == .pending)
            _ = try world.simulator.approve(try #require(world.simulator.pendingPurchases.first).id)
            await log.wait(for: .purchaseSucceeded, product: F.flowers)
            #expect(await store.isPurchased(F.flowers))
        }
    }

    @Test func accountsDevicesAndAnUnreachableServer() async throws {
        let world = try StoreHarness(.signedTransactions)
        try world.customer("ana")
        try await StoreHarness.serve(world.simulator) { url in
            await #expect(throws: StoreError(.unknownAccount, "")) {
                _ = try await HTTPStoreBackend.connect(to: url, account: "newcomer")
            }
            let newcomer = try await HTTPStoreBackend.connect(to: url, account: "newcomer", createAccount: true)
            #expect(try world.simulator.devices(account: "newcomer") == [newcomer.deviceIdentifier])

            let tablet = try world.simulator.addDevice(account: "ana")
            let onTablet = try await HTTPStoreBackend.connect(to: url, account: "ana", device: tablet)
            #expect(onTablet.deviceIdentifier == tablet)
            await #expect(throws: StoreError(.unknownDevice, "")) {
                _ = try await HTTPStoreBackend.connect(to: url, account: "ana", device: UUID())
            }
            // An account made through the library, with a name no HTTP client would pick.
            try world.simulator.createAccount("ana maría/ø")
            let odd = try await HTTPStoreBackend.connect(to: url, account: "ana maría/ø")
            #expect(try await odd.allTransactions().isEmpty)
        }
        await #expect(throws: StoreError(.networkError, "")) {
            _ = try await HTTPStoreBackend.connect(
                to: URL(string: "http://127.0.0.1:9")!, account: "ana", timeout: .seconds(2))
        }
    }

    // MARK: - Offers, app transaction, refund requests

    @Test func aSignedPromotionalOfferIsHonouredAndAForgedOneRefused() async throws {
        let key = try P256.Signing.PrivateKey(rawRepresentation: Array(SHA256.hash(data: Array("promo-key".utf8))))
        var offered = F.catalog
        let gold = try #require(offered.products.firstIndex { $0.id == F.gold })
        offered.products[gold].subscription?.promotionalOffers = [
            SubscriptionOffer(
                id: "comeback", paymentMode: .payAsYouGo, period: SubscriptionPeriod(value: 1, unit: .month),
                numberOfPeriods: 2, price: 4.99)
        ]
        let catalog = offered
        let simulator = try AppStoreSimulator(
            catalog: catalog,
            configuration: SimulatorConfiguration(
                bundleID: StoreHarness.bundleID, start: StoreHarness.start, billingGracePeriodEnabled: false,
                promotionalOfferKeys: ["KEY1": key.publicKey]),
            pki: SimulatorTestKeys.pki)
        try simulator.createAccount("ana")
        _ = try simulator.purchase(F.gold, account: "ana")
        try simulator.setAutoRenew(account: "ana", group: F.vipGroup, enabled: false)
        try simulator.advance(by: 40 * 86_400)
        let verifier = try SignedDataVerifier(
            trustStore: SimulatorTestKeys.pki.trustStore,
            configuration: .init(
                bundleID: StoreHarness.bundleID, appAppleID: simulator.configuration.appAppleID,
                environments: [simulator.configuration.environment]))
        try await StoreHarness.serve(simulator) { url in
            let backend = try await HTTPStoreBackend.connect(to: url, account: "ana")
            let store = Store(catalog: catalog, backend: backend, validation: .signedTransactions(verifier))
            await store.start()
            func offer(signedWith signer: P256.Signing.PrivateKey) throws -> PromotionalOffer {
                try PromotionalOffer.sign(
                    key: signer, bundleID: StoreHarness.bundleID, keyID: "KEY1", productID: F.gold,
                    offerID: "comeback", appAccountToken: nil, nonce: UUID(),
                    timestamp: Int64(try simulator.now.timeIntervalSince1970 * 1000))
            }
            let forger = try P256.Signing.PrivateKey(rawRepresentation: Array(SHA256.hash(data: Array("x".utf8))))
            await #expect(throws: StoreError(.invalidOfferSignature, "")) {
                try await store.purchase(F.gold, offer: .promotional(try offer(signedWith: forger)))
            }
            #expect(await !store.isPurchased(F.gold))
            #expect(try await store.purchase(F.gold, offer: .promotional(try offer(signedWith: key))) == .purchased)
            #expect(await store.isPurchased(F.gold))
            let latest = try #require(try simulator.transactions(account: "ana").last)
            #expect(latest.payload.offerType == .promotional)
            #expect(latest.payload.offerIdentifier == "comeback")
        }
    }

    @Test func appTransactionRefundRequestAndRenewalInfoOverHTTP() async throws {
        let world = try StoreHarness(.signedTransactions)
        try world.customer("ana")
        try await StoreHarness.serve(world.simulator) { url in
            let backend = try await HTTPStoreBackend.connect(to: url, account: "ana")
            let (store, _) = try await world.store(backend)
            try await store.purchase(F.gold)
            let verifier = try SignedDataVerifier(
                trustStore: SimulatorTestKeys.pki.trustStore,
                configuration: .init(
                    bundleID: StoreHarness.bundleID, appAppleID: world.simulator.configuration.appAppleID,
                    environments: [world.simulator.configuration.environment]))
            let app = try await verifier.verifyAppTransaction(try await backend.appTransaction())
            #expect(app.isValid, "\(app.failures)")
            #expect(app.payload?.bundleID == StoreHarness.bundleID)
            let renewals = try await backend.subscriptionRenewalInfos()
            #expect(renewals.count == 1)
            #expect(try await verifier.verifyRenewalInfo(renewals[0]).payload?.autoRenewProductID == F.gold)
            #expect(try await backend.now() == StoreHarness.start)
            #expect(try await backend.appReceipt()?.count ?? 0 > 1000)

            let transactionID = try #require(try world.simulator.transactions(account: "ana").last?.transactionID)
            #expect(try await store.requestRefund(transactionID: transactionID) == .success)
            #expect(world.simulator.notifications.last?.type == .consumptionRequest)
            await #expect(throws: StoreError(.unknownTransaction, "")) {
                _ = try await backend.requestRefund(transactionID: "999")
            }
        }
    }
}
