// The payload models of Apple's signed data (APP_STORE_FORMATS.md sections 2 and 3). Each lists its known fields once,
// in its field table; decoding and encoding both go through that table.

/// The decoded payload of a signed real-time request from the App Store (retention messaging).
public struct RealtimeRequestPayload: PayloadModel, JSONFieldValue {
    /// The subscription's original transaction.
    public var originalTransactionID: String?
    /// The app's Apple id.
    public var appAppleID: Int64?
    /// The product.
    public var productID: String?
    /// The customer's locale, e.g. en-US.
    public var userLocale: String?
    /// The request's identifier.
    public var requestIdentifier: String?
    /// The environment.
    public var environment: AppStoreEnvironment?
    /// When the App Store signed the request.
    public var signedDate: EpochMilliseconds?
    /// Members this model has no property for, in their original order.
    public var additionalFields = JSONObject()

    public init() {}

    public init(jsonBytes: some Collection<UInt8>) throws(SignedDataParsingError) {
        self = try Self.decodeJSON(jsonBytes)
    }

    public static let fieldTable = PayloadFieldTable<RealtimeRequestPayload>([
        .init("originalTransactionId", { $0.originalTransactionID }, { $0.originalTransactionID = $1 }),
        .init("appAppleId", { $0.appAppleID }, { $0.appAppleID = $1 }),
        .init("productId", { $0.productID }, { $0.productID = $1 }),
        .init("userLocale", { $0.userLocale }, { $0.userLocale = $1 }),
        .init("requestIdentifier", { $0.requestIdentifier }, { $0.requestIdentifier = $1 }),
        .init("environment", { $0.environment }, { $0.environment = $1 }),
        .init("signedDate", { $0.signedDate }, { $0.signedDate = $1 }),
    ])
}
