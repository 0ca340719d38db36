import Crypto
import Foundation
import IAPSignedData
import IAPTestSupport
import IAPTrust
import SwiftASN1
import Testing
import X509

/// Every attack from SECURITY.md that applies to signed data is tried and refused with its code.
struct SignedDataAttackTests {
    let verifier = TestJWS.verifier()

    func sign(
        _ payload: some PayloadModel, chain: [Certificate] = TestJWS.trusted.certificates,
        key: P256.Signing.PrivateKey = TestJWS.leafKey
    ) -> String {
        try! TestJWS.signer(chain: chain, key: key).sign(payload)
    }

    /// A JWS with the given header members and the trusted chain, signed by the leaf key over whatever it says.
    func forge(header: [(String, JSONValue)], payload: some PayloadModel, signature: [UInt8]? = nil) -> String {
        let signer = JWSSigner(privateKey: TestJWS.leafKey, header: JSONObject(header))
        let jws = try! signer.sign(payload)
        guard let signature else { return jws }
        return jws.split(separator: ".").prefix(2).joined(separator: ".") + "." + Base64URL.encode(signature)
    }

    var x5c: JSONValue {
        let jws = try! CompactJWS(sign(TestJWS.transaction()))
        return jws.header.fields["x5c"]!
    }

    @Test func aGenuineTransactionIsValid() async throws {
        let verdict = try await verifier.verifyTransaction(sign(TestJWS.transaction()))
        #expect(verdict.isValid, "\(verdict.failures)")
        #expect(verdict.chainKind == .apple)
        #expect(verdict.chainValidationTime == TestPKI.signingTime)
        #expect(verdict.verifiedPayload == TestJWS.transaction())
    }

    // SECURITY 5: algorithm confusion.

    @Test func algNoneIsRefused() async throws {
        let jws = forge(header: [("alg", .string("none")), ("x5c", x5c)], payload: TestJWS.transaction())
        let unsigned = jws.split(separator: ".").prefix(2).joined(separator: ".") + "."
        // An empty signature part is not even a JWS to us; with a signature it is an algorithm failure.
        await #expect(throws: SignedDataParsingError.self) { try await verifier.verifyTransaction(unsigned) }
        let verdict = try await verifier.verifyTransaction(jws)
        #expect(verdict.failed(.algorithmNotAllowed))
        #expect(!verdict.isValid)
    }

    @Test func hs256KeyedWithThePublicKeyIsRefused() async throws {
        let header = JSONObject([("alg", .string("HS256")), ("x5c", x5c)])
        let headerPart = Base64URL.encode(JSONValue.object(header).jsonBytes())
        let payloadPart = Base64URL.encode(TestJWS.transaction().jsonBytes())
        let publicKey = Array(TestJWS.leafKey.publicKey.x963Representation)
        let mac = HMAC<SHA256>.authenticationCode(
            for: Array("\(headerPart).\(payloadPart)".utf8), using: SymmetricKey(data: publicKey))
        let jws = "\(headerPart).\(payloadPart).\(Base64URL.encode(Array(mac)))"
        let verdict = try await verifier.verifyTransaction(jws)
        #expect(verdict.failed(.algorithmNotAllowed))
        #expect(!verdict.isValid)
    }

    @Test func rs256IsRefused() async throws {
        let jws = forge(
            header: [("alg", .string("RS256")), ("x5c", x5c)], payload: TestJWS.transaction(),
            signature: Array(repeating: 7, count: 256))
        let verdict = try await verifier.verifyTransaction(jws)
        #expect(verdict.failed(.algorithmNotAllowed))
        #expect(!verdict.isValid)
    }

    @Test(arguments: ["jwk", "jku", "x5u", "crit"])
    func headerKeySourcesAreRefused(member: String) async throws {
        let jws = forge(
            header: [("alg", .string("ES256")), ("x5c", x5c), (member, .string("https://attacker.example/key"))],
            payload: TestJWS.transaction())
        let verdict = try await verifier.verifyTransaction(jws)
        #expect(verdict.failures.map(\.code) == [.headerMemberNotAllowed])
    }

    @Test func aKidHeaderIsIgnoredNotRefused() async throws {
        // Xcode writes kid "Apple_Xcode_Key"; it names no key we would use.
        let jws = forge(
            header: [("alg", .string("ES256")), ("x5c", x5c), ("kid", .string("Apple_Xcode_Key"))],
            payload: TestJWS.transaction())
        #expect(try await verifier.verifyTransaction(jws).isValid)
    }

    // SECURITY 6: chain length and an impostor root.

    @Test(arguments: [2, 4])
    func x5cOfTheWrongLengthIsRefused(count: Int) async throws {
        let chain = TestJWS.trusted.certificates
        let certificates = count == 2 ? Array(chain.prefix(2)) : chain + [chain[2]]
        let verdict = try await verifier.verifyTransaction(sign(TestJWS.transaction(), chain: certificates))
        #expect(verdict.failures.map(\.code) == [.unexpectedChainLength])
    }

    @Test func x5cOfOneSelfSignedCertificateIsRefused() async throws {
        let selfSigned = try CertificateMinter.mint(
            .init(
                subject: try DistinguishedName {
                    CommonName("Prod ECC Mac App Store and iTunes Store Receipt Signing")
                },
                serialNumber: .init(bytes: [9]), notValidBefore: TestPKI.notValidBefore,
                notValidAfter: TestPKI.notValidAfter, isCertificateAuthority: false,
                appleMarker: .AppleMarker.receiptSigningLeaf),
            publicKey: Certificate.PublicKey(TestJWS.rogueKey.publicKey),
            issuer: try DistinguishedName { CommonName("Prod ECC Mac App Store and iTunes Store Receipt Signing") },
            issuerKey: Certificate.PrivateKey(TestJWS.rogueKey))
        let verdict = try await verifier.verifyTransaction(
            sign(TestJWS.transaction(), chain: [selfSigned], key: TestJWS.rogueKey))
        #expect(verdict.failures.map(\.code) == [.chainUntrusted, .unexpectedChainLength])
        // The trusted leaf alone (its intermediate left out) does not reach the root either.
        let leafAlone = try await verifier.verifyTransaction(sign(TestJWS.transaction(), chain: [TestJWS.trusted.leaf]))
        #expect(leafAlone.failed(.unexpectedChainLength))
        #expect(!leafAlone.isValid)
    }

    @Test func aRootWithTheRightNameAndAnotherKeyIsRefused() async throws {
        // The attacker mints root, intermediate and leaf with the trusted names and their own root key.
        let impostor = TestJWS.mint(rootKey: TestJWS.rogueKey)
        #expect(impostor.root.subject == TestJWS.trusted.root.subject)
        let verdict = try await verifier.verifyTransaction(sign(TestJWS.transaction(), chain: impostor.certificates))
        #expect(verdict.failed(.chainUntrusted))
        #expect(!verdict.isValid)
    }

    @Test func theTrustedRootsBytesInX5CDoNotMakeAnImpostorIntermediateTrusted() async throws {
        let impostor = TestJWS.mint(rootKey: TestJWS.rogueKey)
        let chain = [impostor.leaf, impostor.intermediate, TestJWS.trusted.root]
        let verdict = try await verifier.verifyTransaction(sign(TestJWS.transaction(), chain: chain))
        #expect(verdict.failed(.chainUntrusted))
    }

    // SECURITY 3 and 4: markers, a developer-style leaf, basic constraints.

    @Test func aLeafWithoutTheMarkerIsRefused() async throws {
        var options = MintedChain.Options()
        options.leafMarker = false
        let chain = TestJWS.mint(options: options)
        let verdict = try await verifier.verifyTransaction(sign(TestJWS.transaction(), chain: chain.certificates))
        #expect(verdict.failures.map(\.code) == [.leafMarkerMissing])
    }

    @Test func anIntermediateWithoutTheMarkerIsRefused() async throws {
        var options = MintedChain.Options()
        options.intermediateMarker = false
        let chain = TestJWS.mint(options: options)
        let verdict = try await verifier.verifyTransaction(sign(TestJWS.transaction(), chain: chain.certificates))
        #expect(verdict.failures.map(\.code) == [.intermediateMarkerMissing])
    }

    @Test func aDeveloperStyleLeafUnderTheRealIntermediateIsRefused() async throws {
        // A certificate the intermediate really issued, but for code signing (Apple's developer marker
        // 1.2.840.113635.100.6.1.2), not for App Store data.
        let developerMarker = try ASN1ObjectIdentifier(dotRepresentation: "1.2.840.113635.100.6.1.2")
        let developer = try CertificateMinter.mint(
            .init(
                subject: try DistinguishedName { CommonName("Apple Development: Mallory (ABCDE12345)") },
                serialNumber: .init(bytes: [0x42]), notValidBefore: TestPKI.notValidBefore,
                notValidAfter: TestPKI.notValidAfter, isCertificateAuthority: false, appleMarker: developerMarker),
            publicKey: Certificate.PublicKey(TestJWS.rogueKey.publicKey),
            issuer: TestJWS.trusted.intermediate.subject,
            issuerKey: Certificate.PrivateKey(TestJWS.intermediateKey))
        let chain = [developer, TestJWS.trusted.intermediate, TestJWS.trusted.root]
        let verdict = try await verifier.verifyTransaction(
            sign(TestJWS.transaction(), chain: chain, key: TestJWS.rogueKey))
        #expect(verdict.failures.map(\.code) == [.leafMarkerMissing])
    }

    @Test func aLeafThatIsACertificateAuthorityIsRefused() async throws {
        var options = MintedChain.Options()
        options.leafIsCertificateAuthority = true
        let chain = TestJWS.mint(options: options)
        let verdict = try await verifier.verifyTransaction(sign(TestJWS.transaction(), chain: chain.certificates))
        #expect(verdict.failed(.leafIsCertificateAuthority))
        #expect(!verdict.isValid)
    }

    // Tampering and keys.

    @Test func aPayloadChangedAfterSigningIsRefused() async throws {
        let jws = sign(TestJWS.transaction())
        let parts = jws.split(separator: ".").map(String.init)
        var changed = TestJWS.transaction()
        changed.productID = "com.example.florist.lifetime"
        let tampered = [parts[0], Base64URL.encode(changed.jsonBytes()), parts[2]].joined(separator: ".")
        let verdict = try await verifier.verifyTransaction(tampered)
        #expect(verdict.failures.map(\.code) == [.signatureInvalid])
        #expect(verdict.payload?.productID == "com.example.florist.lifetime")
        #expect(verdict.verifiedPayload == nil)
    }

    @Test func aSignatureFromAnotherKeyIsRefused() async throws {
        let verdict = try await verifier.verifyTransaction(sign(TestJWS.transaction(), key: TestJWS.rogueKey))
        #expect(verdict.failures.map(\.code) == [.signatureInvalid])
    }

    @Test(arguments: [0, 63, 65, 72])
    func aSignatureOfTheWrongLengthIsRefused(length: Int) async throws {
        let parts = sign(TestJWS.transaction()).split(separator: ".").map(String.init)
        let jws =
            length == 0
            ? parts[0] + "." + parts[1] + "."
            : parts[0] + "." + parts[1] + "." + Base64URL.encode(Array(repeating: 1, count: length))
        if length == 0 {
            await #expect(throws: SignedDataParsingError.self) { try await verifier.verifyTransaction(jws) }
        } else {
            let verdict = try await verifier.verifyTransaction(jws)
            #expect(!verdict.isValid)
            #expect(verdict.failed(.signatureInvalid))
        }
    }

    // SECURITY 2, 9, 10: app identity and environment.

    @Test func aWrongBundleIDIsRefused() async throws {
        let verdict = try await verifier.verifyTransaction(sign(TestJWS.transaction(bundleID: "com.example.other")))
        #expect(verdict.failures.map(\.code) == [.bundleIDMismatch])
    }

    @Test func aWrongEnvironmentIsRefused() async throws {
        let verdict = try await verifier.verifyTransaction(sign(TestJWS.transaction(environment: .production)))
        #expect(verdict.failures.map(\.code) == [.environmentMismatch])
    }

    @Test func aWrongAppAppleIDInProductionIsRefused() async throws {
        let production = TestJWS.verifier(appAppleID: 1_234_567, environment: .production)
        var notification = TestJWS.notification(signedTransaction: nil, signedRenewalInfo: nil, appAppleID: 7_654_321)
        notification.data?.environment = .production
        let verdict = try await production.verifyNotification(sign(notification))
        #expect(verdict.failures.map(\.code) == [.appAppleIDMismatch])
        // A missing app id is a mismatch in Production too.
        notification.data?.appAppleID = nil
        #expect(
            try await production.verifyNotification(sign(notification)).failures.map(\.code) == [.appAppleIDMismatch])
    }

    @Test func aProductionVerifierNeedsAnAppAppleID() {
        #expect(throws: SignedDataVerifier.ConfigurationError.self) {
            try SignedDataVerifier(
                trustStore: TrustStore(roots: [TestJWS.trusted.root]),
                configuration: .init(bundleID: "com.example.florist", environments: [.production]))
        }
    }

    // SECURITY 7: expiry, judged at the signed date.

    @Test func aChainExpiredAtTheSignedDateIsRefused() async throws {
        let chain = TestJWS.mint(
            notValidBefore: TestPKI.notValidBefore, notValidAfter: TestPKI.signingTime.addingTimeInterval(-86_400))
        let verifier = TestJWS.verifier(roots: [chain.root])
        let verdict = try await verifier.verifyTransaction(sign(TestJWS.transaction(), chain: chain.certificates))
        #expect(verdict.failed(.certificateExpired))
        #expect(!verdict.isValid)
    }

    @Test func aChainExpiredNowButValidAtTheSignedDateIsAccepted() async throws {
        // Apple's leaves expire; documents they signed stay valid. The signed date is inside the window.
        let chain = TestJWS.mint(
            notValidBefore: TestPKI.notValidBefore, notValidAfter: TestPKI.signingTime.addingTimeInterval(86_400))
        let verifier = TestJWS.verifier(roots: [chain.root])
        #expect(try await verifier.verifyTransaction(sign(TestJWS.transaction(), chain: chain.certificates)).isValid)
    }

    @Test func aDocumentWithoutASignedDateIsRefused() async throws {
        var transaction = TestJWS.transaction()
        transaction.signedDate = nil
        let verdict = try await verifier.verifyTransaction(sign(transaction))
        #expect(verdict.failures.map(\.code) == [.signedDateMissing])
    }

    // Notifications and the documents inside them.

    @Test func aNotificationVerifiesItsNestedDocuments() async throws {
        let transaction = sign(TestJWS.transaction())
        let renewal = sign(TestJWS.renewalInfo())
        let verdict = try await verifier.verifyNotification(
            sign(TestJWS.notification(signedTransaction: transaction, signedRenewalInfo: renewal)))
        #expect(verdict.isValid, "\(verdict.failures)")
        #expect(verdict.nested.map(\.field) == ["data.signedTransactionInfo", "data.signedRenewalInfo"])
        #expect(verdict.verifiedTransaction == TestJWS.transaction())
        #expect(verdict.verifiedRenewalInfo == TestJWS.renewalInfo())
    }

    @Test func aForgedTransactionInsideAGenuineNotificationIsRefused() async throws {
        let forged = sign(TestJWS.transaction(), key: TestJWS.rogueKey)
        let verdict = try await verifier.verifyNotification(
            sign(TestJWS.notification(signedTransaction: forged, signedRenewalInfo: nil)))
        #expect(verdict.failures.map(\.code) == [.signatureInvalid])
        #expect(verdict.failures.first?.field == "data.signedTransactionInfo")
        #expect(verdict.verifiedTransaction == nil)
        #expect(verdict.verifiedPayload == nil)
    }

    @Test func renewalInfoForAnotherSubscriptionIsRefused() async throws {
        var other = TestJWS.renewalInfo()
        other.originalTransactionID = "2000000099999999"
        let verdict = try await verifier.verifyNotification(
            sign(TestJWS.notification(signedTransaction: sign(TestJWS.transaction()), signedRenewalInfo: sign(other))))
        #expect(verdict.failures.map(\.code) == [.renewalInfoMismatch])
        let alone = try await verifier.verifyRenewalInfo(sign(other), for: TestJWS.transaction())
        #expect(alone.failures.map(\.code) == [.renewalInfoMismatch])
        #expect(alone.skippedChecks.isEmpty)
    }

    /// Every member of renewal information is optional, so any other signed document would read as one: a genuine
    /// transaction given as renewal information (same original transaction, so the tie holds) is refused by its kind,
    /// alone and inside a notification; a genuine notification given as renewal information too.
    @Test func aTransactionGivenAsRenewalInformationIsRefused() async throws {
        let transaction = sign(TestJWS.transaction())
        await #expect {
            _ = try await verifier.verifyRenewalInfo(transaction, for: TestJWS.transaction())
        } throws: { ($0 as? SignedDataParsingError)?.code == .wrongPayloadType }
        await #expect {
            _ = try await verifier.verify(transaction, as: .renewalInfo)
        } throws: { ($0 as? SignedDataParsingError)?.code == .wrongPayloadType }
        let notification = sign(TestJWS.notification(signedTransaction: transaction, signedRenewalInfo: nil))
        await #expect {
            _ = try await verifier.verifyRenewalInfo(notification)
        } throws: { ($0 as? SignedDataParsingError)?.code == .wrongPayloadType }
        let carried = try await verifier.verifyNotification(
            sign(TestJWS.notification(signedTransaction: transaction, signedRenewalInfo: transaction)))
        #expect(carried.verifiedRenewalInfo == nil)
        #expect(carried.failures.map(\.field) == ["data.signedRenewalInfo"])
        #expect(carried.failures.first?.reason.contains("wrongPayloadType") == true, "\(carried.failures)")
        // Genuine renewal information still verifies.
        let renewal = try await verifier.verifyRenewalInfo(sign(TestJWS.renewalInfo()), for: TestJWS.transaction())
        #expect(renewal.isValid, "\(renewal.failures)")
    }

    // SECURITY 12: garbage.

    @Test(arguments: [
        "", "not a jws", "a.b", "a.b.c.d", "...", "e30.e30.e30", "!!!.e30.AAAA", "eyJhbGciOiJFUzI1NiJ9.e30=.AAAA",
        String(repeating: "A", count: 2_000_000),
    ])
    func garbageGetsAClearCode(text: String) async throws {
        await #expect(throws: SignedDataParsingError.self) { try await verifier.verify(text) }
    }

    @Test func everyTruncationOfAGenuineDocumentIsRefused() async throws {
        let jws = Array(sign(TestJWS.transaction()).utf8)
        for length in stride(from: 0, to: jws.count, by: 7) {
            // A prefix is either not a document at all (it throws) or one that does not verify.
            let verdict = try? await verifier.verifyTransaction(String(decoding: jws.prefix(length), as: UTF8.self))
            #expect(verdict?.isValid != true, "prefix \(length)")
        }
    }
}
