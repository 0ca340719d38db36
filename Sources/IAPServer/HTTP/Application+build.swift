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
///   - operatorAccess: who may use `/simulator`, `/console` and `/metrics` (``OperatorAccess/open`` only in
///     development mode).
///   - logger: the application's logger.
///   - onServerRunning: called once the socket listens (the channel tells the port).
public func buildApplication(
    service: ValidationService, configuration: ServerConfiguration, simulator: AppStoreSimulator? = nil,
    operatorAccess: OperatorAccess = .refused, logger: Logger = Logger(label: "iapkit.server"),
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
) -> some ApplicationProtocol {
    buildApplication(
        service: service, configuration: configuration, simulator: simulator, saver: nil,
        operatorAccess: operatorAccess, logger: logger, onServerRunning: onServerRunning)
}

/// The application, with the local App Store's saver: a request that changed the store is answered once it is saved.
func buildApplication(
    service: ValidationService, configuration: ServerConfiguration, simulator: AppStoreSimulator?,
    saver: SimulatorSaver?, operatorAccess: OperatorAccess, logger: Logger,
    onServerRunning: @escaping @Sendable (any Channel) async -> Void
) -> some ApplicationProtocol {
    let connections = ConnectionRegistry(limits: configuration.connectionLimits)
    let router = buildRouter(
        service: service, configuration: configuration, simulator: simulator, operatorAccess: operatorAccess)
    if let saver { router.add(middleware: SimulatorSavedMiddleware(saver: saver)) }
    return Application(
        router: router,
        server: .http1(configuration: .init(additionalChannelHandlers: [ConnectionGuard(registry: connections)])),
        configuration: ApplicationConfiguration(
            address: .hostname(configuration.host, port: configuration.port), serverName: "iapkit"),
        onServerRunning: onServerRunning,
        logger: logger)
}

/// Every route of the server with its middleware (metrics, debug request logs, errors as JSON, the request guard),
/// and each group behind its own guard: the customer routes behind the API keys, the operator routes (`/simulator`,
/// `/console`, `/metrics`) behind ``OperatorAccess``.
///
/// - Parameters:
///   - service: the validation service the routes call.
///   - configuration: the body limit, API keys and allowed host names.
///   - simulator: the local App Store served under `/simulator`, if any.
///   - operatorAccess: who may use the operator routes.
public func buildRouter(
    service: ValidationService, configuration: ServerConfiguration, simulator: AppStoreSimulator? = nil,
    operatorAccess: OperatorAccess = .refused
) -> Router<ServerRequestContext> {
    let router = Router(context: ServerRequestContext.self)
    _ = ServerMetrics.registry
    router.add(middleware: MetricsMiddleware())
    router.add(middleware: LogRequestsMiddleware(.debug))
    router.add(middleware: ErrorMiddleware())
    router.add(
        middleware: RequestGuardMiddleware(listeningHost: configuration.host, extra: configuration.allowedHosts))
    let metrics = router.group().add(middleware: OperatorMiddleware(operatorAccess))
    metrics.get("/metrics") { _, _ in
        Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: ServerMetrics.text())))
    }
    router.get("/openapi.yaml") { _, _ in
        guard let yaml = OpenAPIDocument.yaml else {
            throw APIError(
                404, "openAPIMissing", "the OpenAPI document is missing from the resources beside this binary")
        }
        return Response(
            status: .ok, headers: [.contentType: "application/yaml"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: yaml)))
    }
    ServerRoutes(service: service, configuration: configuration).add(to: router)
    ConsoleRoutes(service: service, configuration: configuration, access: operatorAccess).add(to: router)
    PageRoutes().add(to: router)
    if let simulator {
        let rateLimit = InAppsRateLimit()
        SimulatorRoutes(
            store: simulator, configuration: configuration, access: operatorAccess, inAppsRateLimit: rateLimit
        ).add(to: router)
        InAppsRoutes(store: simulator, clock: Date.init, rateLimit: rateLimit).add(to: router)
    }
    return router
}
