import Foundation
import IAPReceipts
import IAPTestSupport
import IAPTrust
import Testing

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
        .init(file: "apple-xcode-app-receipt-empty.der", environment: "Xcode",
              bundleID: "com.example.naturelab.backyardbirds.example", appVersion: "1", originalAppVersion: nil,
              created: "2023-10-19T01:18:54Z", purchases: 0, withExpiry: 0, xcode: true, digest: "SHA-256"),
        .init(file: "apple-xcode-app-receipt-with-transaction.der", environment: "Xcode",
              bundleID: "com.example.naturelab.backyardbirds.example", appVersion: "1", originalAppVersion: nil,
              created: "2023-10-19T01:45:40Z", purchases: 1, withExpiry: 1, xcode: true, digest: "SHA-256"),
        .init(file: "kvitto-receipt.der", environment: "Production", bundleID: "com.apple.dt.Xcode",
              appVersion: "7.0", originalAppVersion: "4.3", created: "2015-09-22T08:55:28Z", purchases: 0,
              withExpiry: 0, xcode: false, digest: "SHA-1"),
        .init(file: "kvitto-sandboxReceipt.der", environment: "ProductionSandbox", bundleID: "com.cocoanetics.EmmiView",
              appVersion: "246", originalAppVersion: "1.0", created: "2015-05-25T15:22:10Z", purchases: 6,
              withExpiry: 6, xcode: false, digest: "SHA-1"),
        .init(file: "revenuecat-base64encodedreceiptsample1.der", environment: "ProductionSandbox",
              bundleID: "com.revenuecat.sampleapp", appVersion: "4", originalAppVersion: "1.0",
              created: "2020-07-22T17:39:08Z", purchases: 9, withExpiry: 9, xcode: false, digest: "SHA-1"),
        .init(file: "tamtamchik-validReceipt.der", environment: "ProductionSandbox", bundleID: "com.mbaasy.ios.demo",
              appVersion: "1", originalAppVersion: "1.0", created: "2015-08-13T07:50:46Z", purchases: 7,
              withExpiry: 6, xcode: false, digest: "SHA-1"),
        .init(file: "tamtamchik-validReceipt2.der", environment: "ProductionSandbox", bundleID: "com.belive.app.ios",
              appVersion: "3", originalAppVersion: "1.0", created: "2018-11-13T16:46:31Z", purchases: 1,
              withExpiry: 0, xcode: false, digest: "SHA-1"),
        .init(file: "tpinapp-hist-receipt-crash-macos-sandbox.der", environment: "ProductionSandbox",
              bundleID: "de.holtwick.mac.PDFify", appVersion: "3.3.1b4", originalAppVersion: "1.0",
              created: "2020-10-30T10:54:04Z", purchases: 0, withExpiry: 0, xcode: false, digest: "SHA-1"),
        .init(file: "tpinapp-hist-receipt-no-orig-purchase-date-xcode.der", environment: "Xcode",
              bundleID: "com.nutcall.alert", appVersion: "34", originalAppVersion: nil,
              created: "2021-04-03T19:38:45Z", purchases: 1, withExpiry: 1, xcode: true, digest: "SHA-256"),
        .init(file: "tpinapp-receipt-sandbox-legacy.der", environment: "ProductionSandbox",
              bundleID: "com.nutcall.alert", appVersion: "32", originalAppVersion: "1.0",
              created: "2020-05-06T18:28:49Z", purchases: 187, withExpiry: 187, xcode: false, digest: "SHA-1"),
        .init(file: "tpinapp-receipt-xcode.der", environment: "Xcode", bundleID: "net.zachariadis.cyclemaps",
              appVersion: "31.10.0", originalAppVersion: nil, created: "2020-07-22T17:33:15Z", purchases: 1,
              withExpiry: 1, xcode: true, digest: "SHA-256"),
    ]

    static func verifier(xcode: Bool) throws -> ReceiptVerifier {
        if xcode {
            let certificate = try TrustAnchorLoader.certificates(
                contentsOfFile: SharedTestData.path("certs/storekit-testing/StoreKitTestCertificate.cer"))
            return ReceiptVerifier(trustStore: TrustStore(roots: []).insecurelyAcceptingXcodeTestCertificates(certificate))
        }
        let roots = try TrustAnchorLoader.certificates(
            contentsOfFile: SharedTestData.path("certs/apple-official/AppleIncRootCertificate.cer"))
        return ReceiptVerifier(trustStore: TrustStore(roots: roots))
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

        let verdict = try await Self.verifier(xcode: expected.xcode).verify(
            signed, policy: ReceiptVerificationPolicy(now: TestPKI.signingTime, bundleID: expected.bundleID,
                                                      appVersion: expected.appVersion))
        #expect(verdict.failures.isEmpty, "\(verdict.failures)")
        #expect(verdict.chainKind == (expected.xcode ? .xcodeTest : .apple))
        #expect(verdict.digestAlgorithm == expected.digest)
        #expect(verdict.chain.count == (expected.xcode ? 1 : 3))
        if expected.xcode { #expect(verdict.environment == .xcode) }
    }
}
