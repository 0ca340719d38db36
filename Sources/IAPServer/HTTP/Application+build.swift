import Foundation
public import Hummingbird
public import IAPSimulator
public import Logging
public import NIOCore

/// The server as one Hummingbird application: routes, errors as JSON, the configured address. Tests call this too.
///
/// - Parameters:
///   - service: the validation service the routes call.
///   - configuration: the address, body limit and API keys.
///   - simulator: the local App Store whose control plane is served under `/simulator`, if any.
///   - adminToken: when given, `/simulator` requires it (`Authorization: Bearer`); without it `/simulator` is open,
///     so pass a simulator without a token only to a server that listens on loopback.
///   - logger: the application's logger.
///   - onServerRunning: called once the socket listens (the channel tells the port).
public func buildApplication(
    service: ValidationService, configuration: ServerConfiguration, simulator: AppStoreSimulator? = nil,
    adminToken: String? = nil, logger: Logger = Logger(label: "iapkit.server"),
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
) -> some ApplicationProtocol {
    Application(
        router: buildRouter(
            service: service, configuration: configuration, simulator: simulator, adminToken: adminToken),
        configuration: ApplicationConfiguration(
            address: .hostname(configuration.host, port: configuration.port), serverName: "iapkit"),
        onServerRunning: onServerRunning,
        logger: logger)
}

/// Every route of the server with its middleware (metrics, debug request logs, errors as JSON).
///
/// - Parameters:
///   - service: the validation service the routes call.
///   - configuration: the body limit and API keys.
///   - simulator: the local App Store served under `/simulator`, if any.
///   - adminToken: the token `/simulator` then requires, if any.
public func buildRouter(
    service: ValidationService, configuration: ServerConfiguration, simulator: AppStoreSimulator? = nil,
    adminToken: String? = nil
) -> Router<ServerRequestContext> {
    let router = Router(context: ServerRequestContext.self)
    _ = ServerMetrics.registry
    router.add(middleware: MetricsMiddleware())
    router.add(middleware: LogRequestsMiddleware(.debug))
    router.add(middleware: ErrorMiddleware())
    router.get("/metrics") { _, _ in
        Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: ServerMetrics.text())))
    }
    router.get("/openapi.yaml") { _, _ in
        Response(
            status: .ok, headers: [.contentType: "application/yaml"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: OpenAPIDocument.yaml)))
    }
    ServerRoutes(service: service, configuration: configuration).add(to: router)
    // /console shows stored customers: served on loopback, or beyond it only behind the admin token.
    if adminToken != nil || configuration.listensOnLoopbackOnly {
        ConsoleRoutes(service: service, configuration: configuration, admin: AdminCheck(token: adminToken))
            .add(to: router)
    }
    PageRoutes().add(to: router)
    if let simulator {
        let rateLimit = InAppsRateLimit()
        SimulatorRoutes(
            store: simulator, configuration: configuration, adminToken: adminToken, inAppsRateLimit: rateLimit
        ).add(to: router)
        InAppsRoutes(store: simulator, clock: Date.init, rateLimit: rateLimit).add(to: router)
    }
    return router
}
