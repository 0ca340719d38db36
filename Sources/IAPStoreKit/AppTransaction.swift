public import Foundation
import IAPSignedData
import IAPStoreClient

/// StoreKit's `AppTransaction`: the signed record of the customer's purchase (or download) of the app itself.
public struct AppTransaction: Hashable, Sendable {
    public let bundleID: String
    public let appID: UInt64?
    public let appVersionID: UInt64?
    public let appVersion: String
    /// The version the customer first bought or downloaded (what a paid-to-free switch reads).
    public let originalAppVersion: String
    public let originalPurchaseDate: Date
    public let preorderDate: Date?
    public let environment: AppStore.Environment
    public let signedDate: Date
    public let appTransactionID: String
    public let deviceVerification: Data
    public let deviceVerificationNonce: UUID
    /// The payload's JSON, as signed.
    public let jsonRepresentation: Data
    let jws: String

    init?(_ payload: AppTransactionPayload, jws: String) {
        guard let bundleID = payload.bundleID, let purchased = payload.originalPurchaseDate?.date else { return nil }
        self.bundleID = bundleID
        appID = payload.appAppleID.flatMap(UInt64.init(exactly:))
        appVersionID = payload.versionExternalIdentifier.flatMap(UInt64.init(exactly:))
        appVersion = payload.applicationVersion ?? ""
        originalAppVersion = payload.originalApplicationVersion ?? ""
        originalPurchaseDate = purchased
        preorderDate = payload.preorderDate?.date
        environment = AppStore.Environment(rawValue: payload.receiptType?.rawValue ?? "Production")
        signedDate = payload.signedDate?.date ?? purchased
        appTransactionID = payload.appTransactionID ?? ""
        deviceVerification = payload.deviceVerification.flatMap { Data(base64Encoded: $0) } ?? Data()
        deviceVerificationNonce = payload.deviceVerificationNonce.flatMap(UUID.init(uuidString:)) ?? JWSParts.nilUUID
        jsonRepresentation = JWSParts.part(1, of: jws)
        self.jws = jws
    }

    public static func == (lhs: AppTransaction, rhs: AppTransaction) -> Bool { lhs.jws == rhs.jws }
    public func hash(into hasher: inout Hasher) { hasher.combine(jws) }

    /// The app transaction of this device, verified.
    public static var shared: VerificationResult<AppTransaction> {
        get async throws { try await refresh() }
    }

    /// Asks the store for the app transaction again (on a device: may ask the customer to sign in).
    public static func refresh() async throws -> VerificationResult<AppTransaction> {
        let session = try StoreKitSession.current()
        let jws: String
        do { jws = try await session.backend.appTransaction() } catch { throw StoreKitError(error) }
        guard let verdict = try? await session.verifier.verifyAppTransaction(jws), let payload = verdict.payload,
            let transaction = AppTransaction(payload, jws: jws)
        else { throw StoreKitError.unknown }
        return verdict.isValid ? .verified(transaction) : .unverified(transaction, .init(verdict.failures))
    }
}

extension VerificationResult where SignedType == AppTransaction {
    /// The signed document, as the App Store sent it.
    public var jwsRepresentation: String { unsafePayloadValue.jws }
    /// When the App Store signed it.
    public var signedDate: Date { unsafePayloadValue.signedDate }
    public var headerData: Data { JWSParts.part(0, of: jwsRepresentation) }
    public var payloadData: Data { JWSParts.part(1, of: jwsRepresentation) }
    public var signatureData: Data { JWSParts.part(2, of: jwsRepresentation) }
}
