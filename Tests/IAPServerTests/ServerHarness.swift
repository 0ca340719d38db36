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
import Logging
import NIOCore
import Testing

/// A simulator selling the florist catalog (frozen clock, fixed keys) and a validation service that trusts its roots,
/// with the server's clock on the simulator's.
struct ServerHarness {
    static let bundleID = "com.example.florist"
    static let apiKey = "test-key-1"

    let store: AppStoreSimulator
    let service: ValidationService
    let configuration: ServerConfiguration

    init(
        storage: any ServerStorage = MemoryStorage(), maximumBodySize: Int = 1 << 20, sharedSecret: String? = nil,
        maximumNotificationAge: TimeInterval = 4 * 86_400
    ) throws {
        let store = try AppStoreSimulator(
            catalog: FloristCatalog.catalog, configuration: SimulatorConfiguration(bundleID: Self.bundleID),
            pki: SimulatorTestKeys.pki)
        self.store = store
        let app = AppConfiguration(
            bundleID: Self.bundleID, appAppleID: store.configuration.appAppleID, environments: [.sandbox],
            trustStore: SimulatorTestKeys.pki.trustStore, sharedSecret: sharedSecret, catalog: FloristCatalog.catalog,
            maximumNotificationAge: maximumNotificationAge)
        service = try ValidationService(
            apps: [app], storage: storage, clock: { (try? store.now) ?? store.configuration.start },
            logger: Logger(label: "test"))
        configuration = ServerConfiguration(port: 0, maximumBodySize: maximumBodySize, apiKeys: [Self.apiKey])
    }

    /// The server; its operator routes are open unless a test asks otherwise.
    func application(operatorAccess: OperatorAccess = .open) -> some ApplicationProtocol {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return buildApplication(
            service: service, configuration: configuration, operatorAccess: operatorAccess, logger: logger)
    }
}

/// A JSON object as request body text.
func json(_ object: [String: Any]) -> ByteBuffer {
    ByteBuffer(bytes: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
}

/// A response body as a JSON object.
func object(_ response: TestResponse) throws -> [String: Any] {
    let value = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))
    return try #require(value as? [String: Any])
}

let jsonHeaders: HTTPFields = [.contentType: "application/json"]
let keyHeaders: HTTPFields = [.contentType: "application/json", .authorization: "Bearer \(ServerHarness.apiKey)"]

extension TestClientProtocol {
    /// Posts a JSON body and returns the status and the JSON answer.
    func post(_ uri: String, _ body: [String: Any], headers: HTTPFields = jsonHeaders) async throws -> (
        HTTPResponse.Status, [String: Any]
    ) {
        try await execute(uri: uri, method: .post, headers: headers, body: json(body)) { response in
            (response.status, try object(response))
        }
    }

    /// Puts a JSON body and returns the status and the JSON answer.
    func put(_ uri: String, _ body: [String: Any], headers: HTTPFields = jsonHeaders) async throws -> (
        HTTPResponse.Status, [String: Any]
    ) {
        try await execute(uri: uri, method: .put, headers: headers, body: json(body)) { response in
            (response.status, try object(response))
        }
    }

    func get(_ uri: String, headers: HTTPFields = keyHeaders) async throws -> (HTTPResponse.Status, [String: Any]) {
        try await execute(uri: uri, method: .get, headers: headers) { response in
            (response.status, try object(response))
        }
    }
}
