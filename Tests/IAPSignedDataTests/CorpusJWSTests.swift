import Foundation
import IAPSignedData
import IAPTestSupport
import IAPTrust
import Testing
import X509

/// Every JWS in the shared corpus decodes and verifies as its MANIFEST row says, against the right root.
@Suite(.enabled(if: SharedTestData.isAvailable, "\(SharedTestData.skipMessage)"))
struct CorpusJWSTests {
    static func jws(_ name: String) throws -> String {
        String(decoding: try SharedTestData.bytes("jws/\(name)"), as: UTF8.self)
    }

    static func root(_ name: String) throws -> [Certificate] {
        try TrustAnchorLoader.certificates(contentsOfFile: SharedTestData.path("certs/\(name)"))
    }

    static func verifier(
        root: String, bundleID: String, appAppleID: Int64? = nil, environment: AppStoreEnvironment,
        allowXcode: Bool = false
    ) throws -> SignedDataVerifier {
        let roots = try Self.root(root)
        var store = TrustStore(roots: roots)
        if allowXcode { store = store.insecurelyAcceptingXcodeTestCertificates(roots) }
        return try SignedDataVerifier(
            trustStore: store,
            configuration: .init(bundleID: bundleID, appAppleID: appAppleID, environments: [environment]))
    }

    static let testCA = "test-apple-lib/testCA.der"
    static let xcodeCertificate = "storekit-testing/StoreKitTestingInXcode-jws-x5c-from-applelib.der"

    @Test func realAppleNotificationVerifiesAgainstRootG3() async throws {
        let verifier = try Self.verifier(
            root: "apple-official/AppleRootCA-G3.cer", bundleID: "com.Abilities", environment: .sandbox)
        let verdict = try await verifier.verifyNotification(try Self.jws("aporat-test-notification-signedPayload.jws"))
        #expect(verdict.isValid, "\(verdict.failures)")
        #expect(verdict.chainKind == .apple)
        #expect(verdict.chain.map { $0.subject.description }.last?.contains("Apple Root CA - G3") == true)
        let notification = try #require(verdict.verifiedPayload)
        #expect(notification.notificationType == .test)
        #expect(notification.notificationUUID == "5e09dcfc-205e-4ea1-9883-96676f394992")
        #expect(notification.signedDate?.wholeMilliseconds == 1_662_122_492_884)
        #expect(notification.data?.bundleID == "com.Abilities")
        #expect(notification.data?.environment == .sandbox)
        #expect(notification.version == "2.0")
    }

    @Test func realAppleNotificationFailsAgainstAnotherRoot() async throws {
        let verifier = try Self.verifier(root: Self.testCA, bundleID: "com.Abilities", environment: .sandbox)
        let verdict = try await verifier.verifyNotification(try Self.jws("aporat-test-notification-signedPayload.jws"))
        #expect(verdict.failed(.chainUntrusted))
        #expect(verdict.verifiedPayload == nil)
    }

    @Test func realAppleNotificationInProductionVerifierFailsOnEnvironment() async throws {
        let verifier = try Self.verifier(
            root: "apple-official/AppleRootCA-G3.cer", bundleID: "com.Abilities", appAppleID: 1,
            environment: .production)
        let verdict = try await verifier.verifyNotification(try Self.jws("aporat-test-notification-signedPayload.jws"))
        #expect(verdict.failures.map(\.code) == [.appAppleIDMismatch, .environmentMismatch])
    }

    @Test func appleMockTransactionVerifiesAgainstTestCA() async throws {
        let verifier = try Self.verifier(root: Self.testCA, bundleID: "com.example", environment: .sandbox)
        let verdict = try await verifier.verifyTransaction(try Self.jws("applelib-mock-transactionInfo.jws"))
        #expect(verdict.isValid, "\(verdict.failures)")
        #expect(verdict.verifiedPayload?.bundleID == "com.example")
        #expect(verdict.verifiedPayload?.signedDate?.wholeMilliseconds == 1_672_956_154_000)
    }

    @Test func appleMockTransactionChecksBundleAndEnvironment() async throws {
        let wrongBundle = try Self.verifier(root: Self.testCA, bundleID: "com.example.other", environment: .sandbox)
        let jws = try Self.jws("applelib-mock-transactionInfo.jws")
        #expect(try await wrongBundle.verifyTransaction(jws).failures.map(\.code) == [.bundleIDMismatch])
        let production = try Self.verifier(
            root: Self.testCA, bundleID: "com.example", appAppleID: 1234, environment: .production)
        #expect(try await production.verifyTransaction(jws).failures.map(\.code) == [.environmentMismatch])
    }

    @Test func appleMockRenewalInfoVerifiesAndSaysBundleIsUnchecked() async throws {
        let verifier = try Self.verifier(root: Self.testCA, bundleID: "com.example", environment: .sandbox)
        let verdict = try await verifier.verifyRenewalInfo(try Self.jws("applelib-mock-renewalInfo.jws"))
        #expect(verdict.isValid, "\(verdict.failures)")
        #expect(verdict.skipped(.bundleID))
        #expect(verdict.verifiedPayload?.environment == .sandbox)
    }

    @Test func appleMockTestNotificationChecksAppAppleID() async throws {
        let jws = try Self.jws("applelib-mock-testNotification.jws")
        let right = try Self.verifier(
            root: Self.testCA, bundleID: "com.example", appAppleID: 1234, environment: .sandbox)
        let verdict = try await right.verifyNotification(jws)
        #expect(verdict.isValid, "\(verdict.failures)")
        #expect(verdict.verifiedPayload?.notificationType == .test)
        #expect(verdict.verifiedPayload?.data?.appAppleID == 1234)
        let wrong = try Self.verifier(
            root: Self.testCA, bundleID: "com.example", appAppleID: 1235, environment: .sandbox)
        #expect(try await wrong.verifyNotification(jws).failures.map(\.code) == [.appAppleIDMismatch])
    }

    @Test func appleMockWrongBundleIDIsRefused() async throws {
        let verifier = try Self.verifier(root: Self.testCA, bundleID: "com.example", environment: .sandbox)
        let verdict = try await verifier.verifyNotification(try Self.jws("applelib-mock-wrongBundleId.jws"))
        #expect(!verdict.isValid)
        #expect(verdict.failed(.bundleIDMismatch))
        #expect(verdict.payload?.data?.bundleID == "com.example.wrong")
    }

    @Test func appleMockWithoutX5CIsRefused() async throws {
        let verifier = try Self.verifier(root: Self.testCA, bundleID: "com.example", environment: .sandbox)
        let verdict = try await verifier.verifyNotification(try Self.jws("applelib-mock-missingX5CHeaderClaim.jws"))
        #expect(verdict.failed(.certificateChainMissing))
        #expect(!verdict.isValid)
    }

    @Test func appleMockChainDiffersFromTestCAInBytesButNotInKey() async throws {
        // MANIFEST: x5c[2] is not testCA.der, but has its name and key; the chain must end at the configured root.
        let jws = try CompactJWS(try Self.jws("applelib-mock-transactionInfo.jws"))
        let presentedRoot = try #require(jws.header.certificateChain?.last)
        let testCA = try SharedTestData.bytes("certs/\(Self.testCA)")
        #expect(presentedRoot != testCA)
        let verifier = try Self.verifier(root: Self.testCA, bundleID: "com.example", environment: .sandbox)
        let verdict = try await verifier.verifyTransaction(try Self.jws("applelib-mock-transactionInfo.jws"))
        let validatedRoot = try #require(verdict.chain.last)
        #expect(validatedRoot == (try Self.root(Self.testCA)).first)
    }

    @Test(arguments: [
        "applelib-xcode-signed-transaction.jws", "applelib-xcode-signed-renewal-info.jws",
        "applelib-xcode-signed-app-transaction.jws",
    ])
    func xcodeDocumentsVerifyOnlyWithXcodeAllowed(file: String) async throws {
        let jws = try Self.jws(file)
        let bundle = "com.example.naturelab.backyardbirds.example"
        let allowed = try Self.verifier(
            root: Self.xcodeCertificate, bundleID: bundle, environment: .xcode, allowXcode: true)
        let verdict = try await allowed.verify(jws)
        #expect(verdict.isValid, "\(verdict.failures)")
        #expect(verdict.chainKind == .xcodeTest)

        let notAllowed = try Self.verifier(root: Self.xcodeCertificate, bundleID: bundle, environment: .xcode)
        #expect(try await notAllowed.verify(jws).failed(.xcodeSignedNotAllowed))

        let production = try Self.verifier(
            root: "apple-official/AppleRootCA-G3.cer", bundleID: bundle, appAppleID: 1, environment: .production)
        let refused = try await production.verify(jws)
        #expect(refused.failed(.xcodeSignedNotAllowed))
        #expect(refused.failed(.environmentMismatch))

        // Even a Production verifier whose store lists the Xcode certificate refuses Xcode-signed data.
        let careless = try Self.verifier(
            root: Self.xcodeCertificate, bundleID: bundle, appAppleID: 1, environment: .production, allowXcode: true)
        #expect(try await careless.verify(jws).failed(.xcodeSignedNotAllowed))
    }

    @Test func xcodeTransactionHasTheManifestValues() throws {
        let jws = try CompactJWS(try Self.jws("applelib-xcode-signed-transaction.jws"))
        #expect(jws.header.keyID == "Apple_Xcode_Key")
        #expect(jws.header.certificateChain?.count == 1)
        let transaction = try jws.decodePayload(as: TransactionPayload.self)
        #expect(transaction.transactionID == "0")
        #expect(transaction.originalTransactionID == "0")
        #expect(transaction.bundleID == "com.example.naturelab.backyardbirds.example")
        #expect(transaction.productID == "pass.premium")
        #expect(transaction.subscriptionGroupIdentifier == "6F3A93AB")
        #expect(transaction.purchaseDate?.wholeMilliseconds == 1_697_679_936_049)
        #expect(transaction.purchaseDate?.millisecondsSince1970 == 1_697_679_936_049.7297)
        #expect(transaction.expiresDate?.wholeMilliseconds == 1_700_358_336_049)
        #expect(transaction.signedDate?.wholeMilliseconds == 1_697_679_936_056)
        #expect(transaction.quantity == 1)
        #expect(transaction.type == .autoRenewable)
        #expect(transaction.inAppOwnershipType == .purchased)
        #expect(transaction.offerType == .introductory)
        #expect(transaction.storefront == "USA")
        #expect(transaction.storefrontID == "143441")
        #expect(transaction.transactionReason == .purchase)
        #expect(transaction.environment == .xcode)
        #expect(transaction.isUpgraded == false)
    }

    @Test func xcodeRenewalInfoAndAppTransactionHaveTheManifestValues() throws {
        let renewal = try CompactJWS(try Self.jws("applelib-xcode-signed-renewal-info.jws"))
            .decodePayload(as: RenewalInfoPayload.self)
        #expect(renewal.originalTransactionID == "0")
        #expect(renewal.autoRenewProductID == "pass.premium")
        #expect(renewal.productID == "pass.premium")
        #expect(renewal.autoRenewStatus == .on)
        #expect(renewal.signedDate?.wholeMilliseconds == 1_697_679_936_711)
        #expect(renewal.recentSubscriptionStartDate?.wholeMilliseconds == 1_697_679_936_049)
        #expect(renewal.renewalDate?.wholeMilliseconds == 1_700_358_336_049)
        #expect(renewal.environment == .xcode)

        let app = try CompactJWS(try Self.jws("applelib-xcode-signed-app-transaction.jws"))
            .decodePayload(as: AppTransactionPayload.self)
        #expect(app.appAppleID == nil)
        #expect(app.bundleID == "com.example.naturelab.backyardbirds.example")
        #expect(app.applicationVersion == "1")
        #expect(app.originalApplicationVersion == "1")
        #expect(app.originalPurchaseDate?.wholeMilliseconds == -62_135_769_600_000)
        #expect(app.deviceVerification == "cYUsXc53EbYc0pOeXG5d6/31LGHeVGf84sqSN0OrJi5u/j2H89WWKgS8N0hMsMlf")
        #expect(app.deviceVerificationNonce == "48c8b92d-ce0d-4229-bedf-e61b4f9cfc92")
        #expect(app.receiptType == .xcode)
        #expect(app.additionalFields["requestDate"] != nil)
    }

    @Test func everyCorpusFileDecodesAndReencodesItsPayload() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: SharedTestData.path("jws"))
        #expect(files.count == 9)
        for file in files {
            let jws = try CompactJWS(try Self.jws(file))
            let kind = try #require(SignedPayloadKind.detect(payload: jws.payload), "\(file)")
            let original = try JSONValue(jsonBytes: jws.payload)
            let decoded: JSONValue =
                switch kind {
                case .transaction: try jws.decodePayload(as: TransactionPayload.self).json
                case .renewalInfo: try jws.decodePayload(as: RenewalInfoPayload.self).json
                case .appTransaction: try jws.decodePayload(as: AppTransactionPayload.self).json
                case .notification: try jws.decodePayload(as: NotificationPayload.self).json
                }
            #expect(decoded.isEquivalent(to: original), "\(file)")
        }
    }
}
