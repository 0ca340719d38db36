import Foundation
import Hummingbird
import IAPServer
import IAPSimulator
import Logging
import Synchronization

/// Makes one server of those sharing a database the one whose local App Store sells for an app: two would each
/// continue the same saved store, renew the same subscriptions and count the same transaction ids, and their saves
/// would overwrite each other. The lease is taken at start (at once when free; from a holder whose beat stood still
/// while this server watched, one that stopped without giving it up), beaten while the server runs and given up when
/// it stops. A holder that finds its lease taken (it stalled past a watcher's patience) stops selling.
final class SimulatorLeaseHolder: Sendable {
    /// How often the holder says it is alive.
    static let beatInterval: Duration = .milliseconds(500)

    let bundleID: String
    /// This server, as the lease names it: host, process id and a random part.
    let holder: String
    private let storage: any ServerStorage
    private let logger: Logger
    private let lost = Mutex(false)
    /// When the database last confirmed this holder's lease (taken, or a beat that found it ours); nil until the
    /// first beat is tried (a server beats from the moment it runs; a store served without its run loop, as tests
    /// build one, holds the lease as taken).
    private let confirmed = Mutex<ContinuousClock.Instant?>(nil)
    private let taken = ContinuousClock.now
    /// How long the lease counts as held without a confirmation: half the watch after which another server takes it
    /// over from a still beat, so this server stops before another may start.
    private let patience: Duration

    private init(bundleID: String, holder: String, storage: any ServerStorage, logger: Logger, watch: Duration) {
        self.bundleID = bundleID
        self.holder = holder
        self.storage = storage
        self.logger = logger
        patience = watch / 2
    }

    /// Takes the lease on `bundleID`'s local App Store, or answers who keeps it: free, it is taken at once; held, the
    /// holder's beat is watched for `watch` (several beats) and the lease taken only if it stood still.
    static func take(
        bundleID: String, address: String?, storage: any ServerStorage, watch: Duration, logger: Logger
    ) async throws -> Result<SimulatorLeaseHolder, HeldElsewhere> {
        let holder = newHolderName(address: address)
        var lease = try await storage.takeSimulatorLease(bundleID: bundleID, holder: holder, replacing: nil)
        if lease.holder != holder {
            let seen = lease
            logger.notice(
                "another server holds the local App Store on this database; watching whether it is alive",
                metadata: ["bundleId": "\(bundleID)", "holder": "\(seen.holder)", "watch": "\(watch)"])
            try await Task.sleep(for: watch)
            lease = try await storage.takeSimulatorLease(bundleID: bundleID, holder: holder, replacing: seen)
            if lease.holder == holder {
                logger.notice(
                    "took over the local App Store from a server that stopped beating",
                    metadata: ["bundleId": "\(bundleID)", "from": "\(seen.holder)"])
            }
        }
        guard lease.holder == holder else { return .failure(HeldElsewhere(holder: lease.holder, note: lease.note)) }
        return .success(
            SimulatorLeaseHolder(bundleID: bundleID, holder: holder, storage: storage, logger: logger, watch: watch))
    }

    /// Takes the lease while the server runs, from `seen` (a holder whose beat stood still; nil: nobody holds it):
    /// nil when another server was quicker or the holder beat again.
    static func takeOver(
        bundleID: String, address: String?, from seen: SimulatorLease?, storage: any ServerStorage, watch: Duration,
        logger: Logger
    ) async throws -> SimulatorLeaseHolder? {
        let holder = newHolderName(address: address)
        let lease = try await storage.takeSimulatorLease(bundleID: bundleID, holder: holder, replacing: seen)
        guard lease.holder == holder else { return nil }
        return SimulatorLeaseHolder(bundleID: bundleID, holder: holder, storage: storage, logger: logger, watch: watch)
    }

    /// A name for a holder on this server: host, process id, the address it listens on (when configured; port 0 is
    /// chosen at binding, after the lease) and a random part (a new one for each lease taken).
    private static func newHolderName(address: String?) -> String {
        var name = [CChar](repeating: 0, count: 256)
        let host =
            gethostname(&name, name.count - 1) == 0
            ? name.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } : "host"
        let pid = ProcessInfo.processInfo.processIdentifier
        return "\(host) pid \(pid)\(address.map { " \($0)" } ?? "") \(UUID().uuidString.prefix(8).lowercased())"
    }

    /// The server that keeps the local App Store when it is not this one, and what its last beat said.
    struct HeldElsewhere: Error {
        let holder: String
        let note: String
    }

    /// A server that does not sell, started without the selling server's signing authority (no `--pki`, or another
    /// one): it could verify none of the store's documents.
    struct NoSharedAuthority: Error, CustomStringConvertible {
        let bundleID: String
        let holder: String
        let other: Bool

        var description: String {
            "the local App Store of \(bundleID) sells on another server of this database (\(holder)), and this one "
                + (other ? "signs with another authority" : "was given no --pki folder")
                + ", so it could verify none of its documents: start every server with the same --pki DIR"
        }
    }

    /// Whether another server took the lease over: this one's store must not sell or save any more.
    var isLost: Bool { lost.withLock { $0 } }

    /// Notes that the lease is another server's now (a beat or a fenced save found so), logging it once.
    func markLost() {
        let first = lost.withLock { lost in
            defer { lost = true }
            return !lost
        }
        guard first else { return }
        logger.error(
            "another server took over the local App Store (this one stopped beating for a while): this one stops selling",
            metadata: ["bundleId": "\(bundleID)"])
    }

    /// Whether the database confirmed the lease lately (within half the watch): a holder that cannot reach it must
    /// not go on selling, since another server takes the lease over once its beat stood still for the watch.
    var isConfirmed: Bool { !isLost && confirmed.withLock { $0 }.map { ContinuousClock.now - $0 < patience } ?? true }

    /// Says this server is alive, with a note for the servers that do not sell. A lease whose row is gone or names
    /// another holder is lost (another server may have taken it and given it up while this one stalled: what it sold
    /// meanwhile is in the database, not in this one's memory). A database that does not answer decides nothing: the
    /// next beat tries, and meanwhile the lease counts as held only for ``isConfirmed``'s patience.
    func beat(note: String) async {
        guard !isLost else { return }
        let started = ContinuousClock.now
        confirmed.withLock { $0 = $0 ?? taken }
        do {
            if try await storage.beatSimulatorLease(bundleID: bundleID, holder: holder, note: note) {
                confirmed.withLock { $0 = max($0 ?? started, started) }
                return
            }
        } catch {
            return
        }
        markLost()
    }

    /// Gives the lease up, unless it was lost.
    func release() async {
        guard !isLost else { return }
        do {
            try await storage.releaseSimulatorLease(bundleID: bundleID, holder: holder)
            logger.info(
                "gave up the local App Store's lease: a server that does not sell takes it over",
                metadata: ["bundleId": "\(bundleID)"])
        } catch {
            logger.warning(
                "the local App Store's lease could not be given up: the next server waits for it to go still",
                metadata: ["reason": "\(error.reason)"])
        }
    }
}

/// What the selling server says with each beat, for the servers that do not sell: its clock's dial (the simulated
/// moment at a wall-clock anchor, the speed, whether paused) and its authority's fingerprint, as
/// `"WALL_MS SIMULATED_MS SPEED PAUSED FINGERPRINT"`.
struct HolderNote: Equatable {
    var wallAnchor: Date
    var simulatedAnchor: Date
    var speed: Double
    var paused: Bool
    var authority: String

    init(wallAnchor: Date, simulatedAnchor: Date, speed: Double, paused: Bool, authority: String) {
        self.wallAnchor = wallAnchor
        self.simulatedAnchor = simulatedAnchor
        self.speed = speed
        self.paused = paused
        self.authority = authority
    }

    /// The note of `store`'s clock and authority; nil for a frozen clock.
    init?(_ store: AppStoreSimulator) {
        guard let dial = store.clockDial else { return nil }
        self.init(
            wallAnchor: dial.wallAnchor, simulatedAnchor: dial.simulatedAnchor, speed: dial.speed, paused: dial.paused,
            authority: store.pki.fingerprint)
    }

    init?(_ text: String) {
        let parts = text.split(separator: " ")
        guard parts.count == 5, let wall = Int64(parts[0]), let simulated = Int64(parts[1]),
            let speed = Double(parts[2]), speed.isFinite, speed > 0, parts[3] == "0" || parts[3] == "1"
        else { return nil }
        self.init(
            wallAnchor: Date(timeIntervalSince1970: Double(wall) / 1000),
            simulatedAnchor: Date(timeIntervalSince1970: Double(simulated) / 1000), speed: speed,
            paused: parts[3] == "1", authority: String(parts[4]))
    }

    var text: String {
        func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
        return "\(milliseconds(wallAnchor)) \(milliseconds(simulatedAnchor)) \(speed) \(paused ? 1 : 0) \(authority)"
    }

    /// The simulated moment at `wall` by this dial.
    func simulated(at wall: Date) -> Date {
        paused ? simulatedAnchor : simulatedAnchor.addingTimeInterval(wall.timeIntervalSince(wallAnchor) * speed)
    }
}

/// The clock of a server whose local App Store does not sell: the selling server's dial, as its beats carry it, read
/// on this server's wall clock (the same moment on one machine; apart, within their clocks' difference). It never
/// goes back, also when a new seller continues from a slightly older save, and stops at the simulator's latest date
/// as the store's own clock does.
final class FollowedClock: Sendable {
    private struct State {
        var dial: HolderNote
        var shown: Date
    }

    private let state: Mutex<State>
    private let wall: @Sendable () -> Date

    init(start: HolderNote, wall: @escaping @Sendable () -> Date) {
        self.wall = wall
        state = Mutex(State(dial: start, shown: .distantPast))
    }

    func follow(_ note: HolderNote) { state.withLock { $0.dial = note } }

    var now: Date {
        let wall = self.wall()
        return state.withLock { state in
            // Where the selling store's own clock stops too.
            state.shown = min(max(state.shown, state.dial.simulated(at: wall)), SimulatorConfiguration.latestDate)
            return state.shown
        }
    }
}

/// Answers the local App Store's routes with 503 while `refusal` says why, with its code: `localAppStoreElsewhere`
/// (another server sells, took over, or none does now) or `localAppStoreUnconfirmed` (this server holds the lease but
/// the database has not confirmed it lately). The validation routes are untouched.
struct LocalAppStoreElsewhereMiddleware<Context: RequestContext>: RouterMiddleware {
    let refusal: @Sendable () -> (code: String, reason: String)?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        if LocalAppStorePaths.served.contains(LocalAppStorePaths.firstSegment(of: request.uri.path)),
            let (code, reason) = refusal()
        {
            throw APIError(503, code, reason)
        }
        return try await next(request, context)
    }
}

/// The paths the local App Store serves, told apart by their first segment.
enum LocalAppStorePaths {
    /// Its control plane, its App Store Server API and its pages.
    static let served: Set<Substring> = ["simulator", "inApps", "store", "manager"]

    /// A path's first segment as the router matches it (empty segments skipped: `//simulator` is routed too), without
    /// allocating: the middlewares that ask run on every request, the validation routes' included.
    static func firstSegment(of path: String) -> Substring {
        path.drop { $0 == "/" }.prefix { $0 != "/" }
    }
}
