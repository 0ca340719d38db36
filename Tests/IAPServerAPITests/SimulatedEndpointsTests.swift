import AsyncHTTPClient
import Foundation
import IAPCatalog
import IAPServerAPI
import IAPSignedData
import IAPSimulator
import IAPTestSupport
import NIOCore
import NIOHTTP1
import Testing

/// Every endpoint of the App Store Server API, the Swift client against `iapkit serve`'s copy on a loopback socket:
/// what comes back verified, what the simulator's state became, and Apple's error codes.
@Suite struct SimulatedEndpointsTests {
    typealias S = SimulatedServerAPITests
    static let month = SubscriptionPeriod(value: 1, unit: .month)

    @Test func subscriptionStatusesListEveryGroupWithVerifiedDocuments() async throws {
        let simulator = try S.simulator()
        try simulator.createAccount("ana")
        let gold = try #require(try simulator.purchase(FloristCatalog.gold, account: "ana").transaction)
        let flowers = try #require(try simulator.purchase(FloristCatalog.flowers, account: "ana").transaction)
        try await S.serve(simulator) { url in
            let client = try S.client(url)
            for id in [gold.transactionID, flowers.transactionID] {
                let statuses = try await client.subscriptionStatuses(id)
                #expect(statuses.bundleID == "com.example.florist" && statuses.environment == "Sandbox")
                let group = try #require(statuses.groups.only)
                #expect(group.groupID == FloristCatalog.vipGroup)
                let last = try #require(group.lastTransactions.only)
                #expect(last.status == 1 && last.originalTransactionID == gold.transactionID)
                #expect(last.transaction.productID == FloristCatalog.gold)
                #expect(last.renewalInfo.autoRenewProductID == FloristCatalog.gold)
            }
            #expect(try await client.subscriptionStatuses(gold.transactionID, statuses: [2, 5]).groups.isEmpty)
            let bad = await #expect(throws: ServerAPIError.self) {
                try await client.subscriptionStatuses(gold.transactionID, statuses: [9])
            }
            #expect(bad?.appleErrorCode == 4_000_031)

            // The subscription lapses: status 2 (expired) and the app transaction id finds the customer too.
            try simulator.setAutoRenew(account: "ana", group: FloristCatalog.vipGroup, enabled: false)
            try simulator.advance(by: Self.month, count: 2)
            let app = try await client.appTransactionInfo(flowers.transactionID)
            let appTransactionID = try #require(app.appTransactionID)
            let expired = try await client.subscriptionStatuses(appTransactionID, statuses: [2])
            #expect(expired.groups.only?.lastTransactions.only?.status == 2)
        }
    }

    @Test func refundsComeBackOldestFirstToTheLastPage() async throws {
        let simulator = try S.simulator()
        try simulator.createAccount("ana")
        var bought: [String] = []
        for _ in 0..<23 {
            bought.append(
                try #require(try simulator.purchase(FloristCatalog.installation, account: "ana").transaction)
                    .transactionID)
        }
        // Refunded in reverse order of purchase, a minute apart: the lookup lists them by refund date.
        for id in bought.reversed() {
            try simulator.advance(by: 60)
            try simulator.refund(id)
        }
        let refunded = bought
        try await S.serve(simulator) { url in
            let client = try S.client(url)
            let first = try await client.refundHistoryPage(refunded[0])
            #expect(first.items.count == 20 && first.hasMore)
            let all = try await client.refundHistory(refunded[0]).collect()
            #expect(all.map(\.transactionID) == refunded.reversed().map(Optional.some))
            #expect(all.allSatisfy { $0.revocationDate != nil })
            let invalid = await #expect(throws: ServerAPIError.self) {
                try await client.refundHistoryPage(refunded[0], revision: "nonsense")
            }
            #expect(invalid?.appleErrorCode == 4_000_005)
        }
    }

    @Test func anOrderIdFromTheReceiptFindsItsTransaction() async throws {
        let simulator = try S.simulator()
        try simulator.createAccount("ana")
        try simulator.createAccount("ben")
        try simulator.joinFamily("smiths", account: "ana")
        try simulator.joinFamily("smiths", account: "ben")
        let bought = try #require(try simulator.purchase(FloristCatalog.flowers, account: "ana").transaction)
        let orderID = try #require(bought.orderID)
        let shared = try #require(try simulator.transactions(account: "ben").only)
        #expect(shared.orderID == nil)
        try await S.serve(simulator) { url in
            let client = try S.client(url)
            let found = try await client.lookUpOrder(orderID)
            #expect(found.isValid && found.transactions.map(\.transactionID) == [bought.transactionID])
            for unknown in ["MZZZZZZZZZ", "not an order", orderID.lowercased()] {
                let missing = try await client.lookUpOrder(unknown)
                #expect(missing.status == 1 && missing.transactions.isEmpty, "\(unknown)")
            }
        }
    }

    @Test func aRenewalDateIsExtendedOnceARequestAndTwiceAYear() async throws {
        let simulator = try S.simulator()
        try simulator.createAccount("ana")
        let gold = try #require(try simulator.purchase(FloristCatalog.gold, account: "ana").transaction)
        let expires = try #require(gold.payload.expiresDate?.date)
        try await S.serve(simulator) { url in
            let client = try S.client(url)
            let extended = try await client.extendRenewalDate(
                originalTransactionID: gold.transactionID, days: 30, reasonCode: 1, requestIdentifier: "outage-1")
            #expect(extended.success && extended.originalTransactionID == gold.transactionID)
            #expect(extended.effectiveDate == expires.addingTimeInterval(30 * 86_400))
            #expect(extended.webOrderLineItemID == gold.payload.webOrderLineItemID)
            let info = try await client.transactionInfo(gold.transactionID)
            #expect(info.expiresDate?.date == extended.effectiveDate)
            #expect(simulator.notifications.last?.type == .renewalExtended)

            // The same request again: the same answer, no second extension.
            let again = try await client.extendRenewalDate(
                originalTransactionID: gold.transactionID, days: 30, reasonCode: 1, requestIdentifier: "outage-1")
            #expect(again == extended)
            _ = try await client.extendRenewalDate(
                originalTransactionID: gold.transactionID, days: 5, reasonCode: 3, requestIdentifier: "outage-2")
            let third = await #expect(throws: ServerAPIError.self) {
                try await client.extendRenewalDate(
                    originalTransactionID: gold.transactionID, days: 5, reasonCode: 3, requestIdentifier: "outage-3")
            }
            #expect(third?.appleErrorCode == 4_030_005 && third?.httpStatus == 403)

            for (days, reason, identifier, code) in [
                (91, 1, "r", 4_000_009), (0, 1, "r", 4_000_009), (5, 4, "r", 4_000_010), (5, 1, "", 4_000_011),
            ] {
                let refused = await #expect(throws: ServerAPIError.self) {
                    try await client.extendRenewalDate(
                        originalTransactionID: gold.transactionID, days: days, reasonCode: reason,
                        requestIdentifier: identifier)
                }
                #expect(refused?.appleErrorCode == code, "\(days) \(reason) '\(identifier)'")
            }
            let flowers = try #require(try simulator.purchase(FloristCatalog.flowers, account: "ana").transaction)
            let notSubscription = await #expect(throws: ServerAPIError.self) {
                try await client.extendRenewalDate(
                    originalTransactionID: flowers.transactionID, days: 5, reasonCode: 1, requestIdentifier: "x")
            }
            #expect(notSubscription?.appleErrorCode == 4_030_004)
            let unknown = await #expect(throws: ServerAPIError.self) {
                try await client.extendRenewalDate(
                    originalTransactionID: "12345", days: 5, reasonCode: 1, requestIdentifier: "x")
            }
            #expect(unknown?.appleErrorCode == 4_040_005)
        }
    }

    @Test func aMassExtensionReachesTheStorefrontsAskedAndSaysSo() async throws {
        let simulator = try S.simulator()
        try simulator.createAccount("ana", storefront: "USA")
        try simulator.createAccount("ben", storefront: "GBR")
        try simulator.createAccount("cy", storefront: "USA")
        for account in ["ana", "ben", "cy"] { _ = try simulator.purchase(FloristCatalog.gold, account: account) }
        try await S.serve(simulator) { url in
            let client = try S.client(url)
            let id = try await client.extendRenewalDatesForAllActiveSubscribers(
                productID: FloristCatalog.gold, days: 7, reasonCode: 3, requestIdentifier: "storm",
                storefrontCountryCodes: ["USA"])
            #expect(id == "storm")
            let status = try await client.massExtensionStatus(
                productID: FloristCatalog.gold, requestIdentifier: "storm")
            #expect(status.complete && status.succeededCount == 2 && status.failedCount == 0)
            #expect(status.completeDate != nil)
            let summary = try #require(simulator.notifications.last)
            #expect(summary.type == .renewalExtension && summary.subtype == .summary && summary.accountID == nil)
            #expect(summary.payload.summary?.succeededCount == 2)
            #expect(
                simulator.notifications.filter { $0.type == .renewalExtended }.compactMap(\.accountID) == ["ana", "cy"])

            let unknown = await #expect(throws: ServerAPIError.self) {
                try await client.massExtensionStatus(productID: FloristCatalog.gold, requestIdentifier: "nope")
            }
            #expect(unknown?.appleErrorCode == 4_040_009)
            let badStorefront = await #expect(throws: ServerAPIError.self) {
                try await client.extendRenewalDatesForAllActiveSubscribers(
                    productID: FloristCatalog.gold, days: 7, reasonCode: 3, requestIdentifier: "x",
                    storefrontCountryCodes: ["XXX"])
            }
            #expect(badStorefront?.appleErrorCode == 4_000_028)
            let badProduct = await #expect(throws: ServerAPIError.self) {
                try await client.extendRenewalDatesForAllActiveSubscribers(
                    productID: FloristCatalog.flowers, days: 7, reasonCode: 3, requestIdentifier: "x")
            }
            #expect(badProduct?.appleErrorCode == 4_000_023)
        }
    }

    @Test func consumptionInformationAnswersARefundRequest() async throws {
        let simulator = try S.simulator()
        try simulator.createAccount("ana")
        let bought = try #require(try simulator.purchase(FloristCatalog.installation, account: "ana").transaction)
        try await S.serve(simulator) { url in
            let client = try S.client(url)
            let early = await #expect(throws: ServerAPIError.self) {
                try await client.sendConsumptionInformation(bought.transactionID, ConsumptionInformation())
            }
            #expect(early?.appleErrorCode == 4_000_000, "no refund request is waiting")
            try simulator.requestRefund(bought.transactionID)
            let refused = await #expect(throws: ServerAPIError.self) {
                try await client.sendConsumptionInformation(
                    bought.transactionID, ConsumptionInformation(customerConsented: false))
            }
            #expect(refused?.appleErrorCode == 4_000_035)
            try await client.sendConsumptionInformation(
                bought.transactionID,
                ConsumptionInformation(
                    deliveryStatus: .serverOutage, consumptionPercentage: 25_000, refundPreference: .grantProrated))
            let report = try #require(simulator.consumptionReport(for: bought.transactionID))
            #expect(report.deliveryStatus == 3 && report.consumptionStatus == 2 && report.refundPreference == 1)
            #expect(report.consumptionPercentage == 25_000)
        }
    }

    @Test func anAppAccountTokenIsSetOnThePurchaseAndItsRenewals() async throws {
        let simulator = try S.simulator()
        try simulator.createAccount("ana")
        let gold = try #require(try simulator.purchase(FloristCatalog.gold, account: "ana").transaction)
        try simulator.advance(by: Self.month)
        let token = UUID(uuidString: "8A7C1C5E-1D2B-4F3A-9C8D-7E6F5A4B3C2D")!
        try await S.serve(simulator) { url in
            let client = try S.client(url)
            try await client.setAppAccountToken(originalTransactionID: gold.transactionID, token)
            let history = try await client.transactionHistory(gold.transactionID).collect()
            #expect(history.count == 2 && history.allSatisfy { $0.appAccountToken == token.uuidString.lowercased() })
            try simulator.advance(by: Self.month)
            let renewed = try #require(try await client.transactionHistory(gold.transactionID).collect().last)
            #expect(renewed.appAccountToken == token.uuidString.lowercased(), "the next renewal keeps it")

            let notOriginal = await #expect(throws: ServerAPIError.self) {
                try await client.setAppAccountToken(originalTransactionID: renewed.transactionID!, token)
            }
            #expect(notOriginal?.appleErrorCode == 4_000_187)
            var request = HTTPClientRequest(
                url: url.absoluteString + "/inApps/v1/transactions/\(gold.transactionID)/appAccountToken")
            request.method = .PUT
            request.headers.add(name: "Authorization", value: "Bearer \(try await Self.token())")
            request.body = .bytes(ByteBuffer(string: #"{"appAccountToken":"not-a-uuid"}"#))
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
            #expect(response.status.code == 400)
            let body = try await response.body.collect(upTo: 1 << 16)
            #expect(String(buffer: body).contains("4000183"))
        }
    }

    @Test func theAppTransactionAndFinishingWorkByAnyTransactionID() async throws {
        let simulator = try S.simulator()
        try simulator.createAccount("ana")
        let bought = try #require(try simulator.purchase(FloristCatalog.installation, account: "ana").transaction)
        try await S.serve(simulator) { url in
            let client = try S.client(url)
            let app = try await client.appTransactionInfo(bought.transactionID)
            #expect(app.bundleID == "com.example.florist" && app.deviceVerification == nil)
            let appTransactionID = try #require(app.appTransactionID)
            #expect(try await client.appTransactionInfo(appTransactionID).appTransactionID == appTransactionID)
            let notATransaction = await #expect(throws: ServerAPIError.self) {
                try await client.transactionInfo(appTransactionID)
            }
            #expect(notATransaction?.appleErrorCode == 4_000_048)

            #expect(try simulator.unfinishedTransactions(account: "ana").count == 1)
            // The v1 history leaves finished consumables out; v2 keeps them.
            try await client.finishTransaction(bought.transactionID)
            #expect(try simulator.unfinishedTransactions(account: "ana").isEmpty)
            #expect(try await Self.rawHistoryCount(url, version: "v1", bought.transactionID) == 0)
            #expect(try await Self.rawHistoryCount(url, version: "v2", bought.transactionID) == 1)
            let missing = await #expect(throws: ServerAPIError.self) { try await client.finishTransaction("77") }
            #expect(missing?.appleErrorCode == 4_040_010)
        }
    }

    @Test func aTestNotificationAndTheHistoryCarryTheirSendAttempts() async throws {
        let simulator = try S.simulator()
        // What a developer's server answered: every notification reached it once.
        simulator.addNotificationSink { [weak simulator] in
            simulator?.recordSendAttempt(notificationUUID: $0.uuid, result: "SUCCESS")
        }
        try simulator.createAccount("ana")
        let gold = try #require(try simulator.purchase(FloristCatalog.gold, account: "ana").transaction)
        try simulator.advance(by: Self.month, count: 24)  // 24 renewals, the last five within the window below
        for number in 0..<20 {
            try simulator.createAccount("customer-\(number)")
            _ = try simulator.purchase(FloristCatalog.flowers, account: "customer-\(number)")
        }
        try await S.serve(simulator) { url in
            let client = try S.client(url)
            let token = try await client.requestTestNotification()
            let test = try await client.testNotificationStatus(token)
            #expect(test.payload.notificationType == .test)
            #expect(test.payload.data?.bundleID == "com.example.florist")
            #expect(test.sendAttempts.map(\.result) == ["SUCCESS"])
            let malformed = await #expect(throws: ServerAPIError.self) {
                try await client.testNotificationStatus("nonsense")
            }
            #expect(malformed?.appleErrorCode == 4_000_020)
            let unknown = await #expect(throws: ServerAPIError.self) {
                try await client.testNotificationStatus("\(UUID().uuidString.lowercased())_1767225600000")
            }
            #expect(unknown?.appleErrorCode == 4_040_008)

            let now = try simulator.now
            let window = NotificationHistoryQuery(
                startDate: now.addingTimeInterval(-170 * 86_400), endDate: now.addingTimeInterval(1))
            let all = try await client.notificationHistory(window).collect()
            let kept = simulator.notifications.filter {
                $0.date.timeIntervalSince1970 * 1000 >= Double(window.startDate)
            }
            #expect(all.count == kept.count && all.count > 20)
            #expect(all.map(\.payload.notificationUUID) == kept.map(\.uuid))
            #expect(all.allSatisfy { $0.sendAttempts.map(\.result) == ["SUCCESS"] })
            var renewals = window
            renewals.notificationType = "DID_RENEW"
            let renewed = try await client.notificationHistory(renewals).collect()
            #expect(!renewed.isEmpty && renewed.allSatisfy { $0.payload.notificationType == .didRenew })
            var anas = window
            anas.transactionId = gold.transactionID
            #expect(
                try await client.notificationHistory(anas).collect().map(\.payload.notificationUUID)
                    == kept.filter { $0.accountID == "ana" }.map(\.uuid))
            var failures = window
            failures.onlyFailures = true
            #expect(try await client.notificationHistory(failures).collect().isEmpty)

            var both = anas
            both.notificationType = "DID_RENEW"
            let conflicting = await #expect(throws: ServerAPIError.self) {
                try await client.notificationHistoryPage(both)
            }
            #expect(conflicting?.appleErrorCode == 4_000_019)
            let tooOld = await #expect(throws: ServerAPIError.self) {
                try await client.notificationHistoryPage(
                    NotificationHistoryQuery(startDate: now.addingTimeInterval(-200 * 86_400), endDate: now))
            }
            #expect(tooOld?.appleErrorCode == 4_000_012)
        }
    }

    @Test func signedDataFromAnotherAuthorityIsRefusedByEveryEndpoint() async throws {
        let simulator = try S.simulator()
        try simulator.createAccount("ana")
        let gold = try #require(try simulator.purchase(FloristCatalog.gold, account: "ana").transaction)
        try simulator.refund(gold.transactionID)
        try await S.serve(simulator) { url in
            let honest = try S.client(url)
            let token = try await honest.requestTestNotification()
            let client = ServerAPIClient(
                credentials: ServerAPITokensTests.credentials, environment: .custom(url),
                verifier: try SignedDataVerifier(
                    trustStore: try SimulatorPKI(keys: SimulatorTestKeys.otherKeys).trustStore,
                    configuration: .init(bundleID: "com.example.florist", environments: [.sandbox])),
                retry: ServerAPIRetryPolicy(attempts: 1))
            let id = gold.transactionID
            let calls: [(String, @Sendable () async throws -> Void)] = [
                ("transaction", { _ = try await client.transactionInfo(id) }),
                ("history", { _ = try await client.transactionHistoryPage(id) }),
                ("statuses", { _ = try await client.subscriptionStatuses(id) }),
                ("refunds", { _ = try await client.refundHistoryPage(id) }),
                ("order", { _ = try await client.lookUpOrder(gold.orderID ?? "") }),
                ("app transaction", { _ = try await client.appTransactionInfo(id) }),
                ("test notification", { _ = try await client.testNotificationStatus(token) }),
                (
                    "notification history",
                    {
                        _ = try await client.notificationHistoryPage(
                            NotificationHistoryQuery(
                                startDate: Date(timeIntervalSince1970: 1_767_000_000), endDate: Date.distantFuture))
                    }
                ),
            ]
            for (name, call) in calls {
                let error = await #expect(throws: ServerAPIError.self, "\(name)") { try await call() }
                #expect(error?.code == .verificationFailed, "\(name)")
            }
        }
    }

    @Test func aRateLimitSwitchedOnIsWaitedOutByTheClient() async throws {
        let simulator = try S.simulator()
        try simulator.createAccount("ana")
        let bought = try #require(try simulator.purchase(FloristCatalog.flowers, account: "ana").transaction)
        try await S.serve(simulator) { url in
            var request = HTTPClientRequest(url: url.absoluteString + "/simulator/inapps/rate-limit")
            request.method = .PUT
            request.headers.add(name: "Content-Type", value: "application/json")
            // Twenty seconds: the two calls below fall in one window even on a loaded machine (three was not enough
            // for a CI run on two slow cores with the whole suite at once, ten once; the patient client's budget, 30 s,
            // still waits one window out).
            request.body = .bytes(ByteBuffer(string: #"{"requests":1,"windowSeconds":20}"#))
            #expect(try await HTTPClient.shared.execute(request, timeout: .seconds(10)).status.code == 200)

            let impatient = try S.client(url)
            _ = try await impatient.transactionInfo(bought.transactionID)
            let limited = await #expect(throws: ServerAPIError.self) {
                try await impatient.transactionInfo(bought.transactionID)
            }
            #expect(limited?.appleErrorCode == 4_290_000 && limited?.httpStatus == 429)

            let patient = ServerAPIClient(
                credentials: ServerAPITokensTests.credentials, environment: .custom(url),
                verifier: try SignedDataVerifier(
                    trustStore: SimulatorTestKeys.pki.trustStore,
                    configuration: .init(bundleID: "com.example.florist", environments: [.sandbox])),
                retry: ServerAPIRetryPolicy(attempts: 3, budget: .seconds(30)))
            for _ in 0..<2 { _ = try await patient.transactionInfo(bought.transactionID) }

            var off = HTTPClientRequest(url: url.absoluteString + "/simulator/inapps/rate-limit")
            off.method = .DELETE
            #expect(try await HTTPClient.shared.execute(off, timeout: .seconds(10)).status.code == 204)
            for _ in 0..<5 { _ = try await impatient.transactionInfo(bought.transactionID) }
        }
    }

    // MARK: - Helpers

    static func token() async throws -> String {
        try await ServerAPITokens(credentials: ServerAPITokensTests.credentials).token()
    }

    /// How many transactions one history page has, read without the client (it speaks v2 only).
    static func rawHistoryCount(_ url: URL, version: String, _ id: String) async throws -> Int {
        var request = HTTPClientRequest(url: url.absoluteString + "/inApps/\(version)/history/\(id)")
        request.headers.add(name: "Authorization", value: "Bearer \(try await token())")
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 20)
        let object = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
        return (object?["signedTransactions"] as? [Any])?.count ?? -1
    }
}

extension Array {
    /// The one element of a one-element array.
    fileprivate var only: Element? { count == 1 ? first : nil }
}
