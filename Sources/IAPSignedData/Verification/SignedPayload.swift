/// Any of Apple's signed document payloads, for callers that do not know in advance which one they hold.
public enum SignedPayload: Sendable, Hashable {
    case transaction(TransactionPayload)
    case renewalInfo(RenewalInfoPayload)
    case appTransaction(AppTransactionPayload)
    case notification(NotificationPayload)

    /// Which kind of document this is.
    public var kind: SignedPayloadKind {
        switch self {
        case .transaction: .transaction
        case .renewalInfo: .renewalInfo
        case .appTransaction: .appTransaction
        case .notification: .notification
        }
    }

    /// The bundle id the document names; nil for renewal information, which names none.
    public var bundleID: String? {
        switch self {
        case .transaction(let payload): payload.claimedBundleID ?? nil
        case .renewalInfo(let payload): payload.claimedBundleID ?? nil
        case .appTransaction(let payload): payload.claimedBundleID ?? nil
        case .notification(let payload): payload.claimedBundleID ?? nil
        }
    }

    /// The payload as JSON.
    public var json: JSONValue {
        switch self {
        case .transaction(let payload): payload.json
        case .renewalInfo(let payload): payload.json
        case .appTransaction(let payload): payload.json
        case .notification(let payload): payload.json
        }
    }
}

/// The kinds of signed documents the App Store hands out.
public enum SignedPayloadKind: String, Sendable, Hashable, CaseIterable {
    case transaction, renewalInfo, appTransaction, notification

    /// Guesses the kind from the payload's top-level keys: `notificationType` means a notification, `receiptType` an
    /// app transaction, `transactionId` or `bundleId` a transaction, and renewal fields renewal information.
    public static func detect(payload: [UInt8]) -> SignedPayloadKind? {
        guard let value = try? JSONScanner.read(payload, { scanner in try scanner.value() }),
            case .object(let object) = value
        else { return nil }
        let keys = Set(object.keys)
        if keys.contains("notificationType") || keys.contains("notificationUUID") { return .notification }
        if keys.contains("receiptType") { return .appTransaction }
        if keys.contains("transactionId") || keys.contains("bundleId") { return .transaction }
        let renewalKeys: Set = [
            "autoRenewStatus", "autoRenewProductId", "renewalDate", "expirationIntent", "originalTransactionId",
            "environment",
        ]
        return keys.isDisjoint(with: renewalKeys) ? nil : .renewalInfo
    }
}

/// What a payload claims about itself that a verifier checks against its configuration.
protocol VerifiablePayload: PayloadModel {
    /// The date the chain is validated at.
    var chainValidationDate: EpochMilliseconds? { get }
    /// The bundle id the payload names; nil for kinds that carry none (renewal information).
    var claimedBundleID: String?? { get }
    /// The app Apple id the payload names; `.none` for kinds that carry none (transactions, renewal information).
    var claimedAppAppleID: Int64?? { get }
    /// The environment the payload names.
    var claimedEnvironment: AppStoreEnvironment? { get }
    /// Members only other kinds of document carry: a payload holding one is another kind's, refused as
    /// `wrongPayloadType` (every field of renewal information is optional, so a transaction would read as one).
    static var foreignKeys: [String] { get }
}

extension VerifiablePayload {
    static var foreignKeys: [String] { [] }
}

extension TransactionPayload: VerifiablePayload {
    var chainValidationDate: EpochMilliseconds? { signedDate }
    var claimedBundleID: String?? { .some(bundleID) }
    var claimedAppAppleID: Int64?? { .none }
    var claimedEnvironment: AppStoreEnvironment? { environment }
}

extension RenewalInfoPayload: VerifiablePayload {
    /// A transaction's, an app transaction's, a notification's and a retention-messaging request's own members.
    static var foreignKeys: [String] {
        [
            "transactionId", "bundleId", "receiptType", "notificationType", "notificationUUID", "appAppleId",
            "requestIdentifier",
        ]
    }
    var chainValidationDate: EpochMilliseconds? { signedDate }
    var claimedBundleID: String?? { .none }
    var claimedAppAppleID: Int64?? { .none }
    var claimedEnvironment: AppStoreEnvironment? { environment }
}

extension AppTransactionPayload: VerifiablePayload {
    /// App transactions are validated at their signed date when they have one, else at their creation date.
    var chainValidationDate: EpochMilliseconds? { signedDate ?? receiptCreationDate }
    var claimedBundleID: String?? { .some(bundleID) }
    var claimedAppAppleID: Int64?? { .some(appAppleID) }
    var claimedEnvironment: AppStoreEnvironment? { receiptType }
}

extension NotificationPayload: VerifiablePayload {
    var chainValidationDate: EpochMilliseconds? { signedDate }
    var claimedBundleID: String?? {
        .some(data?.bundleID ?? summary?.bundleID ?? externalPurchaseToken?.bundleID ?? appData?.bundleID)
    }
    var claimedAppAppleID: Int64?? {
        .some(data?.appAppleID ?? summary?.appAppleID ?? externalPurchaseToken?.appAppleID ?? appData?.appAppleID)
    }
    /// External purchase tokens carry no environment: sandbox token ids start with "SANDBOX".
    var claimedEnvironment: AppStoreEnvironment? {
        if let environment = data?.environment ?? summary?.environment ?? appData?.environment { return environment }
        if let token = externalPurchaseToken?.externalPurchaseID {
            return token.hasPrefix("SANDBOX") ? .sandbox : .production
        }
        return nil
    }
}
