import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import IAPServer
import IAPSignedData
import IAPSimulator
import IAPSimulatorServer
import IAPTestSupport
import NIOCore
import Testing

/// The pages `iapkit serve` shows people, and the inspector's JSON behind them, through the router. The pages in a
/// real browser are `PagesBrowserTests`.
@Suite("Pages and the inspector")
struct PagesTests {
    @Test func pagesAndAssetsAreServedWithAStrictPolicyAndTags() async throws {
        let runtime = try await SimulatorAPITests.runtime()
        try await runtime.application().test(.router) { client in
            for (path, marker) in [
                ("/", "Three things to try"), ("/store", "Who is buying"), ("/manager", "Transaction manager"),
                ("/inspector", "Inspector"),
            ] {
                try await client.execute(uri: path, method: .get) { response in
                    #expect(response.status == .ok, "\(path)")
                    #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                    let policy = response.headers[HTTPField.Name("Content-Security-Policy")!] ?? ""
                    #expect(policy.contains("default-src 'none'") && policy.contains("connect-src 'self'"))
                    #expect(response.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
                    let html = String(buffer: response.body)
                    #expect(html.contains(marker), "\(path)")
                    #expect(html.hasPrefix("<!doctype html>") && !html.contains("{{"), "\(path) is not laid out")
                    #expect(html.contains("<a href=\"\(path)\" aria-current=\"page\">"), "\(path)")
                    #expect(html.components(separatedBy: "aria-current").count == 2, "\(path)")
                    // Everything a page loads is this server's own.
                    for match in html.matches(of: /(?:src|href)="([^"#]*)"/) {
                        let target = String(match.output.1)
                        #expect(target.hasPrefix("/"), "\(path) loads \(target)")
                    }
                }
            }
            let etag = try await client.execute(uri: "/assets/app.css", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/css; charset=utf-8")
                return try #require(response.headers[.eTag])
            }
            try await client.execute(uri: "/assets/app.css", method: .get, headers: [.ifNoneMatch: etag]) { response in
                #expect(response.status == .notModified)
                #expect(response.body.readableBytes == 0)
            }
            for script in ["common.js", "store.js", "manager.js", "inspector.js", "customers.js", "index.js"] {
                try await client.execute(uri: "/assets/\(script)", method: .get) { response in
                    #expect(response.status == .ok, "\(script)")
                    #expect(response.headers[.contentType] == "text/javascript; charset=utf-8")
                }
            }
            for missing in [
                "/assets/nothing.js", "/assets/index.html", "/assets/layout.html", "/assets/..%2FPackage.swift",
                "/nowhere",
            ] {
                try await client.execute(uri: missing, method: .get) { response in
                    #expect(response.status == .notFound, "\(missing)")
                }
            }
        }
    }

    /// Simulator-signed documents of every kind the inspector takes, each verified with the simulated app's rules.
    @Test func theInspectorDecodesAndVerifiesWhatTheSimulatorSigned() async throws {
        let runtime = try await SimulatorAPITests.runtime()
        let store = try #require(runtime.simulator)
        try store.createAccount("ana")
        let device = try store.addDevice(account: "ana")
        let inbox = SimulatorInbox(store)
        guard case .purchased(let bought) = try store.purchase(FloristCatalog.gold, account: "ana", device: device)
        else { Issue.record("not purchased"); return }
        let receipt = Data(try store.receipt(account: "ana", device: device).bytes).base64EncodedString()
        let notification = try #require(inbox.take().last)
        let renewal = try #require(try store.renewalInfos(account: "ana").first)

        try await runtime.application().test(.router) { client in
            func inspect(_ document: String) async throws -> (HTTPResponse.Status, [String: Any]) {
                try await client.post("/console/inspect", ["document": document])
            }
            let cases: [(String, String, String)] = [
                (bought.jws, "transaction", "productId"),
                (renewal, "renewalInfo", "autoRenewProductId"),
                (notification.signedPayload, "notification", "notificationType"),
                ("{\"signedPayload\": \"\(notification.signedPayload)\"}", "notification", "notificationType"),
                (receipt, "receipt", "in_app"),
                ("{\"receipt-data\": \"\(receipt)\"}", "receipt", "in_app"),
                (receipt.chunked(every: 76), "receipt", "bundle_id"),
            ]
            for (document, kind, field) in cases {
                let (status, answer) = try await inspect(document)
                #expect(status == .ok, "\(kind): \(answer)")
                #expect(answer["kind"] as? String == kind)
                #expect(answer["valid"] as? Bool == true, "\(kind): \(answer["checks"] ?? "")")
                #expect(answer["app"] as? String == store.configuration.bundleID)
                #expect((answer["fields"] as? [String: Any])?[field] != nil, "\(kind) has no \(field)")
                let checks = try #require(answer["checks"] as? [[String: Any]])
                #expect(checks.count >= 6)
                #expect(checks.allSatisfy { $0["status"] as? String != "failed" }, "\(checks)")
                #expect(
                    checks.contains {
                        ($0["name"] as? String)?.hasPrefix("Signature") == true && $0["status"] as? String == "passed"
                    })
            }
            // A notification's nested transaction is shown decoded and verified too.
            let (_, nested) = try await inspect(notification.signedPayload)
            let inner = try #require(nested["nested"] as? [[String: Any]])
            #expect(inner.first?["field"] as? String == "data.signedTransactionInfo")
            #expect(inner.first?["valid"] as? Bool == true)

            // A forged signature: not valid, and the signature check says why.
            let parts = bought.jws.split(separator: ".").map(String.init)
            let forged = [parts[0], parts[1], (parts[2].first == "A" ? "B" : "A") + parts[2].dropFirst()]
                .joined(separator: ".")
            let (forgedStatus, refused) = try await inspect(forged)
            #expect(forgedStatus == .ok)
            #expect(refused["valid"] as? Bool == false)
            let signature = (refused["checks"] as? [[String: Any]])?.first {
                ($0["name"] as? String)?.hasPrefix("Signature") == true
            }
            #expect(signature?["status"] as? String == "failed")
            #expect(signature?["code"] as? String == "signatureInvalid")

            // Certificates that do not parse: the chain fails, and the signature is reported not made (no leaf key).
            let junkHeader = Data(#"{"alg":"ES256","x5c":["AAAA","AAAA","AAAA"]}"#.utf8).base64EncodedString()
                .replacingOccurrences(of: "=", with: "")
            let (_, junk) = try await inspect([junkHeader, parts[1], parts[2]].joined(separator: "."))
            let junkChecks = try #require(junk["checks"] as? [[String: Any]])
            let junkSignature = junkChecks.first { ($0["name"] as? String)?.hasPrefix("Signature") == true }
            #expect(junk["valid"] as? Bool == false)
            #expect(junkSignature?["status"] as? String == "skipped", "\(junkChecks)")

            // A document signed by another authority: checked with the only app's rules and refused for its chain,
            // every field still decoded.
            let stranger = try TestJWS.signer().sign(TestJWS.transaction())
            let (_, unknown) = try await inspect(stranger)
            #expect(unknown["valid"] as? Bool == false)
            let failed = (unknown["checks"] as? [[String: Any]] ?? []).filter { $0["status"] as? String == "failed" }
            #expect(failed.contains { ($0["code"] as? String)?.contains("chainUntrusted") == true }, "\(failed)")
            #expect((unknown["fields"] as? [String: Any])?["productId"] != nil)
            #expect((unknown["advice"] as? String)?.contains("--pki DIR") == true, "says how to trust its root")

            // A document for an app this server does not serve: not checked by another app's rules, and the answer
            // says how to serve that app.
            var foreign = TestJWS.transaction()
            foreign.bundleID = "com.other.app"
            let (_, otherApp) = try await inspect(try TestJWS.signer().sign(foreign))
            #expect(otherApp["app"] is NSNull)
            let otherChecks = try #require(otherApp["checks"] as? [[String: Any]])
            #expect(otherChecks.map { $0["code"] as? String } == ["unknownApp"], "\(otherChecks)")
            let advice = try #require(otherApp["advice"] as? String)
            #expect(advice.contains("--config") && advice.contains("com.other.app"), "\(advice)")

            // What is no document gets a 400 with a stable code, never a 500.
            for (body, code) in [
                ("", "missingField"), ("   ", "missingDocument"), ("hello world", "unknownDocument"),
                ("{\"a\": 1}", "unknownDocument"), ("{", "malformedJSON"), ("a.b.c", nil),
                (Data("not a receipt".utf8).base64EncodedString(), nil),
                ("{\"signedPayload\": 5}", "unknownDocument"),
            ] as [(String, String?)] {
                let (status, answer) = try await inspect(body)
                #expect(status == .badRequest, "\(body): \(answer)")
                if let code { #expect(answer["code"] as? String == code, "\(body): \(answer)") }
            }
            let (unknownField, _) = try await client.post("/console/inspect", ["document": "x", "extra": 1])
            #expect(unknownField == .badRequest)
        }
    }

    @Test(
        "a real Apple receipt in the inspector, checked against Apple's root",
        .enabled(if: SharedTestData.isAvailable, "\(SharedTestData.skipMessage)"))
    func theInspectorVerifiesARealAppleReceipt() async throws {
        try await ReceiptAPITests.revenueCatApplication().test(.router) { client in
            let (status, answer) = try await client.post(
                "/console/inspect", ["document": try ReceiptAPITests.revenueCatBase64()])
            #expect(status == .ok)
            #expect(answer["kind"] as? String == "receipt")
            #expect(answer["valid"] as? Bool == true, "\(answer["checks"] ?? "")")
            #expect(answer["app"] as? String == "com.revenuecat.sampleapp")
            let chain = try #require(answer["chain"] as? [String: Any])
            let names = (chain["certificates"] as? [[String: Any]])?.compactMap { $0["subject"] as? String }
            #expect(names?.last == "Apple Root CA")
            let fields = try #require(answer["fields"] as? [String: Any])
            #expect(fields["bundle_id"] as? String == "com.revenuecat.sampleapp")
            #expect((fields["in_app"] as? [Any])?.isEmpty == false)
            let checks = try #require(answer["checks"] as? [[String: Any]])
            #expect(checks.first { $0["name"] as? String == "Device hash" }?["status"] as? String == "skipped")
        }
    }

    @Test func theInspectorIsBehindTheAdminTokenWhenOneIsSet() async throws {
        let runtime = try await SimulatorAPITests.runtime(adminToken: "secret")
        try await runtime.application().test(.router) { client in
            let (missing, _) = try await client.post("/console/inspect", ["document": "x"])
            #expect(missing == .unauthorized)
            var headers = jsonHeaders
            headers[.authorization] = "Bearer wrong"
            let (wrong, _) = try await client.post("/console/inspect", ["document": "x"], headers: headers)
            #expect(wrong == .forbidden)
            headers[.authorization] = "Bearer secret"
            let (right, answer) = try await client.post("/console/inspect", ["document": "x"], headers: headers)
            #expect(right == .badRequest, "\(answer)")
            // The pages themselves are public: they hold no data, and ask for the token when a call needs it.
            try await client.execute(uri: "/inspector", method: .get) { #expect($0.status == .ok) }
        }
    }
}

extension String {
    /// The string broken into lines of `width` characters, as base64 tools write it.
    fileprivate func chunked(every width: Int) -> String {
        var lines: [Substring] = []
        var rest = self[...]
        while !rest.isEmpty {
            lines.append(rest.prefix(width))
            rest = rest.dropFirst(width)
        }
        return lines.joined(separator: "\n")
    }
}

/// The customers page's JSON: a customer as the server stores them.
@Suite("Customers console")
struct CustomersConsoleTests {
    @Test func aCustomersEntitlementsTransactionsAndTimeline() async throws {
        let runtime = try await SimulatorAPITests.runtime()
        try await runtime.application().test(.router) { client in
            // One customer across purchases: the app account token ties them together.
            let token = "6c1e5a8e-2f4b-4c3e-9d7a-0b1c2d3e4f50"
            _ = try await client.post("/simulator/accounts", ["accountId": "ana"])
            _ = try await client.post(
                "/simulator/accounts/ana/purchases", ["productId": FloristCatalog.gold, "appAccountToken": token])
            let (_, flowers) = try await client.post(
                "/simulator/accounts/ana/purchases", ["productId": FloristCatalog.flowers, "appAccountToken": token])
            let flowersID = try #require((flowers["transaction"] as? [String: Any])?["transactionId"] as? String)
            _ = try await client.post("/simulator/clock/advance", ["seconds": 10 * 86_400])
            _ = try await client.post("/simulator/transactions/\(flowersID)/refund", [:])
            _ = try await client.post("/simulator/accounts/ana/auto-renew", ["groupId": "21000001", "enabled": false])
            _ = try await client.post("/simulator/clock/advance", ["seconds": 40 * 86_400])
            try await SimulatorAPITests.settle(runtime)

            let (status, view) = try await client.get("/console/customers/\(token)", headers: jsonHeaders)
            #expect(status == .ok, "\(view)")
            #expect(view["entitledProductIds"] as? [String] == [])
            let transactions = try #require(view["transactions"] as? [[String: Any]])
            #expect(transactions.count >= 3)
            #expect(
                transactions.contains { $0["transactionId"] as? String == flowersID && $0["revocationDate"] != nil })
            // Owned both, lost the flowers at the refund, then the subscription when it ran out.
            let stretches = try #require((view["timeline"] as? [String: Any])?["stretches"] as? [[String: Any]])
            let owned = stretches.map { $0["entitledProductIds"] as? [String] ?? [] }
            #expect(owned.contains([FloristCatalog.flowers, FloristCatalog.gold].sorted()), "\(owned)")
            #expect(stretches.contains { $0["lost"] as? [String] == [FloristCatalog.flowers] }, "\(stretches)")
            #expect(owned.last == [], "\(owned)")

            let (missing, answer) = try await client.get("/console/customers/nobody", headers: jsonHeaders)
            #expect(missing == .notFound && answer["code"] as? String == "customerNotFound")
        }
    }

    @Test func beyondLoopbackWithoutATokenTheConsoleRefusesEveryone() async throws {
        let runtime = try await SimulatorAPITests.runtime(host: "192.0.2.10")
        try await runtime.application().test(.router) { client in
            try await client.execute(uri: "/console/customers/x", method: .get) { #expect($0.status == .forbidden) }
            let (status, answer) = try await client.post("/console/inspect", ["document": "x"])
            #expect(status == .forbidden && answer["code"] as? String == "adminTokenNotConfigured")
        }
    }
}

/// The `/simulator` operations the transaction manager page drives, through the router.
@Suite("Transaction manager operations")
struct ManagerOperationsTests {
    @Test func billingClockDeleteClearAndTheServersAnswers() async throws {
        let runtime = try await SimulatorAPITests.runtime()
        try await runtime.application().test(.router) { client in
            _ = try await client.post("/simulator/accounts", ["accountId": "ana"])
            let (_, bought) = try await client.post(
                "/simulator/accounts/ana/purchases", ["productId": FloristCatalog.gold])
            let gold = try #require((bought["transaction"] as? [String: Any])?["transactionId"] as? String)
            _ = try await client.post("/simulator/accounts/ana/purchases", ["productId": FloristCatalog.flowers])

            // A failing card: the next renewal fails and the subscription goes to billing retry.
            let (failing, failingAccount) = try await client.post(
                "/simulator/accounts/ana/billing-issue", ["failing": true])
            #expect(failing == .ok, "\(failingAccount)")
            let (_, now) = try await client.get("/simulator/clock")
            let start = try #require(DateParsing.iso(now["now"] as? String))
            let target = start.addingTimeInterval(32 * 86_400)
            let (jumped, clock) = try await client.post(
                "/simulator/clock/jump", ["date": target.formatted(.iso8601)])
            #expect(jumped == .ok, "\(clock)")
            #expect(DateParsing.iso(clock["now"] as? String).map { abs($0.timeIntervalSince(target)) < 1 } == true)
            let (_, account) = try await client.get("/simulator/accounts/ana")
            let subscriptions = try #require(account["subscriptions"] as? [[String: Any]])
            #expect(["inBillingRetry", "inGracePeriod"].contains(subscriptions.first?["state"] as? String ?? ""))
            #expect(subscriptions.first?["groupName"] as? String == "VIP")

            // The card works again: the subscription recovers.
            let (_, recovered) = try await client.post("/simulator/accounts/ana/billing-issue", ["failing": false])
            #expect((recovered["subscriptions"] as? [[String: Any]])?.first?["state"] as? String == "subscribed")

            // Every notification reached the server, and the feed says what the server answered.
            try await SimulatorAPITests.settle(runtime)
            let (_, feed) = try await client.get("/simulator/notifications")
            let notifications = try #require(feed["notifications"] as? [[String: Any]])
            #expect(notifications.count >= 4)
            for notification in notifications {
                let answers = notification["serverAnswers"] as? [[String: Any]]
                #expect(answers?.last?["result"] as? String == "SUCCESS", "\(notification["notificationType"] ?? "")")
            }
            #expect(notifications.contains { $0["notificationType"] as? String == "DID_FAIL_TO_RENEW" })

            // Going back in time, or a date that is no date, is refused with a code.
            let (back, backAnswer) = try await client.post("/simulator/clock/jump", ["date": "2020-01-01T00:00:00Z"])
            #expect(back == .unprocessableContent, "\(backAnswer)")
            let (bad, badAnswer) = try await client.post("/simulator/clock/jump", ["date": "tomorrow"])
            #expect(bad == .badRequest && badAnswer["code"] as? String == "invalidField")

            // The clock: paused, sped up, and refused a speed it cannot have.
            let (paused, pausedClock) = try await client.put("/simulator/clock", ["paused": true])
            #expect(paused == .ok && pausedClock["paused"] as? Bool == true, "\(pausedClock)")
            let (fast, fastClock) = try await client.put("/simulator/clock", ["paused": false, "speed": 3600])
            #expect(fast == .ok && fastClock["speed"] as? Double == 3600 && fastClock["paused"] as? Bool == false)
            for body in [[:], ["speed": 0], ["speed": 2e6], ["paused": "yes"]] as [[String: Any]] {
                let (refused, answer) = try await client.put("/simulator/clock", body)
                #expect(refused == .badRequest, "\(body): \(answer)")
            }

            // Family sharing: kid joins ana's family and gets the flowers; leaving revokes them (REVOKE).
            _ = try await client.post("/simulator/accounts", ["accountId": "kid"])
            let (joined, _) = try await client.put("/simulator/accounts/ana/family", ["familyId": "home"])
            #expect(joined == .ok)
            let (_, kidInFamily) = try await client.put("/simulator/accounts/kid/family", ["familyId": "home"])
            #expect(kidInFamily["familyId"] as? String == "home")
            #expect((kidInFamily["entitledProductIds"] as? [String])?.contains(FloristCatalog.flowers) == true)
            let (leftFamily, kidAlone) = try await client.execute(
                uri: "/simulator/accounts/kid/family", method: .delete
            ) {
                ($0.status, try object($0))
            }
            #expect(leftFamily == .ok)
            #expect((kidAlone["entitledProductIds"] as? [String])?.contains(FloristCatalog.flowers) == false)
            #expect(kidAlone["familyId"] == nil)
            let (_, revoked) = try await client.get("/simulator/notifications")
            #expect(
                (revoked["notifications"] as? [[String: Any]])?.contains {
                    $0["notificationType"] as? String == "REVOKE" && $0["accountId"] as? String == "kid"
                } == true)

            // Delete one transaction, then clear the rest.
            try await client.execute(uri: "/simulator/transactions/\(gold)", method: .delete) { response in
                #expect(response.status == .noContent)
            }
            try await client.execute(uri: "/simulator/transactions/\(gold)", method: .delete) { response in
                #expect(response.status == .notFound)
            }
            let (_, afterDelete) = try await client.get("/simulator/accounts/ana")
            let left = (afterDelete["transactions"] as? [[String: Any]])?.compactMap { $0["transactionId"] as? String }
            #expect(left?.contains(gold) == false && left?.isEmpty == false)
            let (cleared, afterClear) = try await client.post("/simulator/accounts/ana/clear", [:])
            #expect(cleared == .ok)
            #expect((afterClear["transactions"] as? [Any])?.isEmpty == true)
        }
    }
}

/// ISO 8601 dates as the server writes them.
enum DateParsing {
    static func iso(_ text: String?) -> Date? {
        guard let text else { return nil }
        return (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
            ?? (try? Date(text, strategy: .iso8601))
    }
}
