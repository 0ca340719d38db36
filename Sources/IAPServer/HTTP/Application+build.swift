public import Hummingbird
public import Logging
public import NIOCore

/// The server as one Hummingbird application: routes, errors as JSON, the configured address. Tests call this too.
public func buildApplication(
    service: ValidationService, configuration: ServerConfiguration, logger: Logger = Logger(label: "iapkit.server"),
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
) -> some ApplicationProtocol {
    let router = Router(context: ServerRequestContext.self)
    router.add(middleware: ErrorMiddleware())
    ServerRoutes(service: service, configuration: configuration).add(to: router)
    return Application(
        router: router,
        configuration: ApplicationConfiguration(
            address: .hostname(configuration.host, port: configuration.port), serverName: "iapkit"),
        onServerRunning: onServerRunning,
        logger: logger)
}
