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
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }
}
