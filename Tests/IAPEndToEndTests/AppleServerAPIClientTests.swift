import Crypto
import Foundation
import IAPTestSupport
import Testing

/// Apple's own App Store Server API client (`AppStoreServerAPIClient`, app-store-server-library on PyPI) pointed at a
/// real `iapkit serve` with the simulated app's key: every core method it has answers correctly with each filter and
/// option, every answer's raw JSON has Apple's fields, types and enum values (the library's models would coerce or drop
/// a wrong one without a word), and its signed-data verifier accepts every document against the simulator's root.
@Suite struct AppleServerAPIClientTests {
    static let keyID = "PYTHONKEY1"
    static let issuerID = "57246542-96fe-1a63-e053-0824d011072a"
    static let key = try! P256.Signing.PrivateKey(rawRepresentation: Array(SHA256.hash(data: Array("python".utf8))))

    @Test(.enabled(if: ExternalTool.hasAppleLibrary, "app-store-server-library is not installed (pip)"))
    func applesPythonClientGetsCorrectAnswersFromEveryEndpoint() async throws {
        try #require(ServerProcess.executable != nil, Comment(rawValue: ServerProcess.skipMessage))
        let folder = try ServerProcessTests.pkiFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let keyFile = folder.appendingPathComponent("SubscriptionKey_\(Self.keyID).p8")
        try Self.key.pemRepresentation.write(to: keyFile, atomically: true, encoding: .utf8)
        let server = try await ServerProcess.start(
            [
                "--database", ":memory:", "--pki", folder.path, "--server-api-key", "\(Self.keyID)=\(keyFile.path)",
                "--server-api-issuer", Self.issuerID,
            ], environment: ["IAPKIT_SIMULATOR_PERFORMANCE_TEST_THRESHOLD": "10000"])
        defer { Task { try? await server.stop() } }

        // The customer: a subscription that renewed once, then flowers (non-consumable, refunded), a month's pass
        // (non-renewing) and 22 installations (consumable: two pages of history), two refund requests waiting for
        // consumption information.
        #expect(try await server.post("/simulator/accounts", ["accountId": "ana"]).0 == 201)
        func buy(_ product: String) async throws -> [String: Any] {
            let (status, answer) = try await server.post(
                "/simulator/accounts/ana/purchases", ["productId": "com.example.florist.\(product)"])
            #expect(status == 201, "\(answer)")
            return try #require(answer["transaction"] as? [String: Any])
        }
        func transactionIDs() async throws -> [String] {
            let (_, answer) = try await server.get("/simulator/accounts/ana/transactions")
            return (answer["transactions"] as? [[String: Any]] ?? []).compactMap { $0["transactionId"] as? String }
        }
        let gold = try await buy("vip.gold")
        let goldID = try #require(gold["transactionId"] as? String)
        #expect(try await server.post("/simulator/clock/advance", ["seconds": 32 * 86_400]).0 == 200)
        let renewals = try await transactionIDs().filter { $0 != goldID }
        try #require(renewals.count == 1, "one renewal in 32 days: \(renewals)")
        let flowers = try await buy("flowers")
        let flowersID = try #require(flowers["transactionId"] as? String)
        let orderID = try #require(flowers["orderId"] as? String)
        let passID = try #require(try await buy("pass.month")["transactionId"] as? String)
        var installations: [String] = []
        for _ in 0..<22 {
            installations.append(try #require(try await buy("installation")["transactionId"] as? String))
        }
        #expect(try await server.post("/simulator/transactions/\(flowersID)/refund", [:]).0 == 200)
        for id in installations.prefix(2) {
            #expect(try await server.post("/simulator/transactions/\(id)/refund-request", [:]).0 == 202)
        }

        let (status, output) = try await ExternalTool.run(
            "/usr/bin/env",
            [
                "python3", Self.script.path, "--base-url", "http://127.0.0.1:\(server.port)", "--key", keyFile.path,
                "--key-id", Self.keyID, "--issuer-id", Self.issuerID, "--bundle-id", "com.example.florist",
                "--root", folder.appendingPathComponent("roots/jws-root.der").path, "--subscription", goldID,
                "--purchase", flowersID, "--consumable", installations[0], "--consumable-v1", installations[1],
                "--finish", installations[2], "--product", "com.example.florist.vip.gold", "--order", orderID,
                "--group", "21000001", "--purchase-product", "com.example.florist.flowers",
            ])
        var calls: [String: [String: Any]] = [:]
        for line in output.split(separator: "\n") where line.hasPrefix("{") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            calls[object["call"] as? String ?? "?"] = object
        }
        #expect(status == 0, "\(output)")
        for (name, call) in calls { #expect(call["ok"] as? Bool == true, "\(name): \(call)") }
        // Every answer, as raw JSON: only fields Apple documents, each of Apple's type, enums among Apple's values.
        #expect(calls["rawAnswers"]?["problems"] as? [String] == [], "\(calls["rawAnswers"] ?? [:])")
        #expect((calls["rawAnswers"]?["answers"] as? Int ?? 0) > 40)

        let subscription = [goldID] + renewals
        let everything = subscription + [flowersID, passID] + installations
        #expect(calls["transactionInfo"]?["transactionId"] as? String == flowersID)
        #expect(calls["historyV2"]?["transactionIds"] as? [String] == everything)
        #expect(calls["historyV2"]?["pages"] as? Int == 2)
        // v1 leaves finished consumables out; none was finished when it ran, one was by the second run.
        #expect(calls["historyV1"]?["transactionIds"] as? [String] == everything)
        #expect(
            calls["historyV1AfterFinish"]?["transactionIds"] as? [String]
                == everything.filter { $0 != installations[2] })
        // Apple's transactionReason on every type: PURCHASE for what was bought, RENEWAL for the renewal.
        let reasons = try #require(calls["historyV2"]?["reasons"] as? [String: String])
        for id in everything { #expect(reasons[id] == (renewals.contains(id) ? "RENEWAL" : "PURCHASE"), "\(id)") }
        let filters = try #require(calls["historyFilters"])
        let byType = try #require(filters["productType"] as? [String: [String]])
        #expect(byType["AUTO_RENEWABLE"] == subscription)
        #expect(byType["NON_CONSUMABLE"] == [flowersID])
        #expect(byType["NON_RENEWABLE"] == [passID])
        #expect(byType["CONSUMABLE"] == installations)
        #expect(filters["productTypes"] as? [String] == [flowersID] + installations)
        #expect(filters["productId"] as? [String] == subscription)
        #expect(filters["subscriptionGroupIdentifier"] as? [String] == subscription)
        #expect(filters["familyShared"] as? [String] == [])
        #expect(filters["purchased"] as? [String] == everything)
        #expect(filters["revoked"] as? [String] == [flowersID])
        #expect(filters["notRevoked"] as? [String] == everything.filter { $0 != flowersID })
        #expect((filters["window"] as? [String])?.contains(flowersID) == true)
        #expect((filters["window"] as? [String])?.contains(goldID) == false)
        #expect(filters["descending"] as? [String] == everything.reversed())
        #expect(filters["badProductType"] as? [Int] == [400, 4_000_022])
        #expect(filters["badRevision"] as? [Int] == [400, 4_000_005])

        let subscriptions = try #require(calls["subscriptionStatuses"]?["subscriptions"] as? [[String: Any]])
        #expect(subscriptions.count == 1)
        #expect(subscriptions.first?["status"] as? Int == 1)
        #expect(subscriptions.first?["originalTransactionId"] as? String == goldID)
        #expect(subscriptions.first?["autoRenewProductId"] as? String == "com.example.florist.vip.gold")
        #expect((calls["subscriptionStatusesActive"]?["subscriptions"] as? [Any])?.count == 1)
        #expect((calls["subscriptionStatusesExpired"]?["subscriptions"] as? [Any])?.count == 0)
        #expect(calls["refundHistory"]?["transactionIds"] as? [String] == [flowersID])
        #expect(calls["orderLookup"]?["status"] as? Int == 0)
        #expect(calls["orderLookup"]?["transactionIds"] as? [String] == [flowersID])
        #expect(calls["orderLookup"]?["unknownStatus"] as? Int == 1)

        // The extension's effective date is the new expiry, to the millisecond, in the signed transaction and in the
        // renewal info; the same request again changes nothing.
        let extend = try #require(calls["extendRenewalDate"])
        #expect(extend["success"] as? Bool == true)
        #expect(extend["originalTransactionId"] as? String == goldID)
        let effective = try #require(extend["effectiveDate"] as? Int)
        #expect(extend["latestExpiresDate"] as? Int == effective)
        #expect(extend["renewalDate"] as? Int == effective)
        #expect(extend["repeatedEffectiveDate"] as? Int == effective)
        #expect(extend["expiresDateAfterRepeat"] as? Int == effective)
        #expect(extend["webOrderLineItemId"] as? String != nil)
        #expect(extend["tooManyDays"] as? [Int] == [400, 4_000_009])
        let mass = try #require(calls["massExtension"])
        #expect(mass["requestIdentifier"] as? String == "py-mass")
        #expect(mass["complete"] as? Bool == true)
        #expect(mass["succeededCount"] as? Int == 1)
        #expect(mass["failedCount"] as? Int == 0)
        #expect(mass["otherStorefrontSucceeded"] as? Int == 0, "no subscriber in France")
        #expect(mass["unknownRequest"] as? [Int] == [404, 4_040_009])
        #expect(calls["setAppAccountToken"]?["appAccountToken"] as? String == "11111111-2222-4333-8444-555555555555")
        #expect(calls["setAppAccountToken"]?["badToken"] as? [Int] == [400, 4_000_183])
        #expect(calls["appTransactionInfo"]?["bundleId"] as? String == "com.example.florist")
        #expect(calls["testNotification"]?["type"] as? String == "TEST")
        #expect(calls["testNotification"]?["attempts"] as? [String] == ["SUCCESS"])
        #expect(calls["testNotification"]?["badToken"] as? [Int] == [400, 4_000_020])
        #expect(calls["errors"]?["transaction"] as? [Int] == [404, 4_040_010])
        #expect(calls["errors"]?["malformedTransaction"] as? [Int] == [400, 4_000_006])

        // The history holds every notification the server's simulator sent, over pages; each filter narrows it.
        let (_, sent) = try await server.get("/simulator/notifications")
        let notifications = sent["notifications"] as? [[String: Any]] ?? []
        let uuids = notifications.compactMap { $0["notificationUUID"] as? String }
        #expect(uuids.count > 20)
        let allHistory = try #require(calls["notificationHistory"]?["notificationUUIDs"] as? [String])
        #expect(Set(allHistory) == Set(uuids))
        #expect((calls["notificationHistory"]?["pages"] as? Int ?? 0) >= 2)
        #expect(calls["notificationHistoryTest"]?["types"] as? [String] == ["TEST"])
        // A transaction id stands for its customer (Apple: "notifications for that customer"): ana's, not the test's.
        let forAna = try #require(calls["notificationHistoryTransaction"]?["types"] as? [String])
        #expect(
            Set(forAna).isSuperset(of: ["SUBSCRIBED", "DID_RENEW", "REFUND"]) && !forAna.contains("TEST"), "\(forAna)")
        #expect(calls["notificationHistoryFailures"]?["notificationUUIDs"] as? [String] == [])

        // Retention Messaging: images and messages approved at once (the sandbox), Apple's rules refused with Apple's
        // codes, a default per subscription and locale, and performance tests whose every request the library's
        // verifier accepted.
        let images = try #require(calls["retentionImages"])
        #expect(images["images"] as? [[String]] == images["expected"] as? [[String]])
        #expect(images["again"] as? [Int] == [409, 4_090_000])
        #expect(images["transparent"] as? [Int] == [400, 4_000_161])
        #expect(images["wrongSize"] as? [Int] == [400, 4_000_161])
        #expect(images["notPNG"] as? [Int] == [400, 4_000_161])
        #expect(images["deleteUnknown"] as? [Int] == [404, 4_040_014])
        let messages = try #require(calls["retentionMessages"])
        #expect(messages["messages"] as? [[String]] == messages["expected"] as? [[String]])
        #expect(messages["again"] as? [Int] == [409, 4_090_001])
        #expect(messages["headerTooLong"] as? [Int] == [400, 4_000_162])
        #expect(messages["bodyTooLong"] as? [Int] == [400, 4_000_163])
        #expect(messages["tooManyBulletPoints"] as? [Int] == [400, 4_000_218])
        #expect(messages["aboveImageWithoutImage"] as? [Int] == [400, 4_000_224])
        #expect(messages["iconAsPicture"] as? [Int] == [400, 4_000_216])
        #expect(messages["imageInUse"] as? [Int] == [403, 4_030_019])
        let defaults = try #require(calls["retentionDefaultMessages"])
        #expect(defaults["configured"] as? String == defaults["expected"] as? String)
        #expect(defaults["afterDelete"] as? [Int] == [404, 4_040_020])
        #expect(defaults["badLocale"] as? [Int] == [400, 4_000_164])
        #expect(defaults["notASubscription"] as? [Int] == [400, 4_000_023])
        #expect(defaults["unknownMessage"] as? [Int] == [404, 4_040_015])
        let realtime = try #require(calls["retentionRealtime"])
        #expect(realtime["noURL"] as? [Int] == [404, 4_040_021])
        #expect(realtime["insecure"] as? [Int] == [400, 4_000_215])
        let passing = try #require(realtime["passing"] as? [String: Any])
        #expect(passing["result"] as? String == "PASS", "\(passing)")
        #expect(passing["successRate"] as? Int == 100)
        #expect(passing["numPending"] as? Int == 0)
        #expect((passing["target"] as? String)?.hasSuffix("/good") == true)
        // The threshold is raised for this test (a loaded CI machine must not turn a pass into a failure).
        #expect(passing["config"] as? [Int] == [10, 100, 10_000, 95])
        let failing = try #require(realtime["failing"] as? [String: Any])
        #expect(failing["result"] as? String == "FAIL", "\(failing)")
        #expect(failing["successRate"] as? Int == 0)
        #expect(failing["failures"] as? [String: Int] == ["UNSUCCESSFUL_HTTP_RESPONSE_CODE": 100])
        #expect(realtime["verifiedRequests"] as? Int == 100)
        #expect(realtime["verificationProblems"] as? [String] == [])
        #expect(
            realtime["requestFields"] as? [[String]]
                == [[goldID, "com.example.florist.vip.gold", "Sandbox", "1234567890", "en-US"]],
            "\(realtime["requestFields"] ?? "")")
        #expect((realtime["configured"] as? String)?.hasSuffix("/failing") == false)
        #expect(realtime["afterDelete"] as? [Int] == [404, 4_040_021])
        #expect(realtime["unknownTest"] as? [Int] == [404, 4_040_018])
        #expect(realtime["malformedTest"] as? [Int] == [400, 4_000_212])
        #expect(realtime["notASubscription"] as? [Int] == [400, 4_000_211])
        #expect(calls["retentionCleanup"]?["images"] as? Int == 0)
        #expect(calls["retentionCleanup"]?["messages"] as? Int == 0)
        #expect(calls["retentionCleanup"]?["deleteAgain"] as? [Int] == [404, 4_040_015])

        // What the calls changed, seen from the simulator: the transaction finished.
        let (_, unfinished) = try await server.get("/simulator/accounts/ana/transactions?unfinished=true")
        let open = (unfinished["transactions"] as? [[String: Any]] ?? []).compactMap { $0["transactionId"] as? String }
        #expect(!open.contains(installations[2]) && open.contains(installations[3]))
    }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scripts/apple-server-api-client.py")
}
