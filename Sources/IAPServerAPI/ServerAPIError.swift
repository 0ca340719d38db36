public import IAPCore

/// Why a call to the App Store Server API failed: Apple's numeric error code when its answer carried one (the HTTP
/// status is its first three digits), or the client's own code.
public struct ServerAPIError: CodedError, Sendable {
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The private key cannot be read or used.
        public static let invalidKey = Code(rawValue: "invalidKey")
        /// A token could not be signed.
        public static let signingFailed = Code(rawValue: "signingFailed")
        /// Apple answered with an error (``ServerAPIError/appleErrorCode`` says which, when the body carried it).
        public static let apple = Code(rawValue: "apple")
        /// The request never got an answer (connection refused, timeout).
        public static let unreachable = Code(rawValue: "unreachable")
        /// The answer is not what the endpoint returns (not JSON, fields missing, too large).
        public static let malformedAnswer = Code(rawValue: "malformedAnswer")
        /// A signed document in the answer did not verify; it is not returned.
        public static let verificationFailed = Code(rawValue: "verificationFailed")
    }

    public let code: Code
    public let reason: String
    /// Apple's numeric error code (`4040010`: transaction id not found), when its answer carried one.
    public let appleErrorCode: Int?
    /// The HTTP status, when there was an answer.
    public let httpStatus: Int?

    public init(_ code: Code, _ reason: String, appleErrorCode: Int? = nil, httpStatus: Int? = nil) {
        self.code = code
        self.reason = reason
        self.appleErrorCode = appleErrorCode
        self.httpStatus = httpStatus
    }
}
