/// The OpenAPI 3.1 description of every route, served at `GET /openapi.yaml`. A test compares its paths and methods
/// with the router's, and CI runs schemathesis against a live server with it, so it stays true.
///
/// Kept in six parts: the shared components (`OpenAPIDocument+Components.swift`), the validation and operational
/// paths (`OpenAPIDocument+Paths.swift`), the simulator's control plane (`OpenAPIDocument+SimulatorPaths.swift`), what
/// the transaction manager drives in it (`OpenAPIDocument+ManagerPaths.swift`), its App Store Server API
/// (`OpenAPIDocument+InAppsPaths.swift`) and Retention Messaging API (`OpenAPIDocument+MessagingPaths.swift`).
enum OpenAPIDocument {
    static let yaml =
        components + "\n" + paths + "\n" + simulatorPaths + "\n" + managerPaths + "\n" + inAppsPaths
        + "\n" + messagingPaths
}
