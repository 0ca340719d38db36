/// The OpenAPI 3.1 description of every route, served at `GET /openapi.yaml`. A test compares its paths and methods
/// with the router's, and CI runs schemathesis against a live server with it, so it stays true.
///
/// Kept in three parts: the shared components (`OpenAPIDocument+Components.swift`), the validation and operational
/// paths (`OpenAPIDocument+Paths.swift`) and the simulator's (`OpenAPIDocument+SimulatorPaths.swift`).
enum OpenAPIDocument {
    static let yaml = components + "\n" + paths + "\n" + simulatorPaths
}
