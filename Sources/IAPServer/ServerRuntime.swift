public import Foundation
public import Hummingbird
public import IAPCatalog
import IAPSignedData
public import IAPSimulator
public import Logging
public import NIOCore

/// A configured server ready to run: storage open, apps served, the local App Store (when on) beside it with its
/// notifications flowing into the server. `iapkit serve` and the tests that start real processes use this one path.
public struct ServerRuntime: Sendable {
    public let settings: ServerSettings
    public let service: ValidationService
    public let storage: any ServerStorage
    /// The local App Store, when it runs.
    public let simulator: AppStoreSimulator?
    private let feed: NotificationFeed?
    private let saver: SimulatorSaver?
    private let logger: Logger

    /// Opens the storage (migrating it), loads the simulator's catalog and authority, and builds the service.
    /// - Parameters:
    ///   - settings: what to serve, where, from which database.
    ///   - logger: where the server logs.
    ///   - clock: the wall clock (the simulator starts at its current moment).
    ///   - authority: the simulator's signing authority; by default the one in `simulator.pki` (or a new one).
    public static func start(
        _ settings: ServerSettings, logger: Logger, clock: @escaping @Sendable () -> Date = { Date() },
        authority: SimulatorPKI? = nil
    ) async throws -> ServerRuntime {
        var apps = settings.apps
        var simulator: AppStoreSimulator?
        let storage = try await openStorage(settings.databaseURL, logger: logger)
        do {
            if let simulated = settings.simulator {
                let authority = try authority ?? SimulatorPKI.loadOrCreate(folder: simulated.pkiFolder)
                let catalog =
                    try simulated.catalogPath.map { path throws(CatalogError) in
                        try Catalog.load(contentsOfFile: path)
                    } ?? Catalog.floristExample()
                var configuration = SimulatorConfiguration(bundleID: simulated.bundleID, start: clock())
                configuration.serverAPIKeys = simulated.serverAPIKeys
                configuration.serverAPIIssuerID = simulated.serverAPIIssuerID
                configuration.performanceTest.responseTimeThreshold = simulated.performanceTestThreshold
                // One clock move runs at most this many renewals, retries and expiries (a jump to 2099 with a few
                // dozen subscriptions is a few thousand); past it the move stops with an error.
                configuration.maximumEventsPerAdvance = 100_000
                // On a database that already holds this app's transactions (a restart), new ids continue past the
                // stored ones and UUIDs come from a new seed, so nothing the store makes now collides with before.
                if let largest = try await storage.largestTransactionID(bundleID: simulated.bundleID) {
                    configuration.firstTransactionID = max(configuration.firstTransactionID, largest + 1)
                }
                configuration.seed = UInt64(bitPattern: Int64(clock().timeIntervalSince1970 * 1_000_000)) | 1
                // A server keeps the notifications (for /simulator/notifications and the notification history), not
                // every event and signed artifact: those would grow with every renewal for as long as it runs. A store
                // saved in this database before continues where it stopped.
                let store: AppStoreSimulator
                if let saved = try await storage.simulatorState(bundleID: simulated.bundleID) {
                    store = try AppStoreSimulator(
                        restoring: saved, catalog: catalog, configuration: configuration, pki: authority,
                        clock: .running(wallClock: clock), keepsRecords: false, keepsNotifications: true)
                    logger.notice(
                        "the local App Store continues from the database",
                        metadata: [
                            "accounts": "\(store.accountIDs.count)", "notifications": "\(store.notifications.count)",
                        ])
                } else {
                    store = try AppStoreSimulator(
                        catalog: catalog, configuration: configuration, pki: authority,
                        clock: .running(wallClock: clock), keepsRecords: false, keepsNotifications: true)
                }
                apps.append(
                    AppConfiguration(
                        bundleID: simulated.bundleID, appAppleID: store.configuration.appAppleID,
                        environments: [store.configuration.environment], trustStore: authority.trustStore,
                        catalog: catalog))
                simulator = store
            }
        } catch {
            try? await storage.shutdown()
            throw error
        }
        let service: ValidationService
        do {
            let store = simulator
            service = try ValidationService(
                apps: apps, storage: storage, clock: { store?.currentTime ?? clock() }, logger: logger)
        } catch {
            try? await storage.shutdown()
            throw error
        }
        var feed: NotificationFeed?
        var saver: SimulatorSaver?
        if let simulator {
            let notifications = NotificationFeed(service: service, simulator: simulator, logger: logger)
            // Notifications a stopped server had not applied yet (no send attempt) are sent again, as Apple retries.
            for notification in simulator.notifications
            where simulator.sendAttempts(notificationUUID: notification.uuid).isEmpty {
                notifications.send(notification)
            }
            simulator.addNotificationSink { notifications.send($0) }
            feed = notifications
            saver = SimulatorSaver(simulator: simulator, storage: storage, logger: logger)
        }
        return ServerRuntime(
            settings: settings, service: service, storage: storage, simulator: simulator, feed: feed, saver: saver,
            logger: logger)
    }

    /// The Hummingbird application; `/simulator` is mounted when the simulator runs, behind the operator guard.
    /// - Parameter onServerRunning: called once the socket listens.
    public func application(onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in })
        -> some ApplicationProtocol
    {
        buildApplication(
            service: service, configuration: settings.server, simulator: simulator, saver: saver,
            operatorAccess: settings.operatorAccess, logger: logger, onServerRunning: onServerRunning)
    }

    /// The simulator whose control plane someone can use: nil when the operator routes refuse everyone.
    public var simulatorServed: AppStoreSimulator? {
        settings.operatorAccess == .refused ? nil : simulator
    }

    /// Serves until SIGINT or SIGTERM; requests in flight finish, pending simulator notifications are applied, then
    /// the storage closes.
    /// - Parameter onServerRunning: called once the socket listens (the channel tells the port).
    public func run(onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }) async throws {
        switch settings.operatorAccess {
        case .open:
            logger.notice(
                """
                development mode: /simulator, /console and /metrics are open without a token on this machine; \
                configure apps (--config) or an adminToken to require one
                """)
        case .refused:
            logger.warning(
                "/simulator, /console and /metrics refuse every request: set adminToken (IAPKIT_ADMINTOKEN) to use them"
            )
        case .token: break
        }
        // A running clock's renewals and expiries happen off the request path: this ticker catches the simulator up
        // every second, so the validation routes (which read its time without waiting) see them soon after they fall
        // due, even when nobody drives the simulator.
        let ticker = simulator.map { store in
            Task.detached {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    _ = try? store.now
                }
            }
        }
        defer { ticker?.cancel() }
        do {
            try await application(onServerRunning: onServerRunning).runService()
        } catch {
            await saver?.finish()
            try? await storage.shutdown()
            throw error
        }
        feed?.finish()
        await feed?.drained()
        await saver?.finish()
        try await storage.shutdown()
    }

    /// An SQLite file (created on first start), `:memory:`, or a PostgreSQL server for a `postgres://` URL.
    public static func openStorage(_ database: String, logger: Logger) async throws -> any ServerStorage {
        if database.hasPrefix("postgres://") || database.hasPrefix("postgresql://") {
            return try await SQLStorage(database: try PostgresDatabase(url: database, logger: logger))
        }
        return try await SQLStorage(database: try SQLiteDatabase(path: database))
    }
}

/// The simulator's notifications, applied by the server in the order the simulator made them (as if Apple had
/// posted each one to `/v1/notifications`); each application is recorded as the notification's send attempt, so the
/// simulated notification history tells what reached the server.
final class NotificationFeed: Sendable {
    private let continuation: AsyncStream<SimulatorNotification>.Continuation
    private let worker: Task<Void, Never>

    init(service: ValidationService, simulator: AppStoreSimulator, logger: Logger) {
        let (stream, continuation) = AsyncStream.makeStream(of: SimulatorNotification.self)
        self.continuation = continuation
        worker = Task {
            for await notification in stream {
                let body = String(decoding: notification.requestBody, as: UTF8.self)
                do {
                    let outcome = try await service.receiveNotification(
                        signedPayload: notification.signedPayload, body: body, receivedAt: notification.date)
                    logger.info(
                        "simulator notification applied",
                        metadata: [
                            "type": "\(notification.type.rawValue)",
                            "subtype": "\(notification.subtype?.rawValue ?? "")",
                            "uuid": "\(notification.uuid)", "outcome": "\(outcome.rawValue)",
                        ])
                    simulator.recordSendAttempt(notificationUUID: notification.uuid, result: "SUCCESS")
                } catch {
                    logger.error(
                        "simulator notification refused",
                        metadata: ["uuid": "\(notification.uuid)", "error": "\(error)"])
                    simulator.recordSendAttempt(
                        notificationUUID: notification.uuid, result: "UNSUCCESSFUL_HTTP_RESPONSE_CODE")
                }
            }
        }
    }

    func send(_ notification: SimulatorNotification) { continuation.yield(notification) }
    func finish() { continuation.finish() }
    func drained() async { await worker.value }
}

extension Catalog {
    /// The florist example's catalog, shipped as a resource of this package: what `iapkit serve` sells by default.
    public static func floristExample() throws(CatalogError) -> Catalog {
        guard let url = Bundle.module.url(forResource: "Florist", withExtension: "storekit"),
            let data = try? Data(contentsOf: url)
        else {
            throw CatalogError(
                .unreadableFile, file: "Florist.storekit", keyPath: "",
                "the example catalog is missing from the package's resources; pass --catalog FILE")
        }
        return try load(data, fileName: "Florist.storekit")
    }
}
