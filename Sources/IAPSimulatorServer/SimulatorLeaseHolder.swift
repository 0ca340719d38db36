import Foundation
import Hummingbird
import IAPServer
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

    private init(bundleID: String, holder: String, storage: any ServerStorage, logger: Logger) {
        self.bundleID = bundleID
        self.holder = holder
        self.storage = storage
        self.logger = logger
    }

    /// Takes the lease on `bundleID`'s local App Store, or answers who keeps it: free, it is taken at once; held, the
    /// holder's beat is watched for `watch` (several beats) and the lease taken only if it stood still.
    static func take(
        bundleID: String, storage: any ServerStorage, watch: Duration, logger: Logger
    ) async throws -> Result<SimulatorLeaseHolder, HeldElsewhere> {
        var name = [CChar](repeating: 0, count: 256)
        let host =
            gethostname(&name, name.count - 1) == 0
            ? name.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } : "host"
        let holder =
            "\(host) pid \(ProcessInfo.processInfo.processIdentifier) \(UUID().uuidString.prefix(8).lowercased())"
        var lease = try await storage.takeSimulatorLease(bundleID: bundleID, holder: holder, replacing: nil)
        if lease.holder != holder {
            logger.notice(
                "another server holds the local App Store on this database; watching whether it is alive",
                metadata: ["bundleId": "\(bundleID)", "holder": "\(lease.holder)", "watch": "\(watch)"])
            try await Task.sleep(for: watch)
            lease = try await storage.takeSimulatorLease(bundleID: bundleID, holder: holder, replacing: lease)
        }
        guard lease.holder == holder else { return .failure(HeldElsewhere(holder: lease.holder, clock: lease.clock)) }
        return .success(SimulatorLeaseHolder(bundleID: bundleID, holder: holder, storage: storage, logger: logger))
    }

    /// The server that keeps the local App Store when it is not this one, and its clock as of its last beat.
    struct HeldElsewhere: Error {
        let holder: String
        let clock: String
    }

    /// A server that does not sell, started without the selling server's signing authority: it could verify none of
    /// the store's documents.
    struct NoSharedAuthority: Error, CustomStringConvertible {
        let bundleID: String
        let holder: String

        var description: String {
            "the local App Store of \(bundleID) sells on another server of this database (\(holder)), and this one "
                + "has no signing authority of its own to share with it: start every server with the same --pki DIR "
                + "(or this one with --no-simulator)"
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

    /// Says this server is alive, with the store's clock for the servers that do not sell; a lease nobody holds any
    /// more (its row removed) is taken again. A database that does not answer decides nothing: the next beat tries.
    func beat(clock: String) async {
        guard !isLost else { return }
        do {
            if try await storage.beatSimulatorLease(bundleID: bundleID, holder: holder, clock: clock) { return }
            if try await storage.takeSimulatorLease(bundleID: bundleID, holder: holder, replacing: nil).holder
                == holder
            {
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
        } catch {
            logger.warning(
                "the local App Store's lease could not be given up: the next server waits for it to go still",
                metadata: ["reason": "\(error.reason)"])
        }
    }
}

/// The local App Store's clock as the lease carries it from the server that sells to those that do not: the simulated
/// moment in milliseconds, the speed and whether it is paused, as `"MS SPEED PAUSED"`.
struct LeasedClock: Equatable {
    var moment: Date
    var speed: Double
    var paused: Bool

    init(moment: Date, speed: Double, paused: Bool) {
        self.moment = moment
        self.speed = speed
        self.paused = paused
    }

    init?(_ text: String) {
        let parts = text.split(separator: " ")
        guard parts.count == 3, let milliseconds = Int64(parts[0]), let speed = Double(parts[1]), speed.isFinite,
            speed > 0, parts[2] == "0" || parts[2] == "1"
        else { return nil }
        self.init(
            moment: Date(timeIntervalSince1970: Double(milliseconds) / 1000), speed: speed, paused: parts[2] == "1")
    }

    var text: String {
        "\(Int64((moment.timeIntervalSince1970 * 1000).rounded())) \(speed) \(paused ? 1 : 0)"
    }
}

/// The clock of a server whose local App Store does not sell: the selling server's, as its last beat carried it, run
/// on from when this server read it (so the servers answer at the same simulated moment, within a beat).
final class FollowedClock: Sendable {
    private struct Anchor {
        var clock: LeasedClock
        var readAt: Date
    }

    private let anchor: Mutex<Anchor>
    private let wall: @Sendable () -> Date

    init(start: LeasedClock, wall: @escaping @Sendable () -> Date) {
        self.wall = wall
        anchor = Mutex(Anchor(clock: start, readAt: wall()))
    }

    func follow(_ clock: LeasedClock) {
        let now = wall()
        anchor.withLock { $0 = Anchor(clock: clock, readAt: now) }
    }

    var now: Date {
        let wall = self.wall()
        return anchor.withLock { anchor in
            anchor.clock.paused
                ? anchor.clock.moment
                : anchor.clock.moment.addingTimeInterval(
                    max(0, wall.timeIntervalSince(anchor.readAt)) * anchor.clock.speed)
        }
    }
}

/// Answers the local App Store's routes with 503 `localAppStoreElsewhere` while `refusal` says why (another server
/// sells, or took over): the validation routes are untouched.
struct LocalAppStoreElsewhereMiddleware<Context: RequestContext>: RouterMiddleware {
    let refusal: @Sendable () -> String?

    /// What the local App Store serves: its control plane, its App Store Server API and its pages.
    static var segments: Set<Substring> { ["simulator", "inApps", "store", "manager"] }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        // By the path's first segment, as the router matches it (empty segments skipped: `//simulator` is routed too).
        let first = request.uri.path.split(separator: "/").first
        if let first, Self.segments.contains(first), let reason = refusal() {
            throw APIError(503, "localAppStoreElsewhere", reason)
        }
        return try await next(request, context)
    }
}
