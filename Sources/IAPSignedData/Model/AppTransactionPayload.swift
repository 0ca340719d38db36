// The payload models of Apple's signed data (APP_STORE_FORMATS.md sections 2 and 3). Each lists its known fields once,
// in its field table; decoding and encoding both go through that table.

/// The decoded payload of a signed app transaction: the customer's purchase of the app itself.
public struct AppTransactionPayload: PayloadModel, JSONFieldValue {
    /// The environment (Apple calls it the receipt type).
    public var receiptType: AppStoreEnvironment?
    /// The app's Apple id (absent in Xcode and sandbox).
    public var appAppleID: Int64?
    /// The app's bundle identifier.
    public var bundleID: String?
    /// The app version that asked for the document.
    public var applicationVersion: String?
    /// The App Store's identifier of that version.
    public var versionExternalIdentifier: Int64?
    /// When the App Store made the document.
    public var receiptCreationDate: EpochMilliseconds?
    /// When the customer first got the app.
    public var originalPurchaseDate: EpochMilliseconds?
    /// The app version the customer first got.
    public var originalApplicationVersion: String?
    /// Base64 hash binding the document to a device.
    public var deviceVerification: String?
    /// The UUID used in the device verification hash.
    public var deviceVerificationNonce: String?
    /// When the customer pre-ordered the app.
    public var preorderDate: EpochMilliseconds?
    /// The identifier of this app transaction.
    public var appTransactionID: String?
    /// The platform the app was first bought on.
    public var originalPlatform: Platform?
    /// When the App Store signed this document (recent documents only).
    public var signedDate: EpochMilliseconds?
    /// Members this model has no property for, in their original order.
    public var additionalFields = JSONObject()

    public init() {}

    public init(jsonBytes: some Collection<UInt8>) throws(SignedDataParsingError) {
        self = try Self.decodeJSON(jsonBytes)
    }

    public static let fieldTable = PayloadFieldTable<AppTransactionPayload>([
        .init("receiptType", { $0.receiptType }, { $0.receiptType = $1 }),
        .init("appAppleId", { $0.appAppleID }, { $0.appAppleID = $1 }),
        .init("bundleId", { $0.bundleID }, { $0.bundleID = $1 }),
        .init("applicationVersion", { $0.applicationVersion }, { $0.applicationVersion = $1 }),
        .init("versionExternalIdentifier", { $0.versionExternalIdentifier }, { $0.versionExternalIdentifier = $1 }),
        .init("receiptCreationDate", { $0.receiptCreationDate }, { $0.receiptCreationDate = $1 }),
        .init("originalPurchaseDate", { $0.originalPurchaseDate }, { $0.originalPurchaseDate = $1 }),
        .init("originalApplicationVersion", { $0.originalApplicationVersion }, { $0.originalApplicationVersion = $1 }),
        .init("deviceVerification", { $0.deviceVerification }, { $0.deviceVerification = $1 }),
        .init("deviceVerificationNonce", { $0.deviceVerificationNonce }, { $0.deviceVerificationNonce = $1 }),
        .init("preorderDate", { $0.preorderDate }, { $0.preorderDate = $1 }),
        .init("appTransactionId", { $0.appTransactionID }, { $0.appTransactionID = $1 }),
        .init("originalPlatform", { $0.originalPlatform }, { $0.originalPlatform = $1 }),
        .init("signedDate", { $0.signedDate }, { $0.signedDate = $1 }),
    ])
}
