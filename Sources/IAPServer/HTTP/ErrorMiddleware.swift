import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// Turns every error into a JSON answer `{"code": ..., "message": ..., "details": [...]}` with its status: the
/// service's ``ServiceError`` by its kind (the one place that mapping happens), an ``APIError`` as it says, Hummingbird's own errors (unknown route, wrong method, too large) with their status, and
/// anything else as 500 (logged; a client should never be able to cause one).
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    /// What is logged of failures a client cannot see (a database's own text): one line a second for each code.
    let failures: FailureLog

    init(failures: FailureLog) { self.failures = failures }

    /// Failures' internal reasons logged to the requests' loggers, and the counts held back at the end of a burst to
    /// `logger`.
    init(logger: Logger) {
        failures = FailureLog(summary: { code, unlogged in
            logger.error(
                "requests failed, not logged one by one",
                metadata: ["code": "\(code)", "unloggedSinceLast": "\(unlogged)"])
        })
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as ServiceError {
            return respond(APIError(error), request, context)
        } catch let error as APIError {
            return respond(error, request, context)
        } catch let error as any HTTPResponseError {
            let status = error.status
            let code: String
            switch status.code {
            case 404: code = "notFound"
            case 405: code = "methodNotAllowed"
            case 413: code = "bodyTooLarge"
            default: code = "http\(status.code)"
            }
            let message = (error as? HTTPError)?.body ?? status.reasonPhrase
            return Self.response(APIError(status.code, code, message))
        } catch {
            context.logger.error("unexpected error", metadata: ["error": "\(error)", "path": "\(request.uri.path)"])
            return Self.response(APIError(500, "internalError", "the server failed; the error was logged"))
        }
    }

    /// A refusal's answer; what it keeps from the client (a database's own text) is logged, a burst of one code at
    /// most once a second with the count of those not logged.
    func respond(_ error: APIError, _ request: Request, _ context: Context) -> Response {
        if let detail = error.internalReason, case .log(let unlogged) = failures.admit(error.code) {
            var metadata: Logger.Metadata = [
                "code": "\(error.code)", "error": "\(detail)", "path": "\(request.uri.path)",
            ]
            if unlogged > 0 { metadata["unloggedSinceLast"] = "\(unlogged)" }
            context.logger.error("request failed", metadata: metadata)
        }
        return Self.response(error)
    }

    static func response(_ error: APIError) -> Response {
        JSONBody.response(ErrorBody(error), status: HTTPResponse.Status(code: error.status))
    }
}

/// The JSON shape of an error answer.
struct ErrorBody: Encodable {
    var code: String
    var message: String
    var details: [APIError.Detail]?

    init(_ error: APIError) {
        code = error.code
        message = Self.bounded(error.reason)
        details = error.details.isEmpty ? nil : error.details
    }

    /// The longest message answered, in Unicode scalars: a message that quotes what the client sent (an unknown
    /// product's id, a customer id in a path) must not send a 100 KB input back.
    static let longestMessage = 1_000

    static func bounded(_ message: String) -> String {
        guard message.unicodeScalars.count > longestMessage else { return message }
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: message.unicodeScalars.prefix(longestMessage))
        return String(scalars) + "…"
    }
}
