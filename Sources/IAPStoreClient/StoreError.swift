public import IAPCore

/// Why a store operation did not happen, with a stable code (StoreKit's `StoreKitError` and `Product.PurchaseError`
/// cases keep their names) and a reason for people.
public struct StoreError: CodedError, Sendable {
    public struct Code: StoreKitErrorCode, Hashable, Sendable, Codable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        // StoreKit's own failures (networkError, ineligibleForOffer, ...) come from ``StoreKitErrorCode``.
        public static let invalidState = Code(rawValue: "invalidState")
        public static let unknownTransaction = Code(rawValue: "unknownTransaction")
        /// The simulator does not know the account (a simulated store's code, carried over unchanged).
        public static let unknownAccount = Code(rawValue: "unknownAccount")
        /// The device is not one of the account's (a simulated store's code, carried over unchanged).
        public static let unknownDevice = Code(rawValue: "unknownDevice")
        /// The customer has no transaction for the product (`/simulator`'s answer to a latest-transaction request).
        public static let noTransaction = Code(rawValue: "noTransaction")

        /// The store cannot do this here (no window scene for a sheet, an OS version without the feature).
        public static let unsupported = Code(rawValue: "unsupported")
        /// The customer already asked for a refund of this transaction.
        public static let duplicateRefundRequest = Code(rawValue: "duplicateRefundRequest")
        /// The refund request could not be made.
        public static let refundRequestFailed = Code(rawValue: "refundRequestFailed")

        // The Store's own.
        /// Another purchase has not finished yet: one at a time.
        public static let purchaseInProgress = Code(rawValue: "purchaseInProgress")
        /// The product is not in the app's product configuration.
        public static let unknownProduct = Code(rawValue: "unknownProduct")
        /// What the store handed out did not verify: nothing was unlocked.
        public static let failedVerification = Code(rawValue: "failedVerification")
        /// Consuming more than the balance, or consuming a product that is not a consumable.
        public static let notConsumable = Code(rawValue: "notConsumable")
        public static let insufficientBalance = Code(rawValue: "insufficientBalance")
        /// The app's validation server could not be reached or did not answer sensibly.
        public static let serverUnreachable = Code(rawValue: "serverUnreachable")
        /// The app's validation server refused the document (the reason carries its code).
        public static let serverRefused = Code(rawValue: "serverRefused")
        /// The validation server serves another app than the document's.
        public static let wrongBundle = Code(rawValue: "wrongBundle")
        /// A sandbox document was sent to a server (or endpoint) for production.
        public static let sandboxReceiptInProduction = Code(rawValue: "sandboxReceiptInProduction")
        /// The validation server's answer carries no signature, and the app requires one (``AnswerVerification``).
        public static let answerNotSigned = Code(rawValue: "answerNotSigned")
        /// The answer does not match its signature, or a key the app does not know signed it.
        public static let answerSignatureInvalid = Code(rawValue: "answerSignatureInvalid")
        /// The answer was signed for another request's nonce.
        public static let answerReplayed = Code(rawValue: "answerReplayed")
        /// The answer was signed too long before (or after) the device's clock.
        public static let answerStale = Code(rawValue: "answerStale")
        /// The cache could not be read or written.
        public static let persistenceFailed = Code(rawValue: "persistenceFailed")
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }
}
