public import IAPCore

/// What the validation service refuses, without HTTP: a stable code, a reason for a person, what kind of refusal it
/// is, and, for documents that failed verification, each failed check. The HTTP layer turns it into an answer in one
/// place (`APIError.init(_:)`).
public struct ServiceError: CodedError, Sendable {
    /// What kind of refusal: the HTTP layer's status follows from it.
    public enum Kind: Sendable, Hashable {
        /// The request is malformed (400).
        case invalid
        /// It needs a key and presented none (401).
        case unauthenticated
        /// The key presented does not reach what it asked for (403).
        case forbidden
        /// What it names is not known here (404).
        case notFound
        /// It contradicts what is recorded (409).
        case conflict
        /// Well-formed but refused: a document that did not verify, a wrong app (422).
        case refused
        /// A service this one depends on failed (502).
        case upstreamFailed
        /// The database could not answer now (503).
        case unavailable
        /// The server is configured wrongly (500, at start).
        case misconfigured
    }

    public let code: String
    public let reason: String
    public let kind: Kind
    public let details: [ErrorDetail]
    /// What the server logs and never answers (a database's own error text).
    public let internalReason: String?

    public init(
        _ kind: Kind, _ code: String, _ reason: String, details: [ErrorDetail] = [], internalReason: String? = nil
    ) {
        self.kind = kind
        self.code = code
        self.reason = reason
        self.details = details
        self.internalReason = internalReason
    }

    static func badRequest(_ code: String, _ reason: String) -> ServiceError { ServiceError(.invalid, code, reason) }

    static func unprocessable(_ code: String, _ reason: String, details: [ErrorDetail] = []) -> ServiceError {
        ServiceError(.refused, code, reason, details: details)
    }

    /// A storage failure as a client sees it: the storage's stable code and a fixed message; the engine's own text is
    /// logged, never answered.
    static func storage(_ error: StorageError) -> ServiceError {
        let message =
            switch error.code {
            case "storageCorrupt": "a stored record could not be read; the operator has been told"
            default: "the database is unavailable; try again shortly"
            }
        return ServiceError(.unavailable, error.code, message, internalReason: error.reason)
    }
}

/// One failed check of a document, as the verifiers report it.
public struct ErrorDetail: Hashable, Sendable, Codable {
    public var code: String
    public var reason: String
    public var field: String?

    public init(code: String, reason: String, field: String? = nil) {
        self.code = code
        self.reason = reason
        self.field = field
    }
}
