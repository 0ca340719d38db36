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
        group.get("deliveries") { request, _ in
            let query = request.uri.queryParameters
            var state: DeliveryState?
            if let text = query.get("state") {
                guard let known = DeliveryState(rawValue: text) else {
                    throw APIError.badRequest("invalidQuery", "'state' must be pending, delivered or failed")
                }
                state = known
            }
            let limit = try request.integerQuery("limit", in: 1...1_000) ?? 100
            return DeliveryList(
                try await service.deliveries(
                    DeliveryQuery(
                        bundleID: query.get("bundleId"), customerID: query.get("customerId"), state: state,
                        eventType: try request.textQuery("type"), from: try request.dateQuery("from"),
                        to: try request.dateQuery("to"), limit: limit)))
        }
        group.post("deliveries/:event/retry") { request, context in
            let event = try context.parameters.require("event")
            let retried = try await service.retryDelivery(
                eventID: event, endpoint: request.uri.queryParameters.get("endpoint"))
            return DeliveryRetry(eventId: event, retried: retried)
        }
        group.get("overview") { request, context in
            let query = request.uri.queryParameters
            var range = OverviewRange.week
            if let text = query.get("range") {
                guard let known = OverviewRange(rawValue: text) else {
                    throw APIError.badRequest("invalidQuery", "'range' must be day, week or month")
                }
                range = known
            }
            let overview = try await service.overview(
                bundleID: query.get("bundleId"), range: range, end: try request.dateQuery("end"))
            switch query.get("format") ?? "json" {
            case "json":
                return try OverviewAnswer(overview: overview).response(from: request, context: context)
            case "csv":
                return Response(
                    status: .ok, headers: [.contentType: "text/csv; charset=utf-8"],
                    body: ResponseBody(byteBuffer: ByteBuffer(string: overview.csv)))
            default:
                throw APIError.badRequest("invalidQuery", "'format' must be json or csv")
            }
        }
        group.get("notifications") { request, _ in
            try await service.notificationLog(
                bundleID: try request.textQuery("bundleId"), outcome: try request.textQuery("outcome"),
                type: try request.textQuery("type"), subtype: try request.textQuery("subtype"),
                from: try request.dateQuery("from"), to: try request.dateQuery("to"),
                customer: try request.textQuery("customer"), before: try request.textQuery("before"),
                limit: try request.integerQuery("limit", in: 1...200) ?? 50)
        }
        group.get("notifications/:uuid") { request, context in
            let uuid = try context.parameters.require("uuid")
            return try await service.notificationDetail(
                uuid: uuid.removingPercentEncoding ?? uuid, bundleID: try request.textQuery("bundleId"))
        }
        group.get("names") { request, _ in
            try service.catalogNames(bundleID: try request.textQuery("bundleId"))
        }
        group.get("customers") { request, _ in
            try await service.customerList(
                bundleID: try request.textQuery("bundleId"), search: try request.textQuery("search", limit: 1_024),
                after: try request.textQuery("after", limit: 1_024),
                limit: try request.integerQuery("limit", in: 1...200) ?? 50)
        }
        group.get("customers/:id") { request, context in
            let id = try context.parameters.require("id")
            let search = id.removingPercentEncoding ?? id
            let app = try service.app(bundleID: try request.textQuery("bundleId")).configuration.bundleID
            guard let customer = try await service.consoleCustomer(search, bundleID: app) else {
                throw ServiceError(.notFound, "customerNotFound", "no customer of \(app) is known as '\(search)'")
            }
            return try await service.customerView(customer)
        }
    }
}
