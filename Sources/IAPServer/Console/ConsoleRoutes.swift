import Foundation
import Hummingbird
import IAPSignedData

/// The JSON the pages need beyond `/v1`, under `/console`, behind the operator guard (as an addition's operator routes
/// are): the inspector's verification of a pasted document, and a customer as the server
/// stores them (entitlements, transactions, what they owned when).
struct ConsoleRoutes: Sendable {
    let service: ValidationService
    let configuration: ServerConfiguration
    let access: OperatorAccess

    func add(to router: Router<ServerRequestContext>) {
        let inspector = DocumentInspector(service: service)
        let group = router.group("console").add(middleware: OperatorMiddleware(access))
        group.post("inspect") { request, _ in
            let bytes = try await JSONBody.bytes(of: request, limit: configuration.maximumBodySize)
            let body = try RequestDocument(bytes: bytes, allowed: ["document"])
            let answer = try await inspector.inspect(try body.requiredString("document"))
            return JSONBody.response(bytes: answer.jsonBytes())
        }
        group.get("customers/:id") { request, context in
            let id = try context.parameters.require("id")
            let customer = try await service.customer(
                id.removingPercentEncoding ?? id, bundleID: request.uri.queryParameters.get("bundleId"))
            return try await service.customerView(customer)
        }
    }
}
