public import IAPCore

/// An error loading or configuring trust anchors (root certificates).
///
/// Errors are structs with a stable ``code``: new codes can be added without breaking callers, and equality is on
/// the code so tests match codes rather than messages.
public struct TrustError: CodedError, Sendable {
    /// The stable name of what went wrong.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The file could not be read.
        public static let unreadableFile = Code(rawValue: "unreadableFile")
        /// The bytes are neither a DER certificate nor a PEM document holding one.
        public static let notACertificate = Code(rawValue: "notACertificate")
        /// The certificate carries the name of one of Apple's roots but not its exact bytes.
        public static let impostorAppleRoot = Code(rawValue: "impostorAppleRoot")
        /// A key or certificate could not be used to mint a certificate.
        public static let mintingFailed = Code(rawValue: "mintingFailed")
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

}
