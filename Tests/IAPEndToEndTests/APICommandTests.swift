import Crypto
import Foundation
import IAPTestSupport
import Testing

/// `iapkit api ...` as a user runs it: the built command against a real `iapkit serve` process with the simulated
/// app's key, every document verified against the simulator's root.
@Suite struct APICommandTests {
    @Test func everyAPICommandAnswersFromARunningServer() async throws {
        let iapkit = try #require(ServerProcess.executable, Comment(rawValue: ServerProcess.skipMessage))
        let folder = try ServerProcessTests.pkiFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let keyFile = folder.appendingPathComponent("SubscriptionKey_CLIKEY.p8")
        try AppleServerAPIClientTests.key.pemRepresentation.write(to: keyFile, atomically: true, encoding: .utf8)
        let server = try await ServerProcess.start([
            "--database", ":memory:", "--pki", folder.path, "--server-api-key", "CLIKEY=\(keyFile.path)",
        ])
        defer { Task { try? await server.stop() } }
        #expect(try await server.post("/simulator/accounts", ["accountId": "ana"]).0 == 201)
        func buy(_ product: String) async throws -> [String: Any] {
            let (_, answer) = try await server.post(
                "/simulator/accounts/ana/purchases", ["productId": "com.example.florist.\(product)"])
            return try #require(answer["transaction"] as? [String: Any], "\(answer)")
        }
        let gold = try #require(try await buy("vip.gold")["transactionId"] as? String)
        let flowers = try await buy("flowers")
        let flowersID = try #require(flowers["transactionId"] as? String)
        let installation = try #require(try await buy("installation")["transactionId"] as? String)
        #expect(try await server.post("/simulator/transactions/\(flowersID)/refund", [:]).0 == 200)
        #expect(try await server.post("/simulator/transactions/\(installation)/refund-request", [:]).0 == 202)

        let common = [
            "--key", keyFile.path, "--key-id", "CLIKEY", "--issuer-id", "any-issuer", "--bundle-id",
            "com.example.florist", "--base-url", "http://127.0.0.1:\(server.port)", "--root",
            folder.appendingPathComponent("roots/jws-root.der").path, "--json",
        ]
        func api(_ arguments: [String]) async throws -> (Int32, [[String: Any]]) {
            let (status, output) = try await ExternalTool.run(iapkit.path, ["api"] + arguments + common)
            let lines = try output.split(separator: "\n").filter { $0.hasPrefix("{") }.map {
                try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any], "\($0)")
            }
            return (status, lines)
        }
        func payloads(_ lines: [[String: Any]], kind: String) -> [[String: Any]] {
            lines.filter { $0["kind"] as? String == kind && $0["verdict"] as? String == "verified" }
                .compactMap { $0["payload"] as? [String: Any] }
        }

        let (one, transaction) = try await api(["transaction", gold])
        #expect(one == 0 && payloads(transaction, kind: "transaction").map { $0["transactionId"] as? String } == [gold])
        let (two, history) = try await api(["history", gold])
        #expect(two == 0)
        #expect(
            payloads(history, kind: "transaction").compactMap { $0["transactionId"] as? String }
                == [gold, flowersID, installation])
        let (three, status) = try await api(["status", flowersID])
        #expect(three == 0 && payloads(status, kind: "renewal").count == 1)
        #expect(status.first?["status"] as? Int == 1)
        let (four, refunds) = try await api(["refunds", gold])
        #expect(
            four == 0 && payloads(refunds, kind: "transaction").map { $0["transactionId"] as? String } == [flowersID])
        let orderID = try #require(flowers["orderId"] as? String)
        let (five, order) = try await api(["order", orderID])
        #expect(five == 0 && order.first?["status"] as? Int == 0 && payloads(order, kind: "transaction").count == 1)
        let (six, extended) = try await api(["extend", gold, "--days", "3", "--reason", "3", "--request-id", "cli"])
        #expect(six == 0 && extended.first?["success"] as? Bool == true)
        let (seven, consumption) = try await api([
            "consumption", installation, "--delivery-status", "DELIVERED", "--consumption-percentage", "100000",
        ])
        #expect(seven == 0 && consumption.first?["kind"] as? String == "consumption")
        let (eight, test) = try await api(["test-notification"])
        let sent = payloads(test, kind: "notification")
        #expect(eight == 0 && sent.first?["notificationType"] as? String == "TEST")
        #expect((sent.first?["sendAttempts"] as? [[String: Any]])?.first?["sendAttemptResult"] as? String == "SUCCESS")
        let (nine, notifications) = try await api([
            "notifications", "--start", String(Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000),
        ])
        #expect(nine == 0 && payloads(notifications, kind: "notification").count >= 5)

        // A refusal: Apple's code, exit 1.
        let (refused, error) = try await api(["extend", gold, "--days", "91"])
        #expect(refused == 1 && error.first?["appleErrorCode"] as? Int == 4_000_009)
        // Documents from another authority are not printed as verified.
        let (_, foreign) = try await ExternalTool.run(
            iapkit.path,
            ["api", "transaction", gold]
                + common.map {
                    $0.hasSuffix("jws-root.der") ? folder.appendingPathComponent("roots/receipt-root.der").path : $0
                })
        #expect(foreign.contains("verificationFailed"))
    }
}
