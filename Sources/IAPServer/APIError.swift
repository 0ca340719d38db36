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

    public init(_ status: Int, _ code: String, _ reason: String, details: [Detail] = []) {
        self.status = status
        self.code = code
        self.reason = reason
        self.details = details
    }

    static func badRequest(_ code: String, _ reason: String) -> APIError { APIError(400, code, reason) }
    static func unprocessable(_ code: String, _ reason: String, details: [Detail] = []) -> APIError {
        APIError(422, code, reason, details: details)
    }
    static func storage(_ error: StorageError) -> APIError { APIError(503, error.code, error.reason) }
}
