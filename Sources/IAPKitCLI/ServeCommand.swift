public import ArgumentParser
import Foundation
import Hummingbird
import IAPCatalog
import IAPServer
import IAPSignedData
import IAPSimulator
import Logging
import NIOCore

/// `iapkit serve`: the validation server, with the local App Store beside it, in one command.
public struct ServeCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the validation server (SQLite by default) with the local App Store feeding it.",
        discussion: """
            Verifies signed transactions (POST /v1/transactions), takes App Store Server Notifications V2 \
            (POST /v1/notifications), and answers what customers own (GET /v1/customers/ID/entitlements, with an \
            API key). With the simulator on (the default) the local App Store sells the catalog, signs with its own \
            PKI (--pki DIR keeps it between runs, shared with `iapkit simulate --pki`), and every notification it \
            makes is applied by the server, so one process shows the whole loop. Stop it with Ctrl-C: requests in \
            flight finish and the database closes cleanly.
            """
    )

    @Option(help: "The address to listen on (loopback by default).")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on.")
    var port = 8080

    @Option(help: "An SQLite file path, ':memory:', or a postgres:// URL.")
    var database = "iapkit.sqlite"

    @Option(help: "The simulator's catalog (.storekit or Products.plist).")
    var catalog = "Examples/Florist/Florist.storekit"

    @Option(help: "The simulated app's bundle id.")
    var bundleId = "com.example.florist"

    @Option(help: "Sign with the authority saved in this folder (made there if absent).")
    var pki: String?

    @Option(
        name: .customLong("api-key"), help: "An API key for the customer endpoints (repeatable; one is made if none).")
    var apiKeys: [String] = []

    @Flag(help: "Do not run the local App Store.")
    var noSimulator = false

    public init() {}

    public func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
        if noSimulator {
            throw ValidationError("without the simulator a configuration file is needed; not yet supported")
        }
    }

    public func run() async throws {
        var logger = Logger(label: "iapkit")
        logger.logLevel = .info
        let authority = try SimulatorPKI.loadOrCreate(folder: pki)
        let products = try Catalog.load(contentsOfFile: catalog)
        let store = try AppStoreSimulator(
            catalog: products, configuration: SimulatorConfiguration(bundleID: bundleId, start: Date()),
            pki: authority, clock: .running(wallClock: { Date() }))
        let storage = try await Self.openStorage(database, logger: logger)
        let app = AppConfiguration(
            bundleID: bundleId, appAppleID: store.configuration.appAppleID,
            environments: [store.configuration.environment], trustStore: authority.trustStore, catalog: products)
        let service = try ValidationService(
            apps: [app], storage: storage, clock: { (try? store.now) ?? Date() }, logger: logger)
        let feed = NotificationFeed(service: service, logger: logger)
        store.addNotificationSink { feed.send($0) }
        let keys = apiKeys.isEmpty ? [UUID().uuidString.lowercased()] : apiKeys
        let server = ServerConfiguration(host: host, port: port, apiKeys: keys)
        let (host, port, database, bundleId, given) = (host, port, database, bundleId, !apiKeys.isEmpty)
        let productCount = products.products.count
        let application = buildApplication(service: service, configuration: server, logger: logger) { channel in
            let address = "http://\(host):\(channel.localAddress?.port ?? port)"
            print(
                """
                IAPKit server on \(address)  (database: \(database), simulator: \(bundleId), \(productCount) products)
                API key for the customer endpoints: \(given ? "as given" : "\(keys[0]) (made for this run; pass --api-key)")
                Try first:
                  curl \(address)/health
                  curl -H 'Authorization: Bearer \(keys[0])' \(address)/v1/customers/CUSTOMER/entitlements
                """)
        }
        do {
            try await application.runService()
        } catch {
            try? await storage.shutdown()
            throw error
        }
        feed.finish()
        await feed.drained()
        try await storage.shutdown()
    }

    static func openStorage(_ database: String, logger: Logger) async throws -> any ServerStorage {
        if database.hasPrefix("postgres://") || database.hasPrefix("postgresql://") {
            return try await SQLStorage(source: try PostgresConnectionSource(url: database, logger: logger))
        }
        return try await SQLStorage(source: try await SQLiteConnectionSource(path: database, logger: logger))
    }
}

/// The simulator's notifications, applied by the server in the order the simulator made them.
final class NotificationFeed: Sendable {
    private let continuation: AsyncStream<SimulatorNotification>.Continuation
    private let worker: Task<Void, Never>

    init(service: ValidationService, logger: Logger) {
        let (stream, continuation) = AsyncStream.makeStream(of: SimulatorNotification.self)
        self.continuation = continuation
        worker = Task {
            for await notification in stream {
                let body = #"{"signedPayload":""# + notification.signedPayload + #""}"#
                do {
                    let outcome = try await service.receiveNotification(
                        signedPayload: notification.signedPayload, body: body)
                    logger.info(
                        "notification \(notification.type.rawValue) \(notification.subtype?.rawValue ?? "")",
                        metadata: ["uuid": "\(notification.uuid)", "outcome": "\(outcome.rawValue)"])
                } catch {
                    logger.error(
                        "notification refused", metadata: ["uuid": "\(notification.uuid)", "error": "\(error)"])
                }
            }
        }
    }

    func send(_ notification: SimulatorNotification) { continuation.yield(notification) }
    func finish() { continuation.finish() }
    func drained() async { await worker.value }
}
