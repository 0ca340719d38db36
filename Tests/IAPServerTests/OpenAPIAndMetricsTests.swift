import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import IAPServer
import IAPSimulator
import IAPSimulatorServer
import IAPTestSupport
import NIOCore
import Testing
import Yams

@Suite("The OpenAPI document and /metrics")
struct OpenAPIAndMetricsTests {
    /// Every route the router serves is in the document with its method, and the document names no other.
    @Test func theDocumentDescribesExactlyTheRouterRoutes() async throws {
        let runtime = try await SimulatorAPITests.runtime()
        let router = buildRouter(
            service: runtime.service, configuration: runtime.settings.server, simulator: runtime.simulator)
        let served = Set(
            router.routes.map { route in
                let path = route.path.description.split(separator: "/").map { part in
                    part.hasPrefix(":") ? "{\(part.dropFirst())}" : String(part)
                }
                return "\(route.method.rawValue) /\(path.joined(separator: "/"))"
            })
        let documented = try await runtime.application().test(.router) { client in
            try await client.execute(uri: "/openapi.yaml", method: .get) { response in
                var documented: Set<String> = []
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/yaml")
                let text = String(buffer: response.body)
                let document = try #require(try Yams.load(yaml: text) as? [String: Any])
                #expect(document["openapi"] as? String == "3.1.0")
                // Every reference names something the document defines (schemathesis skips what it cannot resolve).
                let components = try #require(document["components"] as? [String: [String: Any]])
                let references = text.matches(of: /"#\/components\/(\w+)\/(\w+)"/).map {
                    (String($0.output.1), String($0.output.2))
                }
                #expect(!references.isEmpty)
                for (section, name) in references {
                    #expect(components[section]?[name] != nil, "#/components/\(section)/\(name) is not defined")
                }
                let paths = try #require(document["paths"] as? [String: Any])
                for (path, item) in paths {
                    for method in (item as? [String: Any] ?? [:]).keys
                    where ["get", "head", "post", "put", "patch", "delete"].contains(method) {
                        documented.insert("\(method.uppercased()) \(path)")
                    }
                }
                return documented
            }
        }
        #expect(served.subtracting(documented).sorted() == [], "served but not documented")
        #expect(documented.subtracting(served).sorted() == [], "documented but not served")
    }

    @Test func metricsCountRequestsVerificationsAndNotifications() async throws {
        let harness = try ServerHarness()
        let inbox = SimulatorInbox(harness.store)
        try harness.store.createAccount("ana")
        let bought = try #require(try harness.store.purchase(FloristCatalog.flowers, account: "ana").transaction)
        let token = "metrics-admin-token-0123"
        try await harness.application(operatorAccess: .token(token)).test(.router) { client in
            _ = try await client.post("/v1/transactions", ["signedTransaction": bought.jws])
            _ = try await client.post("/v1/transactions", ["signedTransaction": "not.a.jws"])
            for notification in inbox.take() {
                _ = try await client.post("/v1/notifications", ["signedPayload": notification.signedPayload])
            }
            // /metrics is the operator's: the admin token, or nothing.
            try await client.execute(uri: "/metrics", method: .get) { #expect($0.status == .unauthorized) }
            try await client.execute(uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(token)"]) {
                response in
                #expect(response.status == .ok)
                let text = String(buffer: response.body)
                for expected in [
                    #"iapkit_verifications_total{document="transaction",verdict="valid"}"#,
                    #"iapkit_verifications_total{document="transaction",verdict="malformed"}"#,
                    #"iapkit_notifications_total{type="ONE_TIME_CHARGE",outcome="applied"}"#,
                    #"http_route="/v1/transactions""#,
                    "http_server_request_duration",
                ] {
                    #expect(text.contains(expected), "\(expected) missing from /metrics")
                }
            }
        }
    }
}
