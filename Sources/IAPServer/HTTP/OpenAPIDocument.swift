/// The OpenAPI 3.1 description of every route, served at `GET /openapi.yaml`. A test compares its paths and methods
/// with the router's, and CI runs schemathesis against a live server with it, so it stays true.
///
/// Kept in two parts: the shared components (`OpenAPIDocument+Components.swift`) and the paths
/// (`OpenAPIDocument+Paths.swift`).
enum OpenAPIDocument {
    static let yaml = components + "\n" + paths
}
