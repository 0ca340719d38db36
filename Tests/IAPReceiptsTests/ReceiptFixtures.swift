import Foundation
import IAPReceipts
import IAPTestSupport
import IAPTrust
import X509
import _CryptoExtras

/// Receipts built and signed in process with chains minted from the fixed test keys.
enum ReceiptFixtures {
    static let bundleID = "com.example.florist"
    static let appVersion = "42"
    static let deviceID = UUID(uuidString: "5E6F7A8B-1C2D-4E3F-9A0B-C1D2E3F4A5B6")!
    static let created = TestPKI.signingTime

    /// A sandbox receipt with a subscription, a consumable and a non-consumable; its hash matches ``deviceID``.
    static func receipt(expiration: Date? = nil) -> AppReceipt {
        var receipt = AppReceipt(
            environment: .productionSandbox,
            appItemID: ReceiptInteger(0),
            bundleID: bundleID,
            appVersion: appVersion,
            opaqueValue: [
                0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00,
            ],
            creationDate: created,
            inAppPurchases: [
                InAppPurchase(
                    productID: "com.example.florist.vip.gold", transactionID: "2000000000000001",
                    originalTransactionID: "2000000000000001", purchaseDate: created.addingTimeInterval(-86_400 * 30),
                    originalPurchaseDate: created.addingTimeInterval(-86_400 * 30),
                    productType: .autoRenewableSubscription, expiresDate: created.addingTimeInterval(86_400),
                    webOrderLineItemID: ReceiptInteger(decimal: "123456789012345678901234567890"),
                    isTrialPeriod: true),
                InAppPurchase(
                    quantity: 3, productID: "com.example.florist.plant-installation", transactionID: "2000000000000002",
                    originalTransactionID: "2000000000000002", purchaseDate: created.addingTimeInterval(-3600),
                    productType: .consumable, promotionalOfferID: "SPRING"),
                InAppPurchase(
                    productID: "com.example.florist.roses", transactionID: "2000000000000003",
                    purchaseDate: created.addingTimeInterval(-7200), productType: .nonConsumable,
                    cancellationDate: created.addingTimeInterval(-60),
                    unknownAttributes: [ReceiptAttribute(type: 1722, value: [0x0c, 0x02, 0x68, 0x69])]),
            ],
            originalPurchaseDate: Date(timeIntervalSince1970: 1_375_340_400),
            originalAppVersion: "1.0",
            expirationDate: expiration,
            unknownAttributes: [ReceiptAttribute(type: 25, version: 2, value: [0x02, 0x01, 0x07])]
        )
        receipt.sha1Hash = ReceiptVerifier.deviceHash(
            device: withUnsafeBytes(of: deviceID.uuid) { Array($0) }, receipt: receipt)
        return receipt
    }

    static var leafKey: _RSA.Signing.PrivateKey { try! _RSA.Signing.PrivateKey(pemRepresentation: TestKeys.leafPEM) }

    /// The DER bytes of `receipt` signed by `chain`'s leaf with the leaf key given.
    static func signed(
        _ receipt: AppReceipt = receipt(),
        chain: MintedChain = TestPKI.trusted,
        key: _RSA.Signing.PrivateKey = leafKey,
        digest: ReceiptSigner.Digest = .sha256,
        signingTime: Date? = nil
    ) throws -> [UInt8] {
        try ReceiptSigner(key: key, certificates: chain.certificates, digest: digest, signingTime: signingTime)
            .sign(receipt).derBytes()
    }

    /// A verifier trusting the test root, configured as `policy` says.
    static func verifier(roots: [Certificate] = [TestPKI.trusted.root], policy: ReceiptCheck = policy)
        -> ReceiptVerifier
    {
        ReceiptVerifier(trustStore: TrustStore(roots: roots), configuration: policy.configuration)
    }

    /// The expectations and inputs that every fixture receipt passes.
    static var policy: ReceiptCheck {
        ReceiptCheck(
            configuration: .init(bundleID: bundleID, appVersion: appVersion, environments: [.sandbox]), now: created,
            deviceIdentifier: ReceiptVerifier.deviceIdentifier(deviceID))
    }
}

/// A verifier's configuration with the inputs of one call (time, device), as the receipt tests vary them.
struct ReceiptCheck {
    var configuration: ReceiptVerifier.Configuration
    var now: Date
    var deviceIdentifier: [UInt8]? = nil

    init(configuration: ReceiptVerifier.Configuration = .init(), now: Date, deviceIdentifier: [UInt8]? = nil) {
        self.configuration = configuration
        self.now = now
        self.deviceIdentifier = deviceIdentifier
    }

    func checkingDevice(_ id: UUID) -> ReceiptCheck {
        var copy = self
        copy.deviceIdentifier = ReceiptVerifier.deviceIdentifier(id)
        return copy
    }
}

extension ReceiptVerifier {
    /// Verifies at the check's time and device; the check's configuration must be this verifier's.
    func verify(_ bytes: [UInt8], policy: ReceiptCheck) async throws(ReceiptParsingError) -> ReceiptVerdict {
        precondition(policy.configuration == configuration, "make the verifier with this check's configuration")
        return try await verify(bytes, at: policy.now, deviceIdentifier: policy.deviceIdentifier)
    }

    /// Verifies at the check's time and device; the check's configuration must be this verifier's.
    func verify(_ signed: SignedReceipt, policy: ReceiptCheck) async -> ReceiptVerdict {
        precondition(policy.configuration == configuration, "make the verifier with this check's configuration")
        return await verify(signed, at: policy.now, deviceIdentifier: policy.deviceIdentifier)
    }
}
