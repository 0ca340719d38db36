public import Foundation
public import Hummingbird
public import Logging

/// Something served beside the validation server from a module of its own: routes and pages, apps it adds to the
/// service, the service's clock, and work that lasts as long as the server.
///
/// The local App Store's HTTP face (IAPSimulatorServer) is one; `iapkit serve` adds it when the simulator is on. A
/// deployment that links only this module serves validation and nothing else.
public protocol ServerAddition: Sendable {
    /// Apps served besides the configured ones (the simulated app, trusted with the simulator's roots).
    var apps: [AppConfiguration] { get }
    /// The moment the service answers at, when the addition keeps its own time; nil for the wall clock.
    var clock: (@Sendable () -> Date)? { get }
    /// Pages added to the navigation, with the files they load.
    var pages: PageSet? { get }
    /// What `GET /health` says of the addition now, under `additions` (the local App Store: whether it sells here):
    /// its name and a word; nil for nothing.
    var health: (name: String, status: String)? { get }
    /// Adds the addition's routes and middleware; `access` says who may use operator routes.
    func add(to router: Router<ServerRequestContext>, configuration: ServerConfiguration, access: OperatorAccess)
    /// Called once the service exists, before the first request is served.
    func attach(to service: ValidationService) async
    /// Runs while the server serves; cancelled when it stops.
    func run() async
    /// Called after the last request: finishes what is in flight.
    func finish() async
}

extension ServerAddition {
    public var clock: (@Sendable () -> Date)? { nil }
    public var pages: PageSet? { nil }
    public var health: (name: String, status: String)? { nil }
    public func attach(to service: ValidationService) async {}
    public func run() async {}
    public func finish() async {}
}

/// Makes an addition once the storage is open (an addition may continue from what the database holds), given the
/// settings, the storage, the logger and the wall clock. Nil when the settings leave it off.
public typealias ServerAdditionMaker =
    @Sendable (ServerSettings, any ServerStorage, Logger, @escaping @Sendable () -> Date) async throws -> (
        any ServerAddition
    )?
