import Foundation

/// The OpenAPI 3.1 description of every route, served at `GET /openapi.yaml` from the package's resource
/// `Sources/IAPServer/OpenAPI/openapi.yaml`. A test compares its paths and methods with the router's, and CI runs
/// schemathesis against a live server with it, so it stays true.
enum OpenAPIDocument {
    /// The document, or nil when the resource is missing (a binary copied without its resources folder).
    static let yaml: String? = Bundle.module.url(forResource: "openapi", withExtension: "yaml").flatMap {
        try? String(contentsOf: $0, encoding: .utf8)
    }
}
