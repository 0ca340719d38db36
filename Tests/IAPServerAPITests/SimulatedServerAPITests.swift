import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import IAPCatalog
import IAPServer
import IAPServerAPI
import IAPSignedData
import IAPSimulator
import IAPSimulatorServer
import IAPTestSupport
import Logging
import NIOHTTP1
import Testing

/// The client against `iapkit serve`'s own copy of the API: the same application the command runs, with a simulator
/// that knows the test key, on a loopback socket.
@Suite struct SimulatedServerAPITests {
    static let key = ServerAPITokensTests.key
    static let keyID = ServerAPITokensTests.credentials.keyID

    static func simulator(keys: [String: P256.Signing.PublicKey] = [keyID: key.publicKey]) throws -> AppStoreSimulator {
        var configuration = SimulatorConfiguration(bundleID: "com.example.florist")
        configuration.serverAPIKeys = keys
        configuration.serverAPIIssuerID = ServerAPITokensTests.credentials.issuerID
        return try AppStoreSimulator(
            catalog: FloristCatalog.catalog, configuration: configuration, pki: SimulatorTestKeys.pki)
    }

    static func serve(_ simulator: AppStoreSimulator, _ body: @Sendable (URL) async throws -> Void) async throws {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let app = AppConfiguration(
            bundleID: simulator.configuration.bundleID, appAppleID: simulator.configuration.appAppleID,
            environments: [.sandbox], trustStore: SimulatorTestKeys.pki.trustStore, catalog: simulator.catalog)
        let service = try ValidationService(
            apps: [app], storage: MemoryStorage(), clock: { (try? simulator.now) ?? Date() }, logger: logger)
        try await LoopbackServer.serve({ onRunning in
            buildApplication(
                service: service, configuration: ServerConfiguration(host: "127.0.0.1", port: 0),
                simulator: simulator, operatorAccess: .open, logger: logger,
                onServerRunning: onRunning)
        }) { port in try await body(URL(string: "http://127.0.0.1:\(port)")!) }
    }

    static func client(
        _ url: URL, credentials: ServerAPICredentials = ServerAPITokensTests.credentials,
        timeout: Duration = .seconds(10)
    ) throws -> ServerAPIClient {
        ServerAPIClient(
            credentials: credentials, environment: .custom(url),
            verifier: try SignedDataVerifier(
                trustStore: SimulatorTestKeys.pki.trustStore,
                configuration: .init(bundleID: "com.example.florist", environments: [.sandbox])),
            retry: ServerAPIRetryPolicy(attempts: 1), timeout: timeout)
    }

    @Test func aTransactionIsLookedUpAndVerified() async throws {
        let simulator = try Self.simulator()
        try simulator.createAccount("ana")
        let bought = try #require(try simulator.purchase(FloristCatalog.flowers, account: "ana").transaction)
        try await Self.serve(simulator) { url in
            let client = try Self.client(url)
            let transaction = try await client.transactionInfo(bought.transactionID)
            #expect(transaction.transactionID == bought.transactionID)
            #expect(transaction.productID == FloristCatalog.flowers)

            let missing = await #expect(throws: ServerAPIError.self) { try await client.transactionInfo("999") }
            #expect(missing?.appleErrorCode == 4_040_010 && missing?.httpStatus == 404)
            let invalid = await #expect(throws: ServerAPIError.self) { try await client.transactionInfo("abc") }
            #expect(invalid?.appleErrorCode == 4_000_006 && invalid?.httpStatus == 400)
        }
    }

    @Test func aTokenApplesServerWouldRefuseGets401() async throws {
        let simulator = try Self.simulator()
        try simulator.createAccount("ana")
        let bought = try #require(try simulator.purchase(FloristCatalog.flowers, account: "ana").transaction)
        let base = ServerAPITokensTests.credentials
        let stranger = TestJWS.key("stranger")
        let refused: [ServerAPICredentials] = [
            ServerAPICredentials(
                keyID: base.keyID, issuerID: base.issuerID, bundleID: base.bundleID, privateKey: stranger),
            ServerAPICredentials(
                keyID: "UNKNOWNKEY", issuerID: base.issuerID, bundleID: base.bundleID, privateKey: base.privateKey),
            ServerAPICredentials(
                keyID: base.keyID, issuerID: base.issuerID, bundleID: "com.example.other", privateKey: base.privateKey),
            ServerAPICredentials(
                keyID: base.keyID, issuerID: "another-issuer", bundleID: base.bundleID, privateKey: base.privateKey),
        ]
        try await Self.serve(simulator) { url in
            for credentials in refused {
                let error = await #expect(throws: ServerAPIError.self) {
                    try await Self.client(url, credentials: credentials).transactionInfo(bought.transactionID)
                }
                #expect(error?.httpStatus == 401 && error?.appleErrorCode == nil, "\(credentials.keyID)")
            }
            // A token signed with the right key whose claims would overflow a lifetime computed carelessly.
            let overflowing = try JWSSigner(privateKey: base.privateKey, keyID: base.keyID).sign(
                payload: Array(
                    #"{"iss":"\#(base.issuerID)","aud":"appstoreconnect-v1","bid":"\#(base.bundleID)","exp":9223372036854775807,"iat":-9223372036854775808}"#
                        .utf8))
            var hostile = HTTPClientRequest(url: url.absoluteString + "/inApps/v1/transactions/\(bought.transactionID)")
            hostile.headers.add(name: "Authorization", value: "Bearer \(overflowing)")
            #expect(try await HTTPClient.shared.execute(hostile, timeout: .seconds(10)).status.code == 401)
            // An expired token: made an hour ago, lived five minutes.
            let old = ServerAPITokens(
                credentials: base, lifetime: 300, clock: { Date().addingTimeInterval(-3600) })
            var request = HTTPClientRequest(url: url.absoluteString + "/inApps/v1/transactions/\(bought.transactionID)")
            request.headers.add(name: "Authorization", value: "Bearer \(try await old.token())")
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
            #expect(response.status.code == 401)
        }
    }

    /// "The client and the simulator's API agree on a simulated year": a history fetched page by page equals the
    /// simulator's own list of the customer's transactions.
    @Test func aYearOfHistoryComesBackPageByPageAsTheSimulatorHasIt() async throws {
        let simulator = try Self.simulator()
        try simulator.createAccount("ana")
        let first = try #require(try simulator.purchase(FloristCatalog.gold, account: "ana").transaction)
        for month in 1...18 {
            try simulator.advance(by: SubscriptionPeriod(value: 1, unit: .month))
            if month % 3 == 0 { _ = try simulator.purchase(FloristCatalog.installation, account: "ana") }
        }
        _ = try simulator.purchase(FloristCatalog.flowers, account: "ana")
        let expected = try simulator.transactions(account: "ana")
        #expect(expected.count > 20, "more than one page")
        try await Self.serve(simulator) { url in
            let client = try Self.client(url)
            var ids: [String] = []
            for try await transaction in client.transactionHistory(first.transactionID) {
                ids.append(transaction.transactionID ?? "?")
            }
            #expect(ids == expected.map(\.transactionID))

            var newestFirst: [String] = []
            for try await transaction in client.transactionHistory(
                first.transactionID, query: TransactionHistoryQuery(sort: .descending))
            {
                newestFirst.append(transaction.transactionID ?? "?")
            }
            #expect(newestFirst == ids.reversed())

            var flowers: [String] = []
            for try await transaction in client.transactionHistory(
                first.transactionID,
                query: TransactionHistoryQuery(productIDs: [FloristCatalog.flowers, FloristCatalog.installation]))
            {
                flowers.append(transaction.productID ?? "?")
            }
            #expect(flowers.count == 7)
            #expect(Set(flowers) == [FloristCatalog.flowers, FloristCatalog.installation])

            let page = try await client.transactionHistoryPage(first.transactionID)
            #expect(page.items.count == 20 && page.hasMore)
        }
    }
}
