import Foundation
public import Hummingbird
public import Logging
public import NIOCore

/// The server as one Hummingbird application: routes, errors as JSON, the configured address. Tests call this too.
///
/// - Parameters:
///   - service: the validation service the routes call.
///   - configuration: the address, body limit and API keys.
///   - additions: what is served beside the validation server (the local App Store's routes, pages and middleware).
///   - operatorAccess: who may use `/simulator`, `/console` and `/metrics` (``OperatorAccess/open`` only in
///     development mode).
///   - logger: the application's logger.
///   - onServerRunning: called once the socket listens (the channel tells the port).
public func buildApplication(
    service: ValidationService, configuration: ServerConfiguration, additions: [any ServerAddition] = [],
    operatorAccess: OperatorAccess = .refused, logger: Logger = Logger(label: "iapkit.server"),
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
) -> some ApplicationProtocol {
    let connections = ConnectionRegistry(limits: configuration.connectionLimits)
    let router = buildRouter(
        service: service, configuration: configuration, additions: additions, operatorAccess: operatorAccess)
    return Application(
        router: router,
        server: .http1(configuration: .init(additionalChannelHandlers: [ConnectionGuard(registry: connections)])),
        configuration: ApplicationConfiguration(
            address: .hostname(configuration.host, port: configuration.port), serverName: "iapkit"),
        onServerRunning: onServerRunning,
        logger: logger)
}

/// Every route of the server with its middleware (metrics, debug request logs, errors as JSON, the request guard),
/// and each group behind its own guard: the customer routes behind the API keys, the operator routes (`/console`,
/// `/metrics`, and an addition's, such as `/simulator`) behind ``OperatorAccess``.
///
/// - Parameters:
///   - service: the validation service the routes call.
///   - configuration: the body limit, API keys and allowed host names.
///   - additions: what is served beside the validation server; their middleware runs inside the server's.
///   - operatorAccess: who may use the operator routes.
public func buildRouter(
    service: ValidationService, configuration: ServerConfiguration, additions: [any ServerAddition] = [],
    operatorAccess: OperatorAccess = .refused
) -> Router<ServerRequestContext> {
    let router = Router(context: ServerRequestContext.self)
    _ = ServerMetrics.registry
    router.add(middleware: MetricsMiddleware())
    router.add(middleware: RequestCountMiddleware(signal: service.outboxSignal))
    router.add(middleware: LogRequestsMiddleware(.debug))
    router.add(middleware: ErrorMiddleware(logger: service.logger))
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
    ServerRoutes(service: service, configuration: configuration, additions: additions).add(to: router)
    ConsoleRoutes(service: service, configuration: configuration, access: operatorAccess).add(to: router)
    for addition in additions {
        addition.add(to: router, configuration: configuration, access: operatorAccess)
    }
    // After the additions: their middleware (which applies to routes added after it) sees their pages too.
    PageRoutes(sets: [.server] + additions.compactMap(\.pages)).add(to: router)
    return router
}
