import Foundation
import IAPTestSupport
import IAPTrust
import SwiftASN1
import Testing
import X509

struct TrustAnchorTests {
    static func der(_ certificate: Certificate) throws -> [UInt8] {
        var coder = DER.Serializer()
        try coder.serialize(certificate)
        return coder.serializedBytes
    }

    @Test(
        .enabled(if: SharedTestData.isAvailable, "\(SharedTestData.skipMessage)"),
        arguments: [
            ("AppleIncRootCertificate.cer", KnownAppleRoot.appleIncRoot),
            ("AppleRootCA-G3.cer", .appleRootCAG3), ("AppleRootCA-G2.cer", .appleRootCAG2),
            ("AppleComputerRootCertificate.cer", .appleComputerRoot),
        ])
    func realAppleRootsLoadWithTheirFingerprints(file: String, root: KnownAppleRoot) throws {
        let certificates = try TrustAnchorLoader.certificates(
            contentsOfFile: SharedTestData.path("certs/apple-official/\(file)"))
        #expect(certificates.count == 1)
        #expect(TrustAnchorLoader.sha256Fingerprint(of: certificates[0]) == root.sha256Fingerprint)
        #expect(certificates[0].subject.commonName == root.commonName)
    }

    @Test func pemWithSeveralCertificates() throws {
        let chain = TestPKI.trusted
        let pem = try [chain.root, chain.intermediate].map { try $0.serializeAsPEM().pemString }.joined(separator: "\n")
        let loaded = try TrustAnchorLoader.certificates(from: Array(pem.utf8))
        #expect(loaded == [chain.root, chain.intermediate])
        #expect(try TrustAnchorLoader.certificates(from: Self.der(chain.root)) == [chain.root])
    }

    @Test func impostorOfAnAppleRootIsRefused() throws {
        for root in KnownAppleRoot.all {
            let name = try DistinguishedName {
                CountryName("US")
                OrganizationName("Apple Inc.")
                CommonName(root.commonName)
            }
            let impostor = try CertificateMinter.mint(
                .init(
                    subject: name, serialNumber: .init(bytes: [0x07]), notValidBefore: TestPKI.notValidBefore,
                    notValidAfter: TestPKI.notValidAfter, isCertificateAuthority: true),
                publicKey: TestKeys.rogueRoot.publicKey, issuer: name, issuerKey: TestKeys.rogueRoot)
            #expect(throws: TrustError(.impostorAppleRoot, "")) {
                try TrustAnchorLoader.certificates(from: Self.der(impostor))
            }
        }
    }

    @Test func garbageIsNotACertificate() {
        #expect(throws: TrustError(.notACertificate, "")) {
            try TrustAnchorLoader.certificates(from: [0x30, 0x03, 0x02, 0x01, 0x01])
        }
        #expect(throws: TrustError(.notACertificate, "")) {
            try TrustAnchorLoader.certificates(
                from: Array("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".utf8))
        }
        #expect(throws: TrustError(.unreadableFile, "")) {
            try TrustAnchorLoader.certificates(contentsOfFile: "/nonexistent")
        }
    }

    @Test func mintedChainHasAppleShape() {
        let chain = TestPKI.trusted
        #expect(AppleChainPolicy.problems(in: chain.certificates).isEmpty)
        #expect(chain.leaf.extensions[oid: .AppleMarker.receiptSigningLeaf] != nil)
        #expect(chain.intermediate.extensions[oid: .AppleMarker.wwdrIntermediate] != nil)
        #expect(chain.leaf.issuer == chain.intermediate.subject)
        #expect(chain.intermediate.issuer == chain.root.subject)
    }
}

struct ChainVerifierTests {
    static func bytes(_ chain: MintedChain) throws -> [ArraySlice<UInt8>] {
        try chain.certificates.map { try TrustAnchorTests.der($0)[...] }
    }

    @Test func verifiesOnceThenAnswersFromTheCache() async throws {
        let verifier = ChainVerifier(trustStore: TrustStore(roots: [TestPKI.trusted.root]))
        let certificates = try Self.bytes(TestPKI.trusted)
        let first = await verifier.verify(certificates: certificates, leaf: .first, at: TestPKI.signingTime)
        #expect(first.isTrusted && first.kind == .apple && first.chain.count == 3)
        #expect(verifier.cachedChainCount == 1)
        let second = await verifier.verify(
            certificates: certificates, leaf: .first, at: TestPKI.signingTime.addingTimeInterval(1))
        #expect(second.isTrusted)
        #expect(verifier.cachedChainCount == 1)
        // Outside the window the cache does not answer; the full check reports the expiry.
        let late = await verifier.verify(certificates: certificates, leaf: .first, at: Date(timeIntervalSince1970: 4e9))
        #expect(late.failures.map(\.code).contains(.certificateExpired))
    }

    @Test func cacheIsBounded() async throws {
        let verifier = ChainVerifier(trustStore: TrustStore(roots: [TestPKI.trusted.root]), cacheCapacity: 1)
        let certificates = try Self.bytes(TestPKI.trusted)
        // The same chain presented in different orders is two different keys.
        for order in [[0, 1, 2], [0, 2, 1]] {
            let presented = order.map { certificates[$0] }
            #expect(await verifier.verify(certificates: presented, leaf: .first, at: TestPKI.signingTime).isTrusted)
        }
        #expect(verifier.cachedChainCount == 1)
    }

    @Test func failuresAreNotCached() async throws {
        let verifier = ChainVerifier(trustStore: TrustStore(roots: [TestPKI.mint(rootKey: TestKeys.rogueRoot).root]))
        let result = await verifier.verify(
            certificates: try Self.bytes(TestPKI.trusted), leaf: .first, at: TestPKI.signingTime)
        #expect(result.failures.map(\.code) == [.chainUntrusted])
        #expect(result.leafPublicKey != nil)
        #expect(verifier.cachedChainCount == 0)
    }

    @Test func malformedAndMissingCertificates() async throws {
        let verifier = ChainVerifier(trustStore: TrustStore(roots: [TestPKI.trusted.root]))
        let garbage = await verifier.verify(certificates: [[0x30, 0x00]], leaf: .first, at: TestPKI.signingTime)
        #expect(garbage.failures.map(\.code) == [.malformedCertificate])
        let none = await verifier.verify(certificates: [], leaf: .first, at: TestPKI.signingTime)
        #expect(none.failures.map(\.code) == [.signerCertificateNotFound])
    }

    @Test func twoCertificateChainIsRefused() async throws {
        // A leaf issued directly by the root (no intermediate) breaks Apple's shape.
        let root = TestPKI.trusted.root
        var options = MintedChain.Options()
        options.leafMarker = true
        let leaf = try CertificateMinter.mint(
            .init(
                subject: try DistinguishedName { CommonName("Direct Leaf") }, serialNumber: .init(bytes: [0x09]),
                notValidBefore: TestPKI.notValidBefore, notValidAfter: TestPKI.notValidAfter,
                isCertificateAuthority: false, appleMarker: .AppleMarker.receiptSigningLeaf),
            publicKey: TestKeys.leaf.publicKey, issuer: root.subject, issuerKey: TestKeys.root)
        let verifier = ChainVerifier(trustStore: TrustStore(roots: [root]))
        let result = await verifier.verify(
            certificates: [try TrustAnchorTests.der(leaf)[...], try TrustAnchorTests.der(root)[...]], leaf: .first,
            at: TestPKI.signingTime)
        #expect(Set(result.failures.map(\.code)) == [.unexpectedChainLength, .intermediateMarkerMissing])
    }
}
