public import IAPCore

/// Why bytes could not be read as an App Store receipt.
///
/// Parsing throws this; verification never does (it returns a ``ReceiptVerdict``). The ``code`` is stable and is what
/// callers and tests should match on; ``reason`` explains it to a person.
public struct ReceiptParsingError: CodedError, Sendable {
    /// The stable name of what went wrong.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// No bytes at all.
        public static let emptyInput = Code(rawValue: "emptyInput")
        /// More bytes than the configured limit.
        public static let inputTooLarge = Code(rawValue: "inputTooLarge")
        /// Text that is not valid base64, or binary that is not DER/BER.
        public static let unrecognizedEncoding = Code(rawValue: "unrecognizedEncoding")
        /// An iOS 6 style `transactionReceipt` (an old-style plist), which is not a PKCS#7 app receipt.
        public static let legacyTransactionReceipt = Code(rawValue: "legacyTransactionReceipt")
        /// The ASN.1 structure is broken: truncated, lengths past the end, nesting too deep, trailing bytes.
        public static let malformedASN1 = Code(rawValue: "malformedASN1")
        /// Well-formed PKCS#7 that is not a signed receipt: another content type, no content, no signer.
        public static let notAReceipt = Code(rawValue: "notAReceipt")
        /// An attribute's value does not have the type the format gives it (for example a bundle id that is not a string).
        public static let malformedAttribute = Code(rawValue: "malformedAttribute")
        /// A date attribute that is not an RFC 3339 date.
        public static let invalidDate = Code(rawValue: "invalidDate")
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

}
