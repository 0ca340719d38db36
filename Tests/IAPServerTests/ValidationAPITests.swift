import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import IAPCatalog
import IAPServer
import IAPSignedData
import IAPSimulator
import IAPSimulatorServer
import IAPTestSupport
import NIOCore
import Synchronization
import Testing

@Suite("Validation API through the router")
struct ValidationAPITests {
    @Test func aSignedTransactionIsRecordedAndAnsweredWithEntitlements() async throws {
        let harness = try ServerHarness()
        try harness.store.createAccount("ana")
        let token = UUID()
        let bought = try #require(
            try harness.store.purchase(FloristCatalog.flowers, account: "ana", options: .init(appAccountToken: token))
                .transaction)
        try await harness.application().test(.router) { client in
            let (status, answer) = try await client.post("/v1/transactions", ["signedTransaction": bought.jws])
            #expect(status == .ok)
            #expect(answer["customerId"] as? String == token.uuidString.lowercased())
            #expect(answer["entitledProductIds"] as? [String] == [FloristCatalog.flowers])

            // The same document again changes nothing; the customer can be found by token or original id.
            let (again, _) = try await client.post("/v1/transactions", ["signedTransaction": bought.jws])
            #expect(again == .ok)
            for id in [token.uuidString, bought.payload.originalTransactionID!] {
                let (found, entitlements) = try await client.get("/v1/customers/\(id)/entitlements")
                #expect(found == .ok)
                #expect(entitlements["entitledProductIds"] as? [String] == [FloristCatalog.flowers])
            }
            let (listed, transactions) = try await client.get("/v1/customers/\(token.uuidString)/transactions")
            #expect(listed == .ok)
            #expect((transactions["transactions"] as? [[String: Any]])?.count == 1)
        }
    }

    @Test func aLongHistoryIsListedAPageAtATime() async throws {
        let harness = try ServerHarness()
        try harness.store.createAccount("ana")
        let token = UUID()
        var bought: [String] = []
        for _ in 0..<250 {
            let transaction = try #require(
                try harness.store.purchase(
                    "com.example.florist.installation", account: "ana", options: .init(appAccountToken: token)
                ).transaction)
            bought.append(transaction.jws)
        }
        let documents = bought
        try await harness.application().test(.router) { client in
            for jws in documents {
                #expect(try await client.post("/v1/transactions", ["signedTransaction": jws]).0 == .ok)
            }
            var seen: [String] = []
            var cursor: String?
            var pages: [Int] = []
            repeat {
                let query = cursor.map { "?cursor=\($0)" } ?? ""
                let (status, page) = try await client.get("/v1/customers/\(token.uuidString)/transactions\(query)")
                #expect(status == .ok)
                let ids = (page["transactions"] as? [[String: Any]] ?? []).compactMap { $0["transactionId"] as? String }
                pages.append(ids.count)
                seen += ids
                cursor = page["next"] as? String
            } while cursor != nil && pages.count < 10
            #expect(pages == [100, 100, 50])
            #expect(Set(seen).count == 250 && seen == seen.sorted { ($0.count, $0) < ($1.count, $1) })
            let (small, first) = try await client.get("/v1/customers/\(token.uuidString)/transactions?limit=7")
            #expect(small == .ok && (first["transactions"] as? [Any])?.count == 7)
            for query in ["limit=0", "limit=1001", "limit=x", "cursor="] {
                let (status, answer) = try await client.get("/v1/customers/\(token.uuidString)/transactions?\(query)")
                #expect(status == .badRequest && answer["code"] as? String == "invalidQuery", "\(query)")
            }
        }
    }

    @Test func anotherCustomersClaimOnAPurchaseIsRefused() async throws {
        let harness = try ServerHarness()
        try harness.store.createAccount("ana")
        let bought = try #require(try harness.store.purchase(FloristCatalog.flowers, account: "ana").transaction)
        try await harness.application().test(.router) { client in
            let first = UUID().uuidString
            let (claimed, _) = try await client.post(
                "/v1/transactions", ["signedTransaction": bought.jws, "appAccountToken": first])
            #expect(claimed == .ok)
            let (refused, answer) = try await client.post(
                "/v1/transactions", ["signedTransaction": bought.jws, "appAccountToken": UUID().uuidString])
            #expect(refused == .conflict)
            #expect(answer["code"] as? String == "transactionClaimed")
        }
    }

    @Test func notificationsFromTheSimulatorEndInTheSimulatorsOwnView() async throws {
        let harness = try ServerHarness()
        let received = Mutex<[SimulatorNotification]>([])
        harness.store.addNotificationSink { notification in received.withLock { $0.append(notification) } }
        try await harness.application().test(.router) { client in
            /// Posts what the simulator sent since the last call, as Apple would, and expects each applied.
            func deliver() async throws {
                for notification in received.withLock({ queue in
                    defer { queue.removeAll() }; return queue
                }) {
                    let (status, answer) = try await client.post(
                        "/v1/notifications", ["signedPayload": notification.signedPayload])
                    #expect(status == .ok, "\(answer)")
                    #expect(answer["status"] as? String == "applied")
                }
            }
            try harness.store.createAccount("ana")
            let token = UUID()
            _ = try harness.store.purchase(FloristCatalog.gold, account: "ana", options: .init(appAccountToken: token))
            _ = try harness.store.purchase(
                FloristCatalog.chocolates, account: "ana", options: .init(appAccountToken: token))
            try await deliver()
            // A day at a time, delivering as Apple would (each notification within a day of its signing).
            for day in 0..<100 {
                if day == 60 {
                    try harness.store.setAutoRenew(account: "ana", group: FloristCatalog.vipGroup, enabled: false)
                }
                try harness.store.advance(by: 86_400)
                try await deliver()
            }
            let (status, answer) = try await client.get("/v1/customers/\(token.uuidString)/entitlements")
            #expect(status == .ok)
            let view = try harness.store.view(account: "ana")
            #expect(Set(answer["entitledProductIds"] as? [String] ?? []) == view.entitledProductIDs)
            #expect(!view.entitledProductIDs.contains(FloristCatalog.gold))
        }
    }

    @Test func aNotificationOlderThanTheLimitIsRefused() async throws {
        let harness = try ServerHarness()
        let received = Mutex<[SimulatorNotification]>([])
        harness.store.addNotificationSink { notification in received.withLock { $0.append(notification) } }
        try harness.store.createAccount("ana")
        _ = try harness.store.purchase(FloristCatalog.flowers, account: "ana")
        try harness.store.advance(by: 5 * 86_400)
        let notification = try #require(received.withLock { $0.first })
        try await harness.application().test(.router) { client in
            let (status, answer) = try await client.post(
                "/v1/notifications", ["signedPayload": notification.signedPayload])
            #expect(status == .unprocessableContent)
            #expect(answer["code"] as? String == "notificationTooOld")
        }
    }

    @Test func theSameNotificationFiveTimesAtOnceIsAppliedOnce() async throws {
        let harness = try ServerHarness()
        let received = Mutex<[SimulatorNotification]>([])
        harness.store.addNotificationSink { notification in received.withLock { $0.append(notification) } }
        try harness.store.createAccount("ana")
        _ = try harness.store.purchase(FloristCatalog.flowers, account: "ana")
        let notification = try #require(received.withLock { $0.first })
        try await harness.application().test(.router) { client in
            let statuses = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<5 {
                    group.addTask {
                        let (_, answer) = try await client.post(
                            "/v1/notifications", ["signedPayload": notification.signedPayload])
                        return answer["status"] as? String ?? "?"
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.sorted() == ["applied", "duplicate", "duplicate", "duplicate", "duplicate"])
        }
        #expect(try await harness.service.storage.counts().notifications == 1)
    }

    @Test func forgedAndMalformedInputGetsCodedClientErrors() async throws {
        let harness = try ServerHarness(maximumBodySize: 64 * 1024)
        try harness.store.createAccount("ana")
        let bought = try #require(try harness.store.purchase(FloristCatalog.flowers, account: "ana").transaction)
        // The same transaction signed by another PKI: a forgery as far as this server is concerned.
        let other = try AppStoreSimulator(
            catalog: FloristCatalog.catalog, configuration: SimulatorConfiguration(bundleID: ServerHarness.bundleID),
            pki: try SimulatorPKI(keys: SimulatorTestKeys.otherKeys))
        try other.createAccount("eve")
        let forged = try #require(try other.purchase(FloristCatalog.flowers, account: "eve").transaction)
        var characters = Array(bought.jws)
        characters[characters.count - 5] = characters[characters.count - 5] == "A" ? "B" : "A"
        let tampered = String(characters)
        // Signed by the trusted store but with ids that are not ids (a store that signs anything can sign these).
        let claimed = try CompactJWS(bought.jws).decodePayload(as: TransactionPayload.self)
        let notIDs = try [
            { (p: inout TransactionPayload) in p.productID = "flowers\u{0}" },
            { (p: inout TransactionPayload) in p.transactionID = "" },
            { (p: inout TransactionPayload) in p.originalTransactionID = String(repeating: "9", count: 201) },
            { (p: inout TransactionPayload) in p.currency = "US,D\n" },  // would break the console's CSV
        ].map { change in
            var payload = claimed
            change(&payload)
            return try SimulatorTestKeys.pki.jwsSigner().sign(payload)
        }

        try await harness.application().test(.router) { client in
            let cases: [(body: ByteBuffer, headers: HTTPFields, status: HTTPResponse.Status, code: String)] = [
                (json(["signedTransaction": forged.jws]), jsonHeaders, .unprocessableContent, "verificationFailed"),
                (json(["signedTransaction": notIDs[0]]), jsonHeaders, .unprocessableContent, "malformedTransaction"),
                (json(["signedTransaction": notIDs[1]]), jsonHeaders, .unprocessableContent, "malformedTransaction"),
                (json(["signedTransaction": notIDs[2]]), jsonHeaders, .unprocessableContent, "malformedTransaction"),
                (json(["signedTransaction": notIDs[3]]), jsonHeaders, .unprocessableContent, "malformedTransaction"),
                (json(["signedTransaction": tampered]), jsonHeaders, .unprocessableContent, "verificationFailed"),
                (json(["signedTransaction": "not.a.jws"]), jsonHeaders, .badRequest, "malformedBase64"),
                (json(["signedTransaction": "x"]), jsonHeaders, .badRequest, "malformedJWS"),
                (ByteBuffer(string: "{\"signedTransaction\": "), jsonHeaders, .badRequest, "malformedJSON"),
                (ByteBuffer(string: "[1, 2]"), jsonHeaders, .badRequest, "malformedJSON"),
                (json(["signedTransaction": bought.jws, "extra": 1]), jsonHeaders, .badRequest, "unknownField"),
                (json(["signedTransaction": 42]), jsonHeaders, .badRequest, "invalidField"),
                (json([:]), jsonHeaders, .badRequest, "missingField"),
                (
                    json(["signedTransaction": bought.jws, "appAccountToken": "nope"]), jsonHeaders, .badRequest,
                    "invalidAppAccountToken"
                ),
                (
                    json(["signedTransaction": bought.jws]), [.contentType: "text/plain"], .unsupportedMediaType,
                    "unsupportedMediaType"
                ),
                (
                    ByteBuffer(repeating: UInt8(ascii: " "), count: 100_000), jsonHeaders, .contentTooLarge,
                    "bodyTooLarge"
                ),
            ]
            for item in cases {
                try await client.execute(
                    uri: "/v1/transactions", method: .post, headers: item.headers, body: item.body
                ) { response in
                    #expect(response.status == item.status, "\(item.code)")
                    let code = try object(response)["code"] as? String
                    #expect(code == item.code)
                }
            }
            // Nothing of that was recorded.
            #expect(try await harness.service.storage.counts().transactions == 0)
        }
    }

    @Test func customerEndpointsNeedAnAPIKey() async throws {
        let harness = try ServerHarness()
        try await harness.application().test(.router) { client in
            let (missing, answer) = try await client.get("/v1/customers/x/entitlements", headers: [:])
            #expect(missing == .unauthorized)
            #expect(answer["code"] as? String == "apiKeyMissing")
            let (wrong, wrongAnswer) = try await client.get(
                "/v1/customers/x/entitlements", headers: [.authorization: "Bearer nope"])
            #expect(wrong == .forbidden)
            #expect(wrongAnswer["code"] as? String == "apiKeyInvalid")
            let (unknown, unknownAnswer) = try await client.get("/v1/customers/x/entitlements")
            #expect(unknown == .notFound)
            #expect(unknownAnswer["code"] as? String == "customerNotFound")
            let (route, routeAnswer) = try await client.get("/v1/nowhere")
            #expect(route == .notFound)
            #expect(routeAnswer["code"] as? String == "notFound")
        }
    }

    /// A transaction posted as renewal information (genuine, the same purchase) is refused by its kind and nothing is
    /// recorded; an operator's trial found it stored as a renewal.
    @Test func aTransactionPostedAsRenewalInformationIsRefused() async throws {
        let harness = try ServerHarness()
        try harness.store.createAccount("ana")
        let bought = try #require(
            try harness.store.purchase(FloristCatalog.installation, account: "ana", options: .init()).transaction)
        try await harness.application().test(.router) { client in
            let (status, answer) = try await client.post(
                "/v1/transactions", ["signedTransaction": bought.jws, "signedRenewalInfo": bought.jws])
            #expect(status == .badRequest)
            #expect(answer["code"] as? String == "wrongPayloadType")
            let (_, health) = try await client.get("/health", headers: [:])
            #expect((health["storage"] as? [String: Any])?["transactions"] as? Int == 0)
        }
    }

    @Test func consumptionsAreCountedOncePerIdempotencyKey() async throws {
        let harness = try ServerHarness()
        try harness.store.createAccount("ana")
        let token = UUID().uuidString
        let bought = try #require(
            try harness.store.purchase(
                FloristCatalog.installation, account: "ana", options: .init(quantity: 3)
            ).transaction)
        try await harness.application().test(.router) { client in
            _ = try await client.post("/v1/transactions", ["signedTransaction": bought.jws, "appAccountToken": token])
            let use: [String: Any] = ["productId": FloristCatalog.installation, "quantity": 2, "idempotencyKey": "k1"]
            let (first, answer) = try await client.post("/v1/customers/\(token)/consumptions", use, headers: keyHeaders)
            #expect(first == .created)
            #expect(answer["balance"] as? Int == 1)
            let (again, repeated) = try await client.post(
                "/v1/customers/\(token)/consumptions", use, headers: keyHeaders)
            #expect(again == .ok)
            #expect(repeated["recorded"] as? Bool == false)
            #expect(repeated["balance"] as? Int == 1)
            let (wrongKind, refused) = try await client.post(
                "/v1/customers/\(token)/consumptions",
                ["productId": FloristCatalog.flowers, "idempotencyKey": "k2"], headers: keyHeaders)
            #expect(wrongKind == .unprocessableContent)
            #expect(refused["code"] as? String == "notConsumable")
        }
    }
}

@Suite("Validation API on a real socket")
struct LiveServerTests {
    @Test func aLiveServerOnAnSQLiteFileRecordsAndAnswers() async throws {
        let path = TestFiles.url("live.sqlite").path
        let storage = try await SQLStorage(database: try SQLiteDatabase(path: path))
        let harness = try ServerHarness(storage: storage)
        try harness.store.createAccount("ana")
        let token = UUID()
        let bought = try #require(
            try harness.store.purchase(FloristCatalog.gold, account: "ana", options: .init(appAccountToken: token))
                .transaction)
        let renewal = try harness.store.renewalInfo(account: "ana", group: FloristCatalog.vipGroup)
        try await harness.application().test(.live) { client in
            let (status, answer) = try await client.post(
                "/v1/transactions", ["signedTransaction": bought.jws, "signedRenewalInfo": renewal])
            #expect(status == .ok)
            #expect(answer["entitledProductIds"] as? [String] == [FloristCatalog.gold])
            let (health, counts) = try await client.get("/health", headers: [:])
            #expect(health == .ok)
            #expect((counts["storage"] as? [String: Any])?["transactions"] as? Int == 1)
        }
        try await storage.shutdown()
        // What was answered 200 is in the file.
        let reopened = try await SQLStorage(database: try SQLiteDatabase(path: path))
        let records = try await reopened.records(
            of: CustomerKey(bundleID: ServerHarness.bundleID, id: token.uuidString.lowercased()))
        #expect(records.transactions.map(\.transactionID) == [bought.transactionID])
        #expect(records.renewals.count == 1)
        try await reopened.shutdown()
    }
}
