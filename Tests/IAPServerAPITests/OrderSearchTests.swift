import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import IAPSimulator
import IAPTestSupport
import Logging
import Testing

@testable import IAPServer

/// The console finds a customer by the order id of their emailed receipt: not stored anywhere here, so the app's App
/// Store Server API key asks Apple (here `iapkit serve`'s copy, on a loopback socket) which transactions it holds.
@Suite struct OrderSearchTests {
    typealias S = SimulatedServerAPITests

    @Test func aCustomerIsFoundByTheOrderIDOfTheirReceipt() async throws {
        let simulator = try S.simulator()
        try simulator.createAccount("ana", appAccountToken: UUID(uuidString: "00000000-0000-4000-8000-0000000000a1")!)
        let gold = try #require(try simulator.purchase(FloristCatalog.gold, account: "ana").transaction)
        let order = try #require(try simulator.orderID(of: gold.transactionID))
        try await S.serve(simulator) { apple in
            let service = try RefreshTests.service(simulator, apple: apple)
            _ = try await service.recordTransaction(
                signedTransaction: gold.jws, signedRenewalInfo: nil, appAccountToken: nil, caller: nil)
            var logger = Logger(label: "test")
            logger.logLevel = .critical
            let application = buildApplication(
                service: service, configuration: ServerConfiguration(port: 0), operatorAccess: .open, logger: logger)
            try await application.test(.router) { client in
                try await client.execute(uri: "/console/customers?search=\(order)", method: .get) { response in
                    #expect(response.status == .ok)
                    let page =
                        try JSONSerialization.jsonObject(with: Data(String(buffer: response.body).utf8))
                        as? [String: Any]
                    let customers = try #require(page?["customers"] as? [[String: Any]])
                    #expect(customers.map { $0["customerId"] as? String } == ["00000000-0000-4000-8000-0000000000a1"])
                }
                try await client.execute(uri: "/console/customers/\(order)", method: .get) { response in
                    #expect(response.status == .ok)
                    let view =
                        try JSONSerialization.jsonObject(with: Data(String(buffer: response.body).utf8))
                        as? [String: Any]
                    #expect(view?["customerId"] as? String == "00000000-0000-4000-8000-0000000000a1")
                }
                // An order Apple does not know finds nobody; no lookup is made for what cannot be an order id.
                try await client.execute(uri: "/console/customers?search=ZZZZ0000ZZ", method: .get) { response in
                    #expect(response.status == .ok)
                    let page =
                        try JSONSerialization.jsonObject(with: Data(String(buffer: response.body).utf8))
                        as? [String: Any]
                    #expect((page?["customers"] as? [Any])?.isEmpty == true)
                }
                try await client.execute(uri: "/console/customers/nobody-here", method: .get) { response in
                    #expect(response.status == .notFound)
                }
            }
        }
        // Apple unreachable: the search says so with a stable code instead of claiming nobody matches.
        let unreachable = try RefreshTests.service(
            simulator, apple: URL(string: "http://127.0.0.1:9")!, timeout: .milliseconds(500))
        let failed = await #expect(throws: ServiceError.self) {
            _ = try await unreachable.customerList(bundleID: nil, search: order, after: nil, limit: 10)
        }
        #expect(failed?.code == "orderLookupFailed")
    }
}
