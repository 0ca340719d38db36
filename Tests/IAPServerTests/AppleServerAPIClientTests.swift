import Crypto
import Foundation
import IAPTestSupport
import Testing

/// Apple's own App Store Server API client (`AppStoreServerAPIClient`, app-store-server-library on PyPI) pointed at a
/// real `iapkit serve` with the simulated app's key: every endpoint it has that the formats reference lists answers
/// correctly, and its signed-data verifier accepts every document against the simulator's root.
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
        let server = try await ServerProcess.start([
            "--database", ":memory:", "--pki", folder.path, "--server-api-key", "\(Self.keyID)=\(keyFile.path)",
            "--server-api-issuer", Self.issuerID,
        ])
        defer { Task { try? await server.stop() } }

        // The customer: a subscription, 22 installations (two pages of history), flowers refunded, two refund
        // requests waiting for consumption information.
        #expect(try await server.post("/simulator/accounts", ["accountId": "ana"]).0 == 201)
        func buy(_ product: String) async throws -> [String: Any] {
            let (status, answer) = try await server.post(
                "/simulator/accounts/ana/purchases", ["productId": "com.example.florist.\(product)"])
            #expect(status == 201, "\(answer)")
            return try #require(answer["transaction"] as? [String: Any])
        }
        let gold = try await buy("vip.gold")
        let goldID = try #require(gold["transactionId"] as? String)
        let flowers = try await buy("flowers")
        let flowersID = try #require(flowers["transactionId"] as? String)
        let orderID = try #require(flowers["orderId"] as? String)
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
            ])
        var calls: [String: [String: Any]] = [:]
        for line in output.split(separator: "\n") where line.hasPrefix("{") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            calls[object["call"] as? String ?? "?"] = object
        }
        #expect(status == 0, "\(output)")
        for (name, call) in calls { #expect(call["ok"] as? Bool == true, "\(name): \(call)") }

        let everything = [goldID, flowersID] + installations
        #expect(calls["transactionInfo"]?["transactionId"] as? String == flowersID)
        #expect(calls["historyV2"]?["transactionIds"] as? [String] == everything)
        #expect(calls["historyV2"]?["pages"] as? Int == 2)
        // v1 leaves finished consumables out; none was finished when it ran.
        #expect(calls["historyV1"]?["transactionIds"] as? [String] == everything)
        let subscriptions = try #require(calls["subscriptionStatuses"]?["subscriptions"] as? [[String: Any]])
        #expect(subscriptions.count == 1)
        #expect(subscriptions.first?["status"] as? Int == 1)
        #expect(subscriptions.first?["originalTransactionId"] as? String == goldID)
        #expect(subscriptions.first?["autoRenewProductId"] as? String == "com.example.florist.vip.gold")
        #expect(calls["refundHistory"]?["transactionIds"] as? [String] == [flowersID])
        #expect(calls["orderLookup"]?["status"] as? Int == 0)
        #expect(calls["orderLookup"]?["transactionIds"] as? [String] == [flowersID])
        #expect(calls["extendRenewalDate"]?["success"] as? Bool == true)
        #expect(calls["extendRenewalDate"]?["originalTransactionId"] as? String == goldID)
        #expect(calls["massExtension"]?["requestIdentifier"] as? String == "py-mass")
        #expect(calls["massExtension"]?["complete"] as? Bool == true)
        #expect(calls["massExtension"]?["succeededCount"] as? Int == 1)
        #expect(calls["setAppAccountToken"]?["appAccountToken"] as? String == "11111111-2222-4333-8444-555555555555")
        #expect(calls["appTransactionInfo"]?["bundleId"] as? String == "com.example.florist")
        #expect(calls["testNotification"]?["type"] as? String == "TEST")
        #expect(calls["testNotification"]?["attempts"] as? [String] == ["SUCCESS"])
        #expect(calls["unknownTransaction"]?["status"] as? Int == 404)
        #expect(calls["unknownTransaction"]?["apiError"] as? Int == 4_040_010)
        // The history holds every notification the server's simulator sent, two pages of them.
        let (_, sent) = try await server.get("/simulator/notifications")
        let uuids = (sent["notifications"] as? [[String: Any]] ?? []).compactMap { $0["notificationUUID"] as? String }
        #expect(uuids.count > 20)
        #expect(calls["notificationHistory"]?["notificationUUIDs"] as? [String] == uuids)

        // What the calls changed, seen from the simulator: the transaction finished, the extension applied.
        let (_, unfinished) = try await server.get("/simulator/accounts/ana/transactions?unfinished=true")
        let open = (unfinished["transactions"] as? [[String: Any]] ?? []).compactMap { $0["transactionId"] as? String }
        #expect(!open.contains(installations[2]) && open.contains(installations[3]))
        let effective = try #require(calls["extendRenewalDate"]?["effectiveDate"] as? Int)
        let (_, transactions) = try await server.get("/simulator/accounts/ana/transactions")
        let goldNow = (transactions["transactions"] as? [[String: Any]] ?? []).first {
            $0["transactionId"] as? String == goldID
        }
        #expect(goldNow?["expiresDate"] as? String != gold["expiresDate"] as? String, "\(effective)")
    }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scripts/apple-server-api-client.py")
}
