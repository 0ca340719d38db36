public import Hummingbird
public import IAPSimulator
public import Logging
public import NIOCore

/// The server as one Hummingbird application: routes, errors as JSON, the configured address. Tests call this too.
///
/// - Parameters:
///   - simulator: the local App Store whose control plane is served under `/simulator`, if any.
///   - adminToken: when given, `/simulator` requires it (`Authorization: Bearer`); without it `/simulator` is open,
///     so pass a simulator without a token only to a server that listens on loopback.
public func buildApplication(
    service: ValidationService, configuration: ServerConfiguration, simulator: AppStoreSimulator? = nil,
    adminToken: String? = nil, logger: Logger = Logger(label: "iapkit.server"),
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
) -> some ApplicationProtocol {
    let router = Router(context: ServerRequestContext.self)
    router.add(middleware: ErrorMiddleware())
    ServerRoutes(service: service, configuration: configuration).add(to: router)
    if let simulator {
        SimulatorRoutes(store: simulator, configuration: configuration, adminToken: adminToken).add(to: router)
    }
    return Application(
        router: router,
        configuration: ApplicationConfiguration(
            address: .hostname(configuration.host, port: configuration.port), serverName: "iapkit"),
        onServerRunning: onServerRunning,
        logger: logger)
}
