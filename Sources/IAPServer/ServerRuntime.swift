public import Foundation
public import Hummingbird
public import Logging
public import NIOCore

/// A configured server ready to run: storage open, apps served, and what was added beside the validation server (the
/// local App Store, when `iapkit serve` runs it). `iapkit serve` and the tests that start real processes use this one
/// path.
public struct ServerRuntime: Sendable {
    public let settings: ServerSettings
    public let service: ValidationService
    public let storage: any ServerStorage
    /// What runs beside the validation server, in the order it was made.
    public let additions: [any ServerAddition]
    private let logger: Logger

    /// Opens the storage (migrating it), makes the additions, and builds the service.
    /// - Parameters:
    ///   - settings: what to serve, where, from which database.
    ///   - logger: where the server logs.
    ///   - clock: the wall clock.
    ///   - additions: what may run beside the validation server; each decides from the settings whether it does.
    public static func start(
        _ settings: ServerSettings, logger: Logger, clock: @escaping @Sendable () -> Date = { Date() },
        additions: [ServerAdditionMaker] = []
    ) async throws -> ServerRuntime {
        let storage = try await openStorage(settings.databaseURL, logger: logger)
        var made: [any ServerAddition] = []
        do {
            for make in additions {
                if let addition = try await make(settings, storage, logger, clock) { made.append(addition) }
            }
            let serviceClock = made.lazy.compactMap(\.clock).first ?? clock
            let service = try ValidationService(
                apps: settings.apps + made.flatMap(\.apps), storage: storage, clock: serviceClock, wallClock: clock,
                logger: logger)
            for addition in made { await addition.attach(to: service) }
            return ServerRuntime(
                settings: settings, service: service, storage: storage, additions: made, logger: logger)
        } catch {
            // What was made gives up what it took (the local App Store its lease).
            for addition in made { await addition.finish() }
            try? await storage.shutdown()
            throw error
        }
    }

    /// The Hummingbird application: the validation server's routes and each addition's, behind their guards.
    /// - Parameter onServerRunning: called once the socket listens.
    public func application(onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in })
        -> some ApplicationProtocol
    {
        buildApplication(
            service: service, configuration: settings.server, additions: additions,
            operatorAccess: settings.operatorAccess, logger: logger, onServerRunning: onServerRunning)
    }

    /// Serves until SIGINT or SIGTERM; requests in flight finish, the additions finish their work (the local App
    /// Store applies its pending notifications), then the storage closes.
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
                "/simulator, /console and /metrics refuse every request: set adminToken (IAPKIT_ADMIN_TOKEN) to use them"
            )
        case .token: break
        }
        var workers = additions.map { addition in Task { await addition.run() } }
        let sender = WebhookSender(service: service, settings: settings.delivery, logger: logger)
        if sender.hasWork, settings.delivery.sends { workers.append(Task { await sender.run() }) }
        do {
            try await application(onServerRunning: onServerRunning).runService()
        } catch {
            try? await stop(workers)
            throw error
        }
        try await stop(workers)
    }

    /// Stops what `run` started: the loops first (the local App Store gives up its lease when it finishes, and no beat
    /// of it may follow), the additions' own awaited; then the additions finish and the storage closes.
    ///
    /// A method of its own: the same steps as a local function of `run`, capturing its workers, crashed the release
    /// build's compiler (Swift 6.3.1, splitting `run`'s coroutine).
    private func stop(_ workers: [Task<Void, Never>]) async throws {
        for worker in workers { worker.cancel() }
        for worker in workers.prefix(additions.count) { await worker.value }
        for addition in additions { await addition.finish() }
        try await storage.shutdown()
    }

    /// An SQLite file (created on first start), `:memory:`, or a PostgreSQL server for a `postgres://` URL.
    /// (``DatabaseName``: a URL of another scheme is refused.)
    public static func openStorage(_ database: String, logger: Logger) async throws -> any ServerStorage {
        switch try DatabaseName(database) {
        case .postgres(let url):
            let autogroup = try? String(contentsOfFile: "/proc/sys/kernel/sched_autogroup_enabled", encoding: .utf8)
            if let advice = PostgresDatabase.sharedCoresAdvice(url: url, autogroup: autogroup) {
                logger.notice("\(advice)")
            }
            return try await SQLStorage(database: try PostgresDatabase(url: url, logger: logger))
        case .sqlite(let path):
            return try await SQLStorage(database: try SQLiteDatabase(path: path))
        }
    }
}
