public import IAPCore

/// What the server answers a request it cannot fulfil: a stable code, a reason for a person, the HTTP status, and,
/// for documents that failed verification, each failed check.
public struct APIError: CodedError, Sendable {
    /// One failed check of a document.
    public typealias Detail = ErrorDetail

    public let code: String
    public let reason: String
    /// The HTTP status code.
    public let status: Int
    public let details: [Detail]
    /// What the server logs and never answers (a database's own error text).
    public let internalReason: String?

    public init(
        _ status: Int, _ code: String, _ reason: String, details: [Detail] = [], internalReason: String? = nil
    ) {
        self.status = status
        self.code = code
        self.reason = reason
        self.details = details
        self.internalReason = internalReason
    }

    package static func badRequest(_ code: String, _ reason: String) -> APIError { APIError(400, code, reason) }
    package static func unprocessable(_ code: String, _ reason: String, details: [Detail] = []) -> APIError {
        APIError(422, code, reason, details: details)
    }
    /// A storage failure as a client sees it: 503 with the storage's stable code and a fixed message.
    static func storage(_ error: StorageError) -> APIError { APIError(ServiceError.storage(error)) }

    /// The service's refusal as an answer: the one place a kind of refusal becomes an HTTP status.
    public init(_ error: ServiceError) {
        let status =
            switch error.kind {
            case .invalid: 400
            case .unauthenticated: 401
            case .forbidden: 403
            case .notFound: 404
            case .conflict: 409
            case .refused: 422
            case .upstreamFailed: 502
            case .unavailable: 503
            case .misconfigured: 500
            }
        self.init(status, error.code, error.reason, details: error.details, internalReason: error.internalReason)
    }
}
