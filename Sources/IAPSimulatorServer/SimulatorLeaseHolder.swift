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
        let holder =
            "\(ProcessInfo.processInfo.hostName) pid \(ProcessInfo.processInfo.processIdentifier) "
            + UUID().uuidString.prefix(8).lowercased()
        var lease = try await storage.takeSimulatorLease(bundleID: bundleID, holder: holder, replacing: nil)
        if lease.holder != holder {
            logger.notice(
                "another server holds the local App Store on this database; watching whether it is alive",
                metadata: ["bundleId": "\(bundleID)", "holder": "\(lease.holder)", "watch": "\(watch)"])
            try await Task.sleep(for: watch)
            lease = try await storage.takeSimulatorLease(bundleID: bundleID, holder: holder, replacing: lease)
        }
        guard lease.holder == holder else { return .failure(HeldElsewhere(holder: lease.holder)) }
        return .success(SimulatorLeaseHolder(bundleID: bundleID, holder: holder, storage: storage, logger: logger))
    }

    /// The server that keeps the local App Store when it is not this one.
    struct HeldElsewhere: Error {
        let holder: String
    }

    /// Whether another server took the lease over: this one's store must not sell or save any more.
    var isLost: Bool { lost.withLock { $0 } }

    /// Says this server is alive; notes (and logs, once) a lease taken over. A database that does not answer
    /// decides nothing: the beat is tried again.
    func beat() async {
        guard !isLost else { return }
        do {
            if try await storage.beatSimulatorLease(bundleID: bundleID, holder: holder) { return }
        } catch {
            return
        }
        lost.withLock { $0 = true }
        logger.error(
            "another server took over the local App Store (this one stopped beating for a while): this one stops selling",
            metadata: ["bundleId": "\(bundleID)"])
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

/// Answers the local App Store's routes with 503 `localAppStoreElsewhere` while `refusal` says why (another server
/// sells, or took over): the validation routes are untouched.
struct LocalAppStoreElsewhereMiddleware<Context: RequestContext>: RouterMiddleware {
    let refusal: @Sendable () -> String?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let path = request.uri.path
        if ["/simulator", "/inApps", "/store", "/manager"].contains(where: { path == $0 || path.hasPrefix($0 + "/") }),
            let reason = refusal()
        {
            throw APIError(503, "localAppStoreElsewhere", reason)
        }
        return try await next(request, context)
    }
}
