import Foundation
import IAPReceipts
import IAPTestSupport
import IAPTrust
import Testing
import X509
import _CryptoExtras

/// Each check of the receipt verifier failing on its own, with the code it must report.
struct ReceiptVerificationTests {
    typealias F = ReceiptFixtures

    func verdict(
        _ bytes: [UInt8], roots: [Certificate] = [TestPKI.trusted.root], policy: ReceiptCheck = F.policy
    ) async throws -> ReceiptVerdict {
        try await F.verifier(roots: roots, policy: policy).verify(bytes, policy: policy)
    }

    @Test("a well-formed receipt passes every check", arguments: [ReceiptSigner.Digest.sha1, .sha256])
    func valid(digest: ReceiptSigner.Digest) async throws {
        let verdict = try await verdict(try F.signed(digest: digest))
        #expect(verdict.isValid, "\(verdict.failures)")
        #expect(verdict.chainKind == .apple)
        #expect(verdict.skippedChecks.isEmpty)
        #expect(verdict.environment == .productionSandbox)
    }

    @Test func signedAttributesAreChecked() async throws {
        let verdict = try await verdict(try F.signed(signingTime: F.created))
        #expect(verdict.isValid, "\(verdict.failures)")
    }

    @Test func tamperedPayloadByte() async throws {
        var bytes = try F.signed()
        let index = try #require(bytes.firstRange(of: Array(F.bundleID.utf8))).lowerBound
        bytes[index] ^= 0x20  // "com..." becomes "Com...": still a valid string
        let verdict = try await verdict(bytes, policy: ReceiptCheck(now: F.created))
        #expect(verdict.failures.map(\.code) == [.signatureInvalid])
    }

    @Test func tamperedContentWithSignedAttributes() async throws {
        var bytes = try F.signed(signingTime: F.created)
        let index = try #require(bytes.firstRange(of: Array("SPRING".utf8))).lowerBound
        bytes[index] = UInt8(ascii: "X")
        let verdict = try await verdict(bytes)
        #expect(verdict.failures.map(\.code) == [.messageDigestMismatch])
    }

    @Test func tamperedSignature() async throws {
        var bytes = try F.signed()
        bytes[bytes.count - 10] ^= 0x01  // the signature is the last field
        let verdict = try await verdict(bytes)
        #expect(verdict.failures.map(\.code) == [.signatureInvalid])
    }

    @Test func signatureFromAnotherKey() async throws {
        let rogue = try _RSA.Signing.PrivateKey(pemRepresentation: TestKeys.rogueLeafPEM)
        let verdict = try await verdict(try F.signed(key: rogue))
        #expect(verdict.failures.map(\.code) == [.signatureInvalid])
    }

    @Test func wrongRoot() async throws {
        let otherRoot = TestPKI.mint(rootKey: TestKeys.rogueRoot).root
        let verdict = try await verdict(try F.signed(), roots: [otherRoot])
        #expect(verdict.failures.map(\.code) == [.chainUntrusted])
        #expect(verdict.chainKind == nil)
    }

    @Test func rootWithTheRightNameAndAnotherKey() async throws {
        // A root named exactly like the trusted one, its own key: the trusted root is compared by key and signature.
        let impostor = TestPKI.mint(
            rootKey: TestKeys.rogueRoot, intermediateKey: TestKeys.rogueIntermediate,
            leafKey: TestKeys.rogueLeaf)
        let rogueKey = try _RSA.Signing.PrivateKey(pemRepresentation: TestKeys.rogueLeafPEM)
        let verdict = try await verdict(try F.signed(chain: impostor, key: rogueKey))
        #expect(verdict.failures.map(\.code) == [.chainUntrusted])
    }

    @Test func leafWithoutMarker() async throws {
        var options = MintedChain.Options()
        options.leafMarker = false
        let verdict = try await verdict(try F.signed(chain: TestPKI.mint(options: options)))
        #expect(verdict.failures.map(\.code) == [.leafMarkerMissing])
    }

    @Test func intermediateWithoutMarker() async throws {
        var options = MintedChain.Options()
        options.intermediateMarker = false
        let verdict = try await verdict(try F.signed(chain: TestPKI.mint(options: options)))
        #expect(verdict.failures.map(\.code) == [.intermediateMarkerMissing])
    }

    @Test func leafThatIsACertificateAuthority() async throws {
        var options = MintedChain.Options()
        options.leafIsCertificateAuthority = true
        let verdict = try await verdict(try F.signed(chain: TestPKI.mint(options: options)))
        #expect(verdict.failures.map(\.code) == [.leafIsCertificateAuthority])
    }

    @Test func untrustedCAWithAppleLikeNames() async throws {
        // A self-made CA copying Apple's names and markers (the LocalIAPStore attack): only the root's key differs.
        var options = MintedChain.Options()
        options.organization = "Apple Inc."
        let forged = TestPKI.mint(
            rootKey: TestKeys.rogueRoot, intermediateKey: TestKeys.rogueIntermediate,
            leafKey: TestKeys.rogueLeaf, options: options)
        let rogueKey = try _RSA.Signing.PrivateKey(pemRepresentation: TestKeys.rogueLeafPEM)
        let genuine = TestPKI.mint(options: options)
        let verdict = try await verdict(
            try F.signed(chain: forged, key: rogueKey),
            roots: [genuine.root])
        #expect(verdict.failures.map(\.code) == [.chainUntrusted])
    }

    @Test func developerLeafUnderTheRealIntermediate() async throws {
        // Another certificate issued by the trusted intermediate, without the receipt-signing marker.
        var options = MintedChain.Options()
        options.leafMarker = false
        let developer = TestPKI.mint(leafKey: TestKeys.rogueLeaf, options: options)
        let chain = MintedChain(
            root: TestPKI.trusted.root, intermediate: TestPKI.trusted.intermediate,
            leaf: developer.leaf, leafKey: developer.leafKey)
        let rogueKey = try _RSA.Signing.PrivateKey(pemRepresentation: TestKeys.rogueLeafPEM)
        let verdict = try await verdict(try F.signed(chain: chain, key: rogueKey))
        #expect(verdict.failures.map(\.code) == [.leafMarkerMissing])
    }

    @Test func wrongBundleID() async throws {
        var policy = F.policy
        policy.configuration.bundleID = "com.example.other"
        let verdict = try await verdict(try F.signed(), policy: policy)
        #expect(verdict.failures.map(\.code) == [.bundleIDMismatch])
    }

    @Test func wrongVersion() async throws {
        var policy = F.policy
        policy.configuration.appVersion = "43"
        let verdict = try await verdict(try F.signed(), policy: policy)
        #expect(verdict.failures.map(\.code) == [.appVersionMismatch])
    }

    @Test func wrongDevice() async throws {
        let policy = F.policy.checkingDevice(UUID(uuidString: "00000000-0000-0000-0000-000000000001")!)
        let verdict = try await verdict(try F.signed(), policy: policy)
        #expect(verdict.failures.map(\.code) == [.deviceHashMismatch])
    }

    @Test func expiredReceipt() async throws {
        let receipt = F.receipt(expiration: F.created.addingTimeInterval(3600))
        var policy = F.policy
        policy.now = F.created.addingTimeInterval(7200)
        let verdict = try await verdict(try F.signed(receipt), policy: policy)
        #expect(verdict.failures.map(\.code) == [.receiptExpired])
        policy.now = F.created.addingTimeInterval(60)
        #expect(try await self.verdict(try F.signed(receipt), policy: policy).isValid)
    }

    @Test func chainValidatedAtCreationNotNow() async throws {
        // A chain that expired after the receipt was created: valid at creation, expired "now".
        let shortLived = TestPKI.mint(notValidAfter: F.created.addingTimeInterval(86_400))
        let bytes = try F.signed(chain: shortLived)
        #expect(try await verdict(bytes, roots: [shortLived.root]).isValid)
        var policy = F.policy
        policy.configuration.chainValidationTime = .fixed(F.created.addingTimeInterval(86_400 * 365))
        let verdict = try await verdict(bytes, roots: [shortLived.root], policy: policy)
        #expect(Set(verdict.failures.map(\.code)) == [.certificateExpired])
    }

    @Test func chainNotYetValidAtCreation() async throws {
        let future = TestPKI.mint(notValidBefore: F.created.addingTimeInterval(86_400))
        let verdict = try await verdict(try F.signed(chain: future), roots: [future.root])
        #expect(Set(verdict.failures.map(\.code)) == [.certificateNotYetValid])
    }

    @Test func everyFailureIsListed() async throws {
        let otherRoot = TestPKI.mint(rootKey: TestKeys.rogueRoot).root
        var policy = F.policy
        policy.configuration.bundleID = "com.example.other"
        policy.configuration.appVersion = "1"
        var bytes = try F.signed()
        bytes[bytes.count - 10] ^= 0x01
        let verdict = try await verdict(bytes, roots: [otherRoot], policy: policy)
        #expect(
            Set(verdict.failures.map(\.code)) == [
                .chainUntrusted, .signatureInvalid, .bundleIDMismatch, .appVersionMismatch,
            ])
    }

    @Test func skippedChecksAreReported() async throws {
        let verdict = try await verdict(try F.signed(), policy: ReceiptCheck(now: F.created))
        #expect(verdict.isValid)
        #expect(verdict.skippedChecks.map(\.code) == [.bundleID, .appVersion, .deviceHash, .environment])
    }

    @Test func chainIsVerifiedOnceThenCached() async throws {
        var policy = F.policy
        policy.configuration.chainValidationTime = .verificationTime
        let verifier = F.verifier(policy: policy)
        let bytes = try F.signed()
        #expect(verifier.cachedChainCount == 0)
        for _ in 0..<3 { #expect(try await verifier.verify(bytes, policy: policy).isValid) }
        #expect(verifier.cachedChainCount == 1)
        // A cached chain still fails outside its validity window.
        policy.now = Date(timeIntervalSince1970: 4_000_000_000)
        #expect(try await verifier.verify(bytes, policy: policy).failed(.certificateExpired))
    }

    @Test func concurrentVerificationsShareTheCache() async throws {
        let verifier = F.verifier()
        let bytes = try F.signed()
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<32 {
                group.addTask { (try? await verifier.verify(bytes, policy: F.policy).isValid) ?? false }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0 })
        #expect(verifier.cachedChainCount == 1)
    }
}
