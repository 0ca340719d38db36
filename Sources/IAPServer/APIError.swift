public import IAPCore

/// What the server answers a request it cannot fulfil: a stable code, a reason for a person, the HTTP status, and,
/// for documents that failed verification, each failed check.
public struct APIError: CodedError, Sendable {
    /// One failed check of a document, as the verifiers report it.
    public struct Detail: Hashable, Sendable, Codable {
        public var code: String
        public var reason: String
        public var field: String?

        public init(code: String, reason: String, field: String? = nil) {
            self.code = code
            self.reason = reason
            self.field = field
        }
    }

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
    /// A storage failure as a client sees it: 503 with the storage's stable code and a fixed message; the engine's
    /// own text is logged, never answered.
    static func storage(_ error: StorageError) -> APIError {
        let message =
            switch error.code {
            case "storageCorrupt": "a stored record could not be read; the operator has been told"
            default: "the database is unavailable; try again shortly"
            }
        return APIError(503, error.code, message, internalReason: error.reason)
    }
}
