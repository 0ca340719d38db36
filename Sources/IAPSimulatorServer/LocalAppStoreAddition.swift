public import Foundation
public import Hummingbird
public import IAPCatalog
import IAPCore
public import IAPServer
import IAPSignedData
public import IAPSimulator
public import Logging
public import NIOCore
import Synchronization

/// The local App Store served beside the validation server: `/simulator` (its control plane and update streams),
/// `/inApps` (its App Store Server API), the store and manager pages, its notifications applied by the server as if
/// Apple had posted them, and its state saved in the server's database after every change.
public final class LocalAppStoreAddition: ServerAddition {
    /// The store served.
    public let store: AppStoreSimulator
    /// This server's part in selling while its store sells: the lease it holds (nil: none is needed) and the saver of
    /// its changes.
    private struct Sale: Sendable {
        let lease: SimulatorLeaseHolder?
        let saver: SimulatorSaver?
    }

    /// The sale, from the start or since this server took the store over; nil while another server sells (kept, its
    /// lease lost, when another one took it over from this one).
    private let sale: Locked<Sale?>
    /// Where a server that does not sell (or no longer does) reads the selling server's clock and waits to take over.
    private let followed: (clock: FollowedClock, storage: any ServerStorage, watch: Duration)?
    /// The server that sells, as this one last read the lease (nil: none does now), when it is not this one.
    private let seller: Locked<String?>
    private let logger: Logger
    /// Where this server listens, when configured: part of the lease's holder name.
    private let address: String?
    private let feed = Mutex<NotificationFeed?>(nil)
    /// The validation service the store's notifications are applied to, from ``attach(to:)``.
    private let service = Mutex<ValidationService?>(nil)
    private let rateLimit = InAppsRateLimit()
    /// The simulated app's keys.
    private let accessKeys: [AccessKey]
    private let webhooks: Webhooks?
    private let transferPolicy: TransferPolicy

    /// Serves `store`; with `storage`, its changes are saved there and a request that changed it is answered once the
    /// change is saved.
    public convenience init(
        store: AppStoreSimulator, storage: (any ServerStorage)? = nil, accessKeys: [AccessKey] = [],
        webhooks: Webhooks? = nil, transferPolicy: TransferPolicy = .refuse, logger: Logger
    ) {
        self.init(
            store: store, storage: storage, role: .success(nil), leaseWatch: .seconds(3), address: nil,
            accessKeys: accessKeys,
            webhooks: webhooks, transferPolicy: transferPolicy, logger: logger, wall: Date.init)
    }

    private init(
        store: AppStoreSimulator, storage: (any ServerStorage)?,
        role: Result<SimulatorLeaseHolder?, SimulatorLeaseHolder.HeldElsewhere>, leaseWatch: Duration, address: String?,
        accessKeys: [AccessKey], webhooks: Webhooks?, transferPolicy: TransferPolicy, logger: Logger,
        wall: @escaping @Sendable () -> Date
    ) {
        self.store = store
        self.address = address
        self.accessKeys = accessKeys
        self.webhooks = webhooks
        self.transferPolicy = transferPolicy
        self.logger = logger
        let own =
            HolderNote(store)
            ?? HolderNote(
                wallAnchor: wall(), simulatedAnchor: store.currentTime, speed: 1, paused: true,
                authority: store.pki.fingerprint)
        switch role {
        case .success(let lease):
            sale = Locked(
                Sale(
                    lease: lease,
                    saver: storage.map { SimulatorSaver(simulator: store, storage: $0, logger: logger, lease: lease) }))
            seller = Locked(nil)
            // A holder follows the lease too once it lost it.
            followed = lease == nil ? nil : storage.map { (FollowedClock(start: own, wall: wall), $0, leaseWatch) }
        case .failure(let elsewhere):
            sale = Locked(nil)
            seller = Locked(elsewhere.holder)
            followed = storage.map {
                (FollowedClock(start: HolderNote(elsewhere.note) ?? own, wall: wall), $0, leaseWatch)
            }
        }
    }

    /// Whether this server's store sells: it holds the lease (or needs none) and has not lost it.
    private var sells: Bool { sale.withLock { $0.map { $0.lease?.isLost != true } ?? false } }

    /// The server whose local App Store sells for this app on the shared database, when it is not this one (as this
    /// one last read the lease; "none" when its seller stopped): this one then verifies the store's documents, answers
    /// its routes with 503 and takes the store over when the seller gives it up or stops beating. Nil while this one
    /// sells.
    public var heldElsewhere: String? { sells ? nil : seller.withLock { $0 } ?? "none" }

    /// Makes the addition when `settings.simulator` is on: loads the catalog and the signing authority (by default the
    /// one in `simulator.pki`, or a new one), and continues the store the database holds, if any.
    ///
    /// One server of those sharing a database sells (``SimulatorLeaseHolder``): a server that finds another one's
    /// store alive (its beat moved while this one watched for `leaseWatch`) serves the app's validation only, until
    /// that server gives the store up or its beat stands still for `leaseWatch`; then it takes the store over.
    public static func maker(authority: SimulatorPKI? = nil, leaseWatch: Duration = .seconds(3))
        -> ServerAdditionMaker
    {
        let given = authority
        return { settings, storage, logger, clock in
            guard let simulated = settings.simulator else { return nil }
            let authority = try given ?? SimulatorPKI.loadOrCreate(folder: simulated.pkiFolder)
            let catalog =
                try simulated.catalogPath.map { path throws(CatalogError) in
                    try Catalog.load(contentsOfFile: path)
                } ?? Catalog.floristExample()
            // Taken before the saved store is read: a holder that stopped may have saved until then.
            // Where this server listens, for the lease's holder name (an operator finds the seller by it).
            let address = settings.server.port == 0 ? nil : "http://\(settings.server.host):\(settings.server.port)"
            let role = try await SimulatorLeaseHolder.take(
                bundleID: simulated.bundleID, address: address, storage: storage, watch: leaseWatch, logger: logger
            ).map { Optional($0) }
            // A start that fails after taking the lease gives it up: the next start need not wait for it to go still.
            do {
                if case .failure(let elsewhere) = role {
                    // Its documents are signed by the selling server's authority: without the same folder, this server
                    // would trust an authority of its own and refuse every one of them.
                    guard simulated.pkiFolder != nil || given != nil else {
                        throw SimulatorLeaseHolder.NoSharedAuthority(
                            bundleID: simulated.bundleID, holder: elsewhere.holder, other: false)
                    }
                    if let note = HolderNote(elsewhere.note), note.authority != authority.fingerprint {
                        throw SimulatorLeaseHolder.NoSharedAuthority(
                            bundleID: simulated.bundleID, holder: elsewhere.holder, other: true)
                    }
                    logger.notice(
                        "the local App Store sells on another server of this database: this one verifies its documents",
                        metadata: ["bundleId": "\(simulated.bundleID)", "holder": "\(elsewhere.holder)"])
                }
                var configuration = SimulatorConfiguration(bundleID: simulated.bundleID, start: clock())
                configuration.serverAPIKeys = simulated.serverAPIKeys
                configuration.serverAPIIssuerID = simulated.serverAPIIssuerID
                configuration.performanceTest.responseTimeThreshold = simulated.performanceTestThreshold
                // One clock move runs at most this many renewals, retries and expiries (a jump to 2099 with a few dozen
                // subscriptions is a few thousand); past it the move stops with an error.
                configuration.maximumEventsPerAdvance = 100_000
                // On a database that already holds this app's transactions (a restart), new ids continue past the stored
                // ones. A new store's UUIDs come from a seed of this moment; a saved store continues its own sequence
                // (its counter was saved with every change answered).
                if let largest = try await storage.largestTransactionID(bundleID: simulated.bundleID) {
                    configuration.firstTransactionID = max(configuration.firstTransactionID, largest + 1)
                }
                configuration.seed = UInt64(bitPattern: Int64(clock().timeIntervalSince1970 * 1_000_000)) | 1
                // A server keeps the notifications (for /simulator/notifications and the notification history), not every
                // event and signed artifact: those would grow with every renewal for as long as it runs. A store saved in
                // this database before continues where it stopped.
                let store: AppStoreSimulator
                if let saved = try await storage.simulatorState(bundleID: simulated.bundleID) {
                    store = try AppStoreSimulator(
                        restoring: saved, catalog: catalog, configuration: configuration, pki: authority,
                        clock: .running(wallClock: clock), keepsRecords: false, keepsNotifications: true)
                    if case .success = role {
                        logger.notice(
                            "the local App Store continues from the database",
                            metadata: [
                                "accounts": "\(store.accountIDs.count)",
                                "notifications": "\(store.notifications.count)",
                            ])
                    }
                } else {
                    store = try AppStoreSimulator(
                        catalog: catalog, configuration: configuration, pki: authority,
                        clock: .running(wallClock: clock), keepsRecords: false, keepsNotifications: true)
                }
                return LocalAppStoreAddition(
                    store: store, storage: storage, role: role, leaseWatch: leaseWatch, address: address,
                    accessKeys: simulated.accessKeys, webhooks: simulated.webhooks,
                    transferPolicy: simulated.transferPolicy, logger: logger, wall: clock)
            } catch {
                if case .success(let lease?) = role { await lease.release() }
                throw error
            }
        }
    }

    // MARK: - ServerAddition

    /// The simulated app, trusted with the simulator's roots.
    public var apps: [AppConfiguration] {
        var app = AppConfiguration(
            bundleID: store.configuration.bundleID, appAppleID: store.configuration.appAppleID,
            environments: [store.configuration.environment], trustStore: store.pki.trustStore, catalog: store.catalog)
        app.accessKeys = accessKeys
        app.webhooks = webhooks
        app.transferPolicy = transferPolicy
        return [app]
    }

    /// The store's clock: validation answers at the simulated moment (on a server that does not sell, the selling
    /// server's, as its lease carries it).
    public var clock: (@Sendable () -> Date)? {
        let store = self.store
        guard let followed = followed?.clock else { return { store.currentTime } }
        let sale = self.sale
        return { sale.withLock { $0.map { $0.lease?.isLost != true } ?? false } ? store.currentTime : followed.now }
    }

    /// The store's pages; a server that does not sell answers them with 503 (``LocalAppStoreElsewhereMiddleware``)
    /// until it takes the store over.
    public var pages: PageSet? { Self.pages }

    /// `localAppStore`: `sells` here, `sellsUnconfirmed` (this server holds the lease but the database has not
    /// confirmed it lately: it answers the store's routes with 503 meanwhile), `sellsElsewhere` (another server of
    /// the database does, or took it over), or `noneSells` (its seller stopped, as this server last read the lease; one
    /// that does not sell takes it over).
    public var health: (name: String, status: String)? {
        let held = sale.withLock { current in current.map { ($0.lease?.isLost != true, $0.lease?.isConfirmed ?? true) }
        }
        let status =
            if let (holds, confirmed) = held, holds {
                confirmed ? "sells" : "sellsUnconfirmed"
            } else if seller.withLock({ $0 }) != nil {
                "sellsElsewhere"
            } else {
                "noneSells"
            }
        return ("localAppStore", status)
    }

    static let pages = PageSet(
        folder: Bundle.module.url(forResource: "Pages", withExtension: nil),
        pages: [
            .init(path: "/store", label: "Store", file: "store.html", order: 10),
            .init(path: "/manager", label: "Manager", file: "manager.html", order: 20),
        ], feature: "simulator")

    public func add(to router: Router<ServerRequestContext>, configuration: ServerConfiguration, access: OperatorAccess)
    {
        if followed != nil {
            let (bundleID, sale, seller) = (store.configuration.bundleID, sale, seller)
            router.add(
                middleware: LocalAppStoreElsewhereMiddleware {
                    let state = sale.withLock { current in
                        current.map { (lost: $0.lease?.isLost == true, confirmed: $0.lease?.isConfirmed ?? true) }
                    }
                    if let state, !state.lost {
                        if state.confirmed { return nil }
                        return (
                            "localAppStoreUnconfirmed",
                            "this server could not confirm its lease on the local App Store of \(bundleID) with the "
                                + "database lately: it answers the store's routes again once it can (another server "
                                + "takes the store over if it cannot for a few seconds)"
                        )
                    }
                    // The seller is not named: unauthenticated callers read this (the log, the banner and /health
                    // tell an operator).
                    let reason =
                        if state?.lost == true {
                            "another server of this database took over the local App Store of \(bundleID) (this one "
                                + "stopped beating for a while): use that one"
                        } else if seller.withLock({ $0 }) == nil {
                            "no server of this database sells the local App Store of \(bundleID) at this moment (its "
                                + "seller stopped): a server that does not sell takes it over within seconds"
                        } else {
                            "the local App Store of \(bundleID) sells on another server of this database: use that "
                                + "one for /simulator, /inApps, /store and /manager (its log and banner name it)"
                        }
                    return ("localAppStoreElsewhere", reason)
                })
        }
        if followed != nil || sale.withLock({ $0?.saver }) != nil {
            let sale = self.sale
            router.add(
                middleware: SimulatorSavedMiddleware {
                    sale.withLock { current in current.flatMap { sale in sale.saver.map { ($0, sale.lease) } } }
                })
        }
        SimulatorRoutes(store: store, configuration: configuration, access: access, inAppsRateLimit: rateLimit)
            .add(to: router)
        InAppsRoutes(store: store, clock: Date.init, rateLimit: rateLimit).add(to: router)
    }

    /// Starts applying the store's notifications to the service (once this server sells, if it does not yet).
    public func attach(to service: ValidationService) async {
        self.service.withLock { $0 = service }
        if sells { startNotifications() }
    }

    /// Applies the store's notifications to the service from now on; those a stopped server had not applied yet (no
    /// send attempt) are sent again, as Apple retries.
    private func startNotifications() {
        guard let service = service.withLock({ $0 }) else { return }
        let (notifications, new) = feed.withLock { feed in
            if let feed { return (feed, false) }
            let sale = self.sale
            // A store that lost its lease applies nothing more (what it made after its last save is not the store's),
            // one whose lease is not confirmed lately waits (another server may be taking it over).
            // A notification goes once the change that made it is in the database: a take-over continues from
            // there, so validation never holds what the store does not (nor the store's next ids and UUIDs twice).
            let made = NotificationFeed(service: service, simulator: store, logger: logger) {
                guard let current = sale.withLock({ $0 }) else { return .closed }
                if let lease = current.lease {
                    if lease.isLost { return .closed }
                    if !lease.isConfirmed { return .held }
                }
                if let saver = current.saver, !(await saver.saved()) {
                    return current.lease?.isLost == true ? .closed : .held
                }
                return .open
            }
            feed = made
            return (made, true)
        }
        for notification in store.notifications
        where NotificationFeed.sendsAgain(store.sendAttempts(notificationUUID: notification.uuid)) {
            notifications.send(notification)
        }
        if new { store.addNotificationSink { notifications.send($0) } }
    }

    /// While this server sells, a running clock's renewals and expiries happen off the request path: the store is
    /// caught up every second, so the validation routes (which read its time without waiting) see them soon after they
    /// fall due, even when nobody drives the store. The holder of the lease beats it meanwhile, on a loop of its own (a
    /// long catch-up must not stall the beat). A server that does not sell (or no longer does) follows the selling
    /// one's clock, says when the seller changes, and takes the store over when the seller gives it up or stops beating.
    public func run() async {
        while !Task.isCancelled {
            if let current = sale.withLock({ $0 }), current.lease?.isLost != true { await sell(current.lease) }
            guard !Task.isCancelled, followed != nil else { return }
            await follow()
        }
    }

    /// Catches the store up and beats its lease until the lease is lost or the server stops.
    private func sell(_ lease: SimulatorLeaseHolder?) async {
        let store = self.store
        await withDiscardingTaskGroup { group in
            if let lease {
                group.addTask {
                    while !Task.isCancelled, !lease.isLost {
                        await lease.beat(note: HolderNote(store)?.text ?? "")
                        try? await Task.sleep(for: SimulatorLeaseHolder.beatInterval)
                    }
                }
            }
            while !Task.isCancelled, sells {
                try? await Task.sleep(for: .seconds(1))
                // Not while the lease is unconfirmed: another server may be about to continue the store.
                if sells, lease?.isConfirmed ?? true { _ = try? store.now }
            }
        }
    }

    /// Reads the lease twice a second: the seller's clock (signed by this server's authority), who sells, and
    /// whether they still beat. Returns when the server stops, or once this server took the store over: the lease was
    /// given up, or its beat stood still for the lease's watch.
    private func follow() async {
        guard let followed else { return }
        let bundleID = store.configuration.bundleID
        let ownAuthority = store.pki.fingerprint
        var last: (holder: String?, beat: Int64, since: ContinuousClock.Instant, stillSaid: Bool, otherSaid: Bool)
        last = (seller.withLock { $0 }, -1, .now, false, false)
        // Whether the last read failed: the seller could not beat meanwhile either (a database outage), so its beat
        // is watched afresh from the first read that succeeds.
        var unreachable = false
        // When this server may try to take the store over again, after a try that failed.
        var retryAt = ContinuousClock.now
        while !Task.isCancelled {
            let lease: SimulatorLease??
            do { lease = .some(try await followed.storage.simulatorLease(bundleID: bundleID)) } catch { lease = .none }
            if lease == nil { unreachable = true }
            if case .some(let read) = lease {
                if unreachable {
                    unreachable = false
                    last.since = .now
                }
                if read?.holder != last.holder {
                    if let holder = read?.holder {
                        logger.notice(
                            "the local App Store now sells on another server", metadata: ["holder": "\(holder)"])
                    }
                    last = (read?.holder, read?.beat ?? -1, .now, false, false)
                } else if let beat = read?.beat, beat != last.beat {
                    last.beat = beat
                    last.since = .now
                    last.stillSaid = false
                } else if !last.stillSaid, read != nil, ContinuousClock.now - last.since > followed.watch {
                    last.stillSaid = true
                    logger.warning(
                        "the server that sells the local App Store stopped beating: taking it over",
                        metadata: ["holder": "\(read?.holder ?? "")"])
                }
                seller.withLock { $0 = last.stillSaid ? nil : read?.holder }
                if let note = read.flatMap({ HolderNote($0.note) }) {
                    if note.authority == ownAuthority {
                        followed.clock.follow(note)
                    } else if !last.otherSaid {
                        last.otherSaid = true
                        logger.error(
                            """
                            the server that sells the local App Store signs with another authority: this one refuses \
                            its documents and will not take its store over (give every server the same --pki DIR)
                            """)
                    }
                }
                // Given up (no row) or gone still: this server takes the store over, unless the seller signs with
                // another authority (this one could verify none of the store's documents).
                if read == nil || last.stillSaid, !last.otherSaid, ContinuousClock.now >= retryAt {
                    if await takeOver(from: read, storage: followed.storage, watch: followed.watch) { return }
                    // Lost the race, or the store could not be read: not again for a while (the log said why).
                    retryAt = ContinuousClock.now + followed.watch
                }
            }
            try? await Task.sleep(for: SimulatorLeaseHolder.beatInterval)
        }
    }

    /// Takes the lease from `seen` (nil: nobody holds it) and continues the store as the database holds it, as a
    /// restart would (beating the lease meanwhile, so a long read does not look like a stall). False when another
    /// server was quicker, the holder beat again, or the store could not be read (the lease is given up again then).
    private func takeOver(from seen: SimulatorLease?, storage: any ServerStorage, watch: Duration) async -> Bool {
        let bundleID = store.configuration.bundleID
        guard
            let lease = try? await SimulatorLeaseHolder.takeOver(
                bundleID: bundleID, address: address, from: seen, storage: storage, watch: watch, logger: logger)
        else { return false }
        let store = self.store
        let reloaded: Result<Void, any Error> = await withTaskGroup(of: Result<Void, any Error>?.self) { group in
            group.addTask {
                while !Task.isCancelled {
                    await lease.beat(note: "")
                    try? await Task.sleep(for: SimulatorLeaseHolder.beatInterval)
                }
                return nil
            }
            group.addTask {
                // The store as the last seller saved it (nothing saved: a new one); ids past any transaction it
                // wrote after its last save.
                do {
                    try store.reload(
                        restoring: try await storage.simulatorState(bundleID: bundleID),
                        transactionsAfter: try await storage.largestTransactionID(bundleID: bundleID))
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }
            var outcome: Result<Void, any Error> = .success(())
            for await result in group {
                if let result {
                    outcome = result
                    break
                }
            }
            group.cancelAll()
            return outcome
        }
        // The lease may have gone meanwhile (a beat found it another's).
        guard !lease.isLost else { return false }
        if case .failure(let error) = reloaded {
            logger.error(
                "the local App Store could not be taken over: its saved state could not be read",
                metadata: ["bundleId": "\(bundleID)", "reason": "\(error)"])
            await lease.release()
            return false
        }
        let previous = sale.withLock { $0 }
        await previous?.saver?.finish()
        let saver = SimulatorSaver(simulator: store, storage: storage, logger: logger, lease: lease)
        sale.withLock { $0 = Sale(lease: lease, saver: saver) }
        seller.withLock { $0 = nil }
        startNotifications()
        logger.notice(
            "took over the local App Store: it sells on this server now, continuing from the database",
            metadata: [
                "bundleId": "\(bundleID)", "from": "\(seen?.holder ?? "a server that gave it up")",
                "accounts": "\(store.accountIDs.count)",
            ])
        return true
    }

    /// Applies the notifications still queued, then saves the store's last changes.
    public func finish() async {
        let feed = self.feed.withLock { $0 }
        feed?.finish()
        await feed?.drained()
        let current = sale.withLock { $0 }
        await current?.saver?.finish()
        await current?.lease?.release()
    }
}

// MARK: - The server with the local App Store

extension ServerRuntime {
    /// Starts the server with the local App Store beside it when `settings.simulator` is on.
    /// - Parameters:
    ///   - settings: what to serve, where, from which database.
    ///   - logger: where the server logs.
    ///   - clock: the wall clock (the store starts at its current moment).
    ///   - authority: the store's signing authority; by default the one in `simulator.pki` (or a new one).
    public static func start(
        _ settings: ServerSettings, logger: Logger, clock: @escaping @Sendable () -> Date = { Date() },
        authority: SimulatorPKI?
    ) async throws -> ServerRuntime {
        try await start(
            settings, logger: logger, clock: clock, additions: [LocalAppStoreAddition.maker(authority: authority)])
    }

    /// The local App Store, when it runs and sells here.
    public var simulator: AppStoreSimulator? {
        additions.lazy.compactMap { $0 as? LocalAppStoreAddition }.first { $0.heldElsewhere == nil }?.store
    }

    /// The server whose local App Store sells for the simulated app, when it is another one on this database.
    public var simulatorHeldElsewhere: String? {
        additions.lazy.compactMap { ($0 as? LocalAppStoreAddition)?.heldElsewhere }.first
    }

    /// The local App Store whose control plane someone can use: nil when the operator routes refuse everyone.
    public var simulatorServed: AppStoreSimulator? {
        settings.operatorAccess == .refused ? nil : simulator
    }
}

/// The application with `simulator` served beside the validation server (not saved anywhere): what tests build.
public func buildApplication(
    service: ValidationService, configuration: ServerConfiguration, simulator: AppStoreSimulator?,
    operatorAccess: OperatorAccess = .refused, logger: Logger = Logger(label: "iapkit.server"),
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
) -> some ApplicationProtocol {
    buildApplication(
        service: service, configuration: configuration,
        additions: simulator.map { [LocalAppStoreAddition(store: $0, logger: logger)] } ?? [],
        operatorAccess: operatorAccess, logger: logger, onServerRunning: onServerRunning)
}

/// The router with `simulator` served beside the validation server (not saved anywhere): what tests build.
public func buildRouter(
    service: ValidationService, configuration: ServerConfiguration, simulator: AppStoreSimulator?,
    operatorAccess: OperatorAccess = .refused
) -> Router<ServerRequestContext> {
    buildRouter(
        service: service, configuration: configuration,
        additions: simulator.map { [LocalAppStoreAddition(store: $0, logger: Logger(label: "iapkit.server"))] } ?? [],
        operatorAccess: operatorAccess)
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
