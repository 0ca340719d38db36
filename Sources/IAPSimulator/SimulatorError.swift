public import IAPCore

/// Why the simulated store refused an operation. `code` is stable; the StoreKit-shaped codes (`networkError`,
/// `ineligibleForOffer`, ...) are the ones StoreKit testing lets you inject; the others name misuse of the simulator.
public struct SimulatorError: CodedError, Sendable {
    public struct Code: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        // StoreKit's errors, injectable per operation.
        public static let networkError = Code(rawValue: "networkError")
        public static let systemError = Code(rawValue: "systemError")
        public static let notAvailableInStorefront = Code(rawValue: "notAvailableInStorefront")
        public static let notEntitled = Code(rawValue: "notEntitled")
        public static let productUnavailable = Code(rawValue: "productUnavailable")
        public static let purchaseNotAllowed = Code(rawValue: "purchaseNotAllowed")
        public static let ineligibleForOffer = Code(rawValue: "ineligibleForOffer")
        public static let invalidOfferIdentifier = Code(rawValue: "invalidOfferIdentifier")
        public static let invalidOfferPrice = Code(rawValue: "invalidOfferPrice")
        public static let invalidOfferSignature = Code(rawValue: "invalidOfferSignature")
        public static let missingOfferParameters = Code(rawValue: "missingOfferParameters")
        public static let invalidQuantity = Code(rawValue: "invalidQuantity")
        public static let unknown = Code(rawValue: "unknown")
        // Misuse of the simulator.
        public static let unknownAccount = Code(rawValue: "unknownAccount")
        public static let unknownDevice = Code(rawValue: "unknownDevice")
        public static let unknownTransaction = Code(rawValue: "unknownTransaction")
        public static let unknownRequest = Code(rawValue: "unknownRequest")
        public static let unknownFamily = Code(rawValue: "unknownFamily")
        public static let invalidState = Code(rawValue: "invalidState")
        public static let invalidArgument = Code(rawValue: "invalidArgument")
        public static let timeGoesForward = Code(rawValue: "timeGoesForward")
        public static let signingFailed = Code(rawValue: "signingFailed")

        /// The codes that can be injected into an operation, as StoreKit testing allows.
        public static let injectable: [Code] = [
            .networkError, .systemError, .notAvailableInStorefront, .notEntitled, .productUnavailable,
            .purchaseNotAllowed, .ineligibleForOffer, .invalidOfferIdentifier, .invalidOfferPrice,
            .invalidOfferSignature, .missingOfferParameters, .unknown,
        ]
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }
}

/// The store operations a failure can be injected into (StoreKit testing's list, plus the simulator's others).
public enum SimulatorOperation: String, Hashable, Sendable, Codable, CaseIterable {
    case loadProducts, purchase, sync, refundRequest, appTransaction, subscriptionStatus, offerCodeRedemption
}
