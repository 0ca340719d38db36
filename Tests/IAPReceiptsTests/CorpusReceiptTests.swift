import Foundation
import IAPReceipts
import IAPTestSupport
import IAPTrust
import Testing
import X509

/// Every receipt in the shared corpus decodes to the values its MANIFEST row gives and verifies against its root at
/// its creation date.
@Suite(.enabled(if: SharedTestData.isAvailable, "\(SharedTestData.skipMessage)"))
struct CorpusReceiptTests {
    struct Expected: Sendable, CustomStringConvertible {
        let file: String
        let environment: String
        let bundleID: String
        let appVersion: String
        let originalAppVersion: String?
        let created: String
        let purchases: Int
        let withExpiry: Int
        let xcode: Bool
        let digest: String
        var description: String { file }
    }

    static let receipts: [Expected] = [
        .init(
            file: "apple-xcode-app-receipt-empty.der", environment: "Xcode",
            bundleID: "com.example.naturelab.backyardbirds.example", appVersion: "1", originalAppVersion: nil,
            created: "2023-10-19T01:18:54Z", purchases: 0, withExpiry: 0, xcode: true, digest: "SHA-256"),
        .init(
            file: "apple-xcode-app-receipt-with-transaction.der", environment: "Xcode",
            bundleID: "com.example.naturelab.backyardbirds.example", appVersion: "1", originalAppVersion: nil,
            created: "2023-10-19T01:45:40Z", purchases: 1, withExpiry: 1, xcode: true, digest: "SHA-256"),
        .init(
            file: "kvitto-receipt.der", environment: "Production", bundleID: "com.apple.dt.Xcode",
            appVersion: "7.0", originalAppVersion: "4.3", created: "2015-09-22T08:55:28Z", purchases: 0,
            withExpiry: 0, xcode: false, digest: "SHA-1"),
        .init(
            file: "kvitto-sandboxReceipt.der", environment: "ProductionSandbox", bundleID: "com.cocoanetics.EmmiView",
            appVersion: "246", originalAppVersion: "1.0", created: "2015-05-25T15:22:10Z", purchases: 6,
            withExpiry: 6, xcode: false, digest: "SHA-1"),
        .init(
            file: "revenuecat-base64encodedreceiptsample1.der", environment: "ProductionSandbox",
            bundleID: "com.revenuecat.sampleapp", appVersion: "4", originalAppVersion: "1.0",
            created: "2020-07-22T17:39:08Z", purchases: 9, withExpiry: 9, xcode: false, digest: "SHA-1"),
        .init(
            file: "tamtamchik-validReceipt.der", environment: "ProductionSandbox", bundleID: "com.mbaasy.ios.demo",
            appVersion: "1", originalAppVersion: "1.0", created: "2015-08-13T07:50:46Z", purchases: 7,
            withExpiry: 6, xcode: false, digest: "SHA-1"),
        .init(
            file: "tamtamchik-validReceipt2.der", environment: "ProductionSandbox", bundleID: "com.belive.app.ios",
            appVersion: "3", originalAppVersion: "1.0", created: "2018-11-13T16:46:31Z", purchases: 1,
            withExpiry: 0, xcode: false, digest: "SHA-1"),
        .init(
            file: "tpinapp-hist-receipt-crash-macos-sandbox.der", environment: "ProductionSandbox",
            bundleID: "de.holtwick.mac.PDFify", appVersion: "3.3.1b4", originalAppVersion: "1.0",
            created: "2020-10-30T10:54:04Z", purchases: 0, withExpiry: 0, xcode: false, digest: "SHA-1"),
        .init(
            file: "tpinapp-hist-receipt-no-orig-purchase-date-xcode.der", environment: "Xcode",
            bundleID: "com.nutcall.alert", appVersion: "34", originalAppVersion: nil,
            created: "2021-04-03T19:38:45Z", purchases: 1, withExpiry: 1, xcode: true, digest: "SHA-256"),
        .init(
            file: "tpinapp-receipt-sandbox-legacy.der", environment: "ProductionSandbox",
            bundleID: "com.nutcall.alert", appVersion: "32", originalAppVersion: "1.0",
            created: "2020-05-06T18:28:49Z", purchases: 187, withExpiry: 187, xcode: false, digest: "SHA-1"),
        .init(
            file: "tpinapp-receipt-xcode.der", environment: "Xcode", bundleID: "net.zachariadis.cyclemaps",
            appVersion: "31.10.0", originalAppVersion: nil, created: "2020-07-22T17:33:15Z", purchases: 1,
            withExpiry: 1, xcode: true, digest: "SHA-256"),
    ]

    static func verifier(xcode: Bool, configuration: ReceiptVerifier.Configuration = .init()) throws
        -> ReceiptVerifier
    {
        if xcode {
            let certificate = try TrustAnchorLoader.certificates(
                contentsOfFile: SharedTestData.path("certs/storekit-testing/StoreKitTestCertificate.cer"))
            return ReceiptVerifier(
                trustStore: TrustStore(roots: []).insecurelyAcceptingXcodeTestCertificates(certificate),
                configuration: configuration)
        }
        let roots = try TrustAnchorLoader.certificates(
            contentsOfFile: SharedTestData.path("certs/apple-official/AppleIncRootCertificate.cer"))
        return ReceiptVerifier(trustStore: TrustStore(roots: roots), configuration: configuration)
    }

    @Test("decodes to the MANIFEST values and verifies at its creation date", arguments: receipts)
    func decodesAndVerifies(_ expected: Expected) async throws {
        let bytes = try SharedTestData.bytes("receipts/\(expected.file)")
        let signed = try SignedReceipt(bytes: bytes)
        let receipt = signed.receipt
        #expect(receipt.environment?.rawValue == expected.environment)
        #expect(receipt.bundleID == expected.bundleID)
        #expect(receipt.appVersion == expected.appVersion)
        #expect(receipt.originalAppVersion == expected.originalAppVersion)
        #expect(receipt.creationDate.map(ReceiptDate.format) == expected.created)
        #expect(receipt.inAppPurchases.count == expected.purchases)
        #expect(receipt.inAppPurchases.filter { $0.expiresDate != nil }.count == expected.withExpiry)

        let verdict = try await Self.verifier(
            xcode: expected.xcode,
            configuration: .init(bundleID: expected.bundleID, appVersion: expected.appVersion)
        ).verify(signed, at: TestPKI.signingTime)
        #expect(verdict.failures.isEmpty, "\(verdict.failures)")
        #expect(verdict.chainKind == (expected.xcode ? .xcodeTest : .apple))
        #expect(verdict.digestAlgorithm == expected.digest)
        #expect(verdict.chain.count == (expected.xcode ? 1 : 3))
        if expected.xcode { #expect(verdict.environment == .xcode) }
    }

    @Test func tamtamchikValues() throws {
        let receipt = try SignedReceipt(bytes: try SharedTestData.bytes("receipts/tamtamchik-validReceipt.der")).receipt
        #expect(receipt.opaqueValue.hexString == "c4dd4054b0b61a07beb585f6a842e048")
        #expect(receipt.sha1Hash.hexString == "2e0a115beac1c57023a5bd37349955a9ad99db4d")
        #expect(receipt.originalPurchaseDate.map(ReceiptDate.format) == "2013-08-01T07:00:00Z")
        #expect(receipt.inAppPurchases.first?.transactionID == "1000000166865231")
        #expect(receipt.inAppPurchases.last?.transactionID == "1000000166967782")
        #expect(
            Set(receipt.inAppPurchases.compactMap(\.originalTransactionID)) == ["1000000166865231", "1000000166965150"])
        #expect(receipt.inAppPurchases.last?.productID == "monthly")
        // web_order_line_item_id raw 0207038d7ea69472c9
        #expect(receipt.inAppPurchases.last?.webOrderLineItemID?.bytes == [0x03, 0x8d, 0x7e, 0xa6, 0x94, 0x72, 0xc9])

        let second = try SignedReceipt(bytes: try SharedTestData.bytes("receipts/tamtamchik-validReceipt2.der")).receipt
        #expect(second.opaqueValue.hexString == "34e2349b0bd662e4ec127a6bfd10af24")
        #expect(second.sha1Hash.hexString == "27384ed414759313951ab084a902e4c2f52e64ff")
        #expect(second.inAppPurchases.map(\.productID) == ["test2"])
        #expect(second.inAppPurchases.first?.transactionID == "1000000472106082")
        #expect(second.inAppPurchases.first?.webOrderLineItemID == ReceiptInteger(0))
        #expect(second.inAppPurchases.first?.expiresDate == nil)
    }

    @Test func revenueCatValues() throws {
        let receipt = try SignedReceipt(
            bytes: try SharedTestData.bytes("receipts/revenuecat-base64encodedreceiptsample1.der")
        ).receipt
        #expect(receipt.creationDate?.timeIntervalSince1970 == 1_595_439_548)
        #expect(receipt.expirationDate == nil)
        let first = receipt.inAppPurchases[0]
        #expect(first.productID == "com.revenuecat.monthly_4.99.1_week_intro")
        #expect(first.transactionID == "1000000692879214")
        #expect(first.originalTransactionID == "1000000692878476")
        #expect(first.purchaseDate?.timeIntervalSince1970 == 1_594_755_400)
        #expect(first.originalPurchaseDate?.timeIntervalSince1970 == 1_594_755_207)
        #expect(first.expiresDate?.timeIntervalSince1970 == 1_594_755_700)
        #expect(first.webOrderLineItemID?.description == "1000000054042695")
        #expect(!first.isTrialPeriod && !first.isInIntroOfferPeriod)
        #expect(receipt.inAppPurchases[7].productID == "com.revenuecat.annual_39.99.2_week_intro")
        #expect(receipt.inAppPurchases[7].transactionID == "1000000696553650")
        #expect(receipt.inAppPurchases[7].expiresDate?.timeIntervalSince1970 == 1_595_443_146)
        #expect(receipt.inAppPurchases[8].transactionID == "1000000692878476")
        #expect(receipt.inAppPurchases[8].expiresDate?.timeIntervalSince1970 == 1_594_755_386)
        #expect(receipt.inAppPurchases.contains { $0.isTrialPeriod })
    }

    @Test func kvittoValues() throws {
        let receipt = try SignedReceipt(bytes: try SharedTestData.bytes("receipts/kvitto-receipt.der"))
        #expect(receipt.signedData.content?.count == 505)
        #expect(receipt.receipt.opaqueValue.count == 16)
        #expect(receipt.receipt.sha1Hash.count == 20)
        #expect(receipt.receipt.expirationDate == nil)
        let sandbox = try SignedReceipt(bytes: try SharedTestData.bytes("receipts/kvitto-sandboxReceipt.der"))
        #expect(sandbox.signedData.content?.count == 2833)
        let first = try #require(sandbox.receipt.inAppPurchases.first)
        #expect(first.productID == "com.cocoanetics.EmmiView.OneMonth")
        #expect(first.transactionID == "1000000156449405")
        #expect(first.originalTransactionID == "1000000156444989")
        #expect(first.expiresDate != nil && first.webOrderLineItemID != nil && first.cancellationDate == nil)
    }

    @Test func xcodeReceiptValues() throws {
        let receipt = try SignedReceipt(
            bytes: try SharedTestData.bytes("receipts/apple-xcode-app-receipt-with-transaction.der")
        ).receipt
        #expect(receipt.inAppPurchases.first?.productID == "pass.premium")
        #expect(receipt.inAppPurchases.first?.transactionID == "0")
        #expect(receipt.inAppPurchases.first?.isInIntroOfferPeriod == true)
        #expect(receipt.expirationDate.map(ReceiptDate.format) == "4001-01-01T00:00:00Z")
        #expect(receipt.opaqueValue.count == 8)
        let noOriginal = try SignedReceipt(
            bytes: try SharedTestData.bytes("receipts/tpinapp-hist-receipt-no-orig-purchase-date-xcode.der")
        ).receipt
        #expect(noOriginal.inAppPurchases.first?.originalPurchaseDate == nil)
    }

    @Test(
        "Apple's DER payloads re-serialize to the same bytes",
        arguments: [
            "kvitto-receipt.der", "kvitto-sandboxReceipt.der", "revenuecat-base64encodedreceiptsample1.der",
            "tamtamchik-validReceipt.der", "tpinapp-receipt-sandbox-legacy.der",
        ])
    func wireRoundTrip(file: String) throws {
        let bytes = try SharedTestData.bytes("receipts/\(file)")
        let signed = try SignedReceipt(bytes: bytes)
        #expect(try signed.derBytes() == bytes)
        let content = try #require(signed.signedData.content)
        #expect(try ReceiptAttribute.serializeSet(ReceiptAttribute.parseSet(content[...])) == content)
    }

    @Test func oldReceiptFailsWhenItsChainIsValidatedNow() async throws {
        let bytes = try SharedTestData.bytes("receipts/tpinapp-receipt-sandbox-legacy.der")
        let verifier = try Self.verifier(xcode: false)
        let atCreation = try await verifier.verify(bytes, at: TestPKI.signingTime)
        #expect(atCreation.isValid)
        let now = try await Self.verifier(xcode: false, configuration: .init(chainValidationTime: .verificationTime))
            .verify(bytes, at: TestPKI.signingTime)
        #expect(Set(now.failures.map(\.code)) == [.certificateExpired])
    }

    @Test func xcodeReceiptIsRefusedUnlessAllowed() async throws {
        let bytes = try SharedTestData.bytes("receipts/apple-xcode-app-receipt-with-transaction.der")
        let verdict = try await Self.verifier(xcode: false).verify(
            bytes, at: TestPKI.signingTime)
        #expect(verdict.failures.map(\.code) == [.xcodeSignedNotAllowed])
    }

    @Test func productionReceiptAgainstTheWrongRoot() async throws {
        let g3 = try TrustAnchorLoader.certificates(
            contentsOfFile: SharedTestData.path("certs/apple-official/AppleRootCA-G3.cer"))
        let verifier = ReceiptVerifier(trustStore: TrustStore(roots: g3))
        let verdict = try await verifier.verify(
            try SharedTestData.bytes("receipts/kvitto-receipt.der"),
            at: TestPKI.signingTime)
        #expect(verdict.failures.map(\.code) == [.chainUntrusted])
    }
}
