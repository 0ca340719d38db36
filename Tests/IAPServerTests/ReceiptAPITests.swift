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
import IAPTrust
import Logging
import NIOCore
import Synchronization
import Testing

@Suite("App receipts: POST /v1/receipts and Apple's verifyReceipt")
struct ReceiptAPITests {
    // MARK: - Real data against Apple's roots

    static let revenueCatReceipt = "receipts/revenuecat-base64encodedreceiptsample1.der"
    static let revenueCatAnswer = "json/verifyReceipt/revenuecat-verifyReceiptSample1.json"
    /// The `request_date` of RevenueCat's recorded answer: the server's clock is set to it.
    static let revenueCatRequestDate = Date(timeIntervalSince1970: 1_595_440_486.402)

    /// A server for RevenueCat's sample app, trusting Apple's root only.
    static func revenueCatApplication(
        environments: Set<AppStoreEnvironment> = [.sandbox], appAppleID: Int64? = nil, sharedSecret: String? = nil
    ) throws -> some ApplicationProtocol {
        let roots = try TrustAnchorLoader.certificates(
            contentsOfFile: SharedTestData.path("certs/apple-official/AppleIncRootCertificate.cer"))
        let app = AppConfiguration(
            bundleID: "com.revenuecat.sampleapp", appAppleID: appAppleID, environments: environments,
            trustStore: TrustStore(roots: roots),
            sharedSecret: sharedSecret)
        let service = try ValidationService(
            apps: [app], storage: MemoryStorage(), clock: { revenueCatRequestDate }, logger: Logger(label: "test"))
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return buildApplication(
            service: service, configuration: ServerConfiguration(port: 0, apiKeys: [ServerHarness.apiKey]),
            operatorAccess: .open, logger: logger)
    }

    static func revenueCatBase64() throws -> String {
        Data(try SharedTestData.bytes(revenueCatReceipt)).base64EncodedString()
    }

    @Test(
        "a real sandbox receipt answers what Apple's verifyReceipt answered for it",
        .enabled(if: SharedTestData.isAvailable, "\(SharedTestData.skipMessage)"))
    func realReceiptMatchesApplesAnswer() async throws {
        let base64 = try Self.revenueCatBase64()
        try await Self.revenueCatApplication().test(.router) { client in
            let expected = try #require(
                try JSONSerialization.jsonObject(with: Data(SharedTestData.bytes(Self.revenueCatAnswer)))
                    as? [String: Any])
            let (status, answer) = try await client.post("/sandbox/verifyReceipt", ["receipt-data": base64])
            #expect(status == .ok)
            #expect(answer["status"] as? Int == 0)
            #expect(answer["environment"] as? String == "Sandbox")
            #expect(answer["latest_receipt"] as? String == base64)

            // The receipt member: every field Apple gave, equal (download_id and the ids Apple zeroed included).
            let receipt = try #require(answer["receipt"] as? [String: Any])
            let appleReceipt = try #require(expected["receipt"] as? [String: Any])
            for (key, value) in appleReceipt where key != "in_app" {
                #expect("\(receipt[key] ?? "absent")" == "\(value)", "receipt.\(key)")
            }
            // in_app: the same transactions, each with Apple's fields and values.
            let inApp = try #require(receipt["in_app"] as? [[String: Any]])
            let appleInApp = try #require(appleReceipt["in_app"] as? [[String: Any]])
            Self.expectSameTransactions(inApp, appleInApp, ignoring: [])
            // latest_receipt_info: Apple's, in Apple's order, except the subscription group (receipts do not carry it).
            let latest = try #require(answer["latest_receipt_info"] as? [[String: Any]])
            let appleLatest = try #require(expected["latest_receipt_info"] as? [[String: Any]])
            #expect(
                latest.map { $0["transaction_id"] as? String } == appleLatest.map { $0["transaction_id"] as? String })
            Self.expectSameTransactions(latest, appleLatest, ignoring: ["subscription_group_identifier"])

            // The purchases are recorded: the customer is the first purchase's original transaction id.
            let (found, entitlements) = try await client.get("/v1/customers/1000000692878476/transactions")
            #expect(found == .ok)
            #expect((entitlements["transactions"] as? [Any])?.count == appleInApp.count)
        }
    }

    static func expectSameTransactions(_ ours: [[String: Any]], _ apples: [[String: Any]], ignoring: Set<String>) {
        #expect(ours.count == apples.count)
        let byID = Dictionary(ours.map { ($0["transaction_id"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        for apple in apples {
            let id = apple["transaction_id"] as? String ?? ""
            guard let mine = byID[id] else {
                Issue.record("transaction \(id) is missing")
                continue
            }
            for (key, value) in apple where !ignoring.contains(key) {
                #expect("\(mine[key] ?? "absent")" == "\(value)", "\(id).\(key)")
            }
        }
    }

    @Test(
        "the environment decides 21007 and 21008, the app's settings 21003 and 21004",
        .enabled(if: SharedTestData.isAvailable, "\(SharedTestData.skipMessage)"))
    func environmentsAndSecrets() async throws {
        let base64 = try Self.revenueCatBase64()
        try await Self.revenueCatApplication().test(.router) { client in
            let (_, production) = try await client.post("/verifyReceipt", ["receipt-data": base64])
            #expect(production["status"] as? Int == 21007)
        }
        try await Self.revenueCatApplication(environments: [.production], appAppleID: 1).test(.router) { client in
            let (_, refused) = try await client.post("/sandbox/verifyReceipt", ["receipt-data": base64])
            #expect(refused["status"] as? Int == 21003)
            #expect((refused["iapkit_error"] as? [String: Any])?["code"] as? String == "environmentMismatch")
        }
        try await Self.revenueCatApplication(sharedSecret: "0123abcd").test(.router) { client in
            for password in [nil, "wrong"] as [String?] {
                var body: [String: Any] = ["receipt-data": base64]
                body["password"] = password
                let (_, answer) = try await client.post("/sandbox/verifyReceipt", body)
                #expect(answer["status"] as? Int == 21004)
            }
            let (_, right) = try await client.post(
                "/sandbox/verifyReceipt", ["receipt-data": base64, "password": "0123abcd"])
            #expect(right["status"] as? Int == 0)
        }
    }

    @Test(
        "unreadable requests, malformed and forged receipts get Apple's status codes, never an HTTP error",
        .enabled(if: SharedTestData.isAvailable, "\(SharedTestData.skipMessage)"))
    func badRequestsGetStatusCodes() async throws {
        var tampered = try SharedTestData.bytes(Self.revenueCatReceipt)
        tampered[tampered.count / 2] ^= 0x01
        let cases: [(body: String, status: Int)] = [
            ("not json", 21000),
            ("[1,2]", 21000),
            (#"{"password":"x"}"#, 21000),
            (#"{"receipt-data":42}"#, 21000),
            (#"{"receipt-data":"%%%not base64%%%"}"#, 21002),
            (#"{"receipt-data":"AAAA"}"#, 21002),
            (#"{"receipt-data":"\#(Data(tampered).base64EncodedString())"}"#, 21003),
        ]
        try await Self.revenueCatApplication().test(.router) { client in
            for (body, expected) in cases {
                try await client.execute(
                    uri: "/sandbox/verifyReceipt", method: .post, headers: [.contentType: "text/plain"],
                    body: ByteBuffer(string: body)
                ) { response in
                    #expect(response.status == .ok, "\(body)")
                    let answer = try object(response)
                    #expect(answer["status"] as? Int == expected, "\(body): \(answer)")
                }
            }
        }
        // Another app's receipt.
        let harness = try ServerHarness()
        try await harness.application().test(.router) { client in
            let (_, answer) = try await client.post("/verifyReceipt", ["receipt-data": try Self.revenueCatBase64()])
            #expect(answer["status"] as? Int == 21003)
        }
    }

    // MARK: - Simulator receipts end to end

    @Test func aSimulatorReceiptIsRecordedAndNotificationsKeepVerifyReceiptCurrent() async throws {
        let harness = try ServerHarness(sharedSecret: "florist-secret")
        let received = SimulatorInbox(harness.store)
        try harness.store.createAccount("ana")
        let device = try harness.store.addDevice(account: "ana")
        _ = try harness.store.purchase(FloristCatalog.gold, account: "ana", device: device)
        _ = try harness.store.purchase(FloristCatalog.chocolates, account: "ana", device: device)
        let receipt = Data(try harness.store.receipt(account: "ana", device: device).bytes).base64EncodedString()
        let token = UUID().uuidString.lowercased()
        try await harness.application().test(.router) { client in
            let (status, answer) = try await client.post(
                "/v1/receipts", ["receiptData": receipt, "appAccountToken": token])
            #expect(status == .ok, "\(answer)")
            #expect(answer["customerId"] as? String == token)
            #expect(
                Set(answer["entitledProductIds"] as? [String] ?? [])
                    == [FloristCatalog.gold, FloristCatalog.chocolates])

            // Two months of renewals reach the server only as notifications; verifyReceipt with the old receipt
            // then answers the renewals too, and the renewal information.
            _ = received.take()
            for _ in 0..<62 {
                try harness.store.advance(by: 86_400)
                for notification in received.take() {
                    let (applied, _) = try await client.post(
                        "/v1/notifications", ["signedPayload": notification.signedPayload])
                    #expect(applied == .ok)
                }
            }
            let (_, legacy) = try await client.post(
                "/sandbox/verifyReceipt", ["receipt-data": receipt, "password": "florist-secret"])
            #expect(legacy["status"] as? Int == 0, "\(legacy)")
            let latest = try #require(legacy["latest_receipt_info"] as? [[String: Any]])
            let goldPeriods = latest.filter { $0["product_id"] as? String == FloristCatalog.gold }
            #expect(goldPeriods.count == 3, "\(latest.map { $0["product_id"] ?? "" })")
            #expect((legacy["receipt"] as? [String: Any]).flatMap { $0["in_app"] as? [Any] }?.count == 2)
            let pending = try #require(legacy["pending_renewal_info"] as? [[String: Any]])
            #expect(pending.first?["auto_renew_status"] as? String == "1")
            #expect(pending.first?["product_id"] as? String == FloristCatalog.gold)

            let (_, newest) = try await client.post(
                "/sandbox/verifyReceipt",
                ["receipt-data": receipt, "password": "florist-secret", "exclude-old-transactions": true])
            let newestGold = (newest["latest_receipt_info"] as? [[String: Any]] ?? []).filter {
                $0["product_id"] as? String == FloristCatalog.gold
            }
            #expect(newestGold.count == 1)
            #expect(newestGold.first?["transaction_id"] as? String == goldPeriods.last?["transaction_id"] as? String)
            // A Production endpoint sends the sandbox receipt to the sandbox.
            let (_, production) = try await client.post(
                "/verifyReceipt", ["receipt-data": receipt, "password": "florist-secret"])
            #expect(production["status"] as? Int == 21007)
        }
    }

    @Test func v1ReceiptsRefusesForgedAndMalformedReceiptsWithCodes() async throws {
        let harness = try ServerHarness()
        try harness.store.createAccount("ana")
        let device = try harness.store.addDevice(account: "ana")
        _ = try harness.store.purchase(FloristCatalog.flowers, account: "ana", device: device)
        var bytes = try harness.store.receipt(account: "ana", device: device).bytes
        bytes[bytes.count - 10] ^= 0x40
        let forgedReceipt = Data(bytes).base64EncodedString()
        try await harness.application().test(.router) { client in
            let (forged, answer) = try await client.post(
                "/v1/receipts", ["receiptData": forgedReceipt])
            #expect(forged == .unprocessableContent)
            #expect(answer["code"] as? String == "verificationFailed")
            let (notBase64, malformed) = try await client.post("/v1/receipts", ["receiptData": "***"])
            #expect(notBase64 == .badRequest)
            #expect(malformed["code"] as? String == "invalidReceiptData")
            let (notReceipt, parsed) = try await client.post("/v1/receipts", ["receiptData": "AAAA"])
            #expect(notReceipt == .badRequest)
            #expect(parsed["code"] as? String != nil)
            #expect(try await harness.service.storage.counts().transactions == 0)
        }
    }
}
