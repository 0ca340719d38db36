public import IAPCore

/// Why the simulated store refused an operation. `code` is stable; the StoreKit-shaped codes (`networkError`,
/// `ineligibleForOffer`, ...) are the ones StoreKit testing lets you inject; the others name misuse of the simulator.
public struct SimulatorError: CodedError, Sendable {
    public struct Code: StoreKitErrorCode, Hashable, Sendable, Codable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        // StoreKit's own failures (networkError, ineligibleForOffer, ...) come from ``StoreKitErrorCode``.
        // Misuse of the simulator.
        public static let unknownAccount = Code(rawValue: "unknownAccount")
        public static let unknownDevice = Code(rawValue: "unknownDevice")
        public static let unknownTransaction = Code(rawValue: "unknownTransaction")
        public static let unknownRequest = Code(rawValue: "unknownRequest")
        public static let unknownFamily = Code(rawValue: "unknownFamily")
        public static let invalidState = Code(rawValue: "invalidState")
        /// The customer already asked for a refund of this transaction.
        public static let duplicateRefundRequest = Code(rawValue: "duplicateRefundRequest")
        public static let invalidArgument = Code(rawValue: "invalidArgument")
        public static let timeGoesForward = Code(rawValue: "timeGoesForward")
        public static let signingFailed = Code(rawValue: "signingFailed")
        /// A stored state that cannot be read back (another format, or a damaged row).
        public static let unreadableState = Code(rawValue: "unreadableState")

        /// The codes that can be injected into an operation, as StoreKit testing allows.
        public static let injectable: [Code] = [
            .networkError, .systemError, .notAvailableInStorefront, .notEntitled, .productUnavailable,
            .purchaseNotAllowed, .ineligibleForOffer, .invalidOfferIdentifier, .invalidOfferPrice,
            .invalidOfferSignature, .missingOfferParameters, .unknown,
        ]
    }

    public let code: Code
    public let reason: String
    /// The App Store Server API's numeric error code for this refusal (`4030004`: the subscription cannot be
    /// extended), when the operation is one the API offers and Apple has a code for it.
    public let appStoreErrorCode: Int?

    public init(_ code: Code, _ reason: String, appStoreErrorCode: Int? = nil) {
        self.code = code
        self.reason = reason
        self.appStoreErrorCode = appStoreErrorCode
    }
}

/// The store operations a failure can be injected into (StoreKit testing's list, plus the simulator's others).
public enum SimulatorOperation: String, Hashable, Sendable, Codable, CaseIterable {
    case loadProducts, purchase, sync, refundRequest, appTransaction, subscriptionStatus, offerCodeRedemption
}
