public import IAPCore

/// Why text could not be read as a compact JWS or its payload.
///
/// Parsing throws this, and so does verification of text that is not a document at all (anything that parses gets a
/// verdict, which lists what failed). Match on ``code``; ``reason`` explains it to a person, with the byte offset where
/// that helps.
public struct SignedDataParsingError: CodedError, Sendable {
    /// The stable name of what went wrong.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// More bytes than the configured limit.
        public static let inputTooLarge = Code(rawValue: "inputTooLarge")
        /// Not three dot-separated parts, or an empty part.
        public static let malformedJWS = Code(rawValue: "malformedJWS")
        /// A part that is not valid (canonical, unpadded for base64url) base64.
        public static let malformedBase64 = Code(rawValue: "malformedBase64")
        /// Text that is not RFC 8259 JSON: syntax, invalid UTF-8, nesting too deep, a duplicated key.
        public static let malformedJSON = Code(rawValue: "malformedJSON")
        /// The header lacks `alg` or `x5c`, or gives them the wrong type.
        public static let malformedHeader = Code(rawValue: "malformedHeader")
        /// A known payload field holds a value of the wrong type (for example a date that is a string).
        public static let malformedField = Code(rawValue: "malformedField")
        /// The signature is not 64 bytes (raw r‖s for ES256).
        public static let malformedSignature = Code(rawValue: "malformedSignature")
        /// The payload does not look like any of Apple's signed document types (verifying a document of unknown kind).
        public static let unknownPayloadType = Code(rawValue: "unknownPayloadType")
        /// The payload is of another kind than the one expected (a transaction given as renewal information).
        public static let wrongPayloadType = Code(rawValue: "wrongPayloadType")
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }
}
