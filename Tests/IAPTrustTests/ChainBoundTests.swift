import Crypto
import Foundation
import IAPCore
import IAPTestSupport
import IAPTrust
import SwiftASN1
import Testing
import X509

/// The work of one chain verification is bounded before any path is searched, and Xcode's certificates never act as
/// roots (SECURITY 6, 9 and 15).
struct ChainBoundTests {
    static let time = TestPKI.signingTime

    static func key(_ label: String) -> Certificate.PrivateKey { Certificate.PrivateKey(TestJWS.key(label)) }

    static func der(_ certificate: Certificate) -> ArraySlice<UInt8> {
        var coder = DER.Serializer()
        try! coder.serialize(certificate)
        return coder.serializedBytes[...]
    }

    static func mint(
        _ name: String, serial: UInt8, key: Certificate.PrivateKey, issuer: String, issuerKey: Certificate.PrivateKey,
        ca: Bool, marker: ASN1ObjectIdentifier? = nil
    ) -> Certificate {
        try! CertificateMinter.mint(
            .init(
                subject: try DistinguishedName { CommonName(name) }, serialNumber: .init(bytes: [serial]),
                notValidBefore: TestPKI.notValidBefore, notValidAfter: TestPKI.notValidAfter,
                isCertificateAuthority: ca, appleMarker: marker),
            publicKey: key.publicKey, issuer: try DistinguishedName { CommonName(issuer) }, issuerKey: issuerKey)
    }

    /// A "ladder": `layers` layers of two same-name certificates, each signed by both keys of the layer above, the
    /// top layer by a root nobody trusts. A general path search tries every combination.
    static func ladder(layers: Int) -> [ArraySlice<UInt8>] {
        let leafKey = key("ladder-leaf")
        var certificates = [
            der(
                mint(
                    "Ladder Leaf", serial: 1, key: leafKey, issuer: "Ladder 0", issuerKey: key("ladder-0-a"), ca: false)
            )
        ]
        for layer in 0..<layers {
            for (variant, issuerVariant) in [("a", "a"), ("b", "b")] {
                let issuerKey = layer + 1 == layers ? key("ladder-top") : key("ladder-\(layer + 1)-\(issuerVariant)")
                certificates.append(
                    der(
                        mint(
                            "Ladder \(layer)", serial: UInt8(2 + layer % 200), key: key("ladder-\(layer)-\(variant)"),
                            issuer: layer + 1 == layers ? "Ladder Top" : "Ladder \(layer + 1)", issuerKey: issuerKey,
                            ca: true)))
            }
        }
        return certificates
    }

    @Test(arguments: [4, 29, 61])
    func moreCertificatesThanAppleSendsAreRefusedBeforeAnyPathSearch(count: Int) async {
        let verifier = ChainVerifier(trustStore: TrustStore(roots: [TestPKI.trusted.root]))
        let presented = Array(Self.ladder(layers: 30).prefix(count))
        let (result, searches) = await WorkMeter.measure {
            await verifier.verify(certificates: presented, leaf: .first, at: Self.time)
        }
        #expect(result.failures.map(\.code) == [.tooManyCertificates])
        #expect(searches == 0)
    }

    @Test func aLadderWithinTheBoundCostsAtMostTwoPathSearches() async {
        let verifier = ChainVerifier(trustStore: TrustStore(roots: [TestPKI.trusted.root]))
        let (result, searches) = await WorkMeter.measure {
            await verifier.verify(certificates: Array(Self.ladder(layers: 2).prefix(3)), leaf: .first, at: Self.time)
        }
        #expect(result.failures.map(\.code) == [.chainUntrusted])
        #expect(searches <= 2)
    }

    @Test func aJunkRootIsRefusedWithoutAPathSearchAndIsNeverCached() async throws {
        let trusted = TestJWS.trusted
        let verifier = ChainVerifier(trustStore: TrustStore(roots: [trusted.root]))
        for serial in UInt8(1)...8 {
            // The genuine leaf and intermediate, and a third certificate that varies and is no trusted root.
            let junk = Self.mint(
                "Junk \(serial)", serial: serial, key: Self.key("junk"), issuer: "Junk \(serial)",
                issuerKey: Self.key("junk"), ca: true)
            let presented = [Self.der(trusted.leaf), Self.der(trusted.intermediate), Self.der(junk)]
            let (result, searches) = await WorkMeter.measure {
                await verifier.verify(certificates: presented, leaf: .first, at: Self.time)
            }
            #expect(result.failures.map(\.code) == [.chainUntrusted])
            #expect(searches == 0)
        }
        #expect(verifier.cachedChainCount == 0)
        // A copy of the root under its own name and key, but signed by another key, is not the root either.
        let forgedCopy = try CertificateMinter.mint(
            .init(
                subject: trusted.root.subject, serialNumber: .init(bytes: [0x42]),
                notValidBefore: TestPKI.notValidBefore, notValidAfter: TestPKI.notValidAfter,
                isCertificateAuthority: true, appleMarker: nil),
            publicKey: trusted.root.publicKey, issuer: trusted.root.subject, issuerKey: Self.key("junk"))
        let withCopy = await verifier.verify(
            certificates: [Self.der(trusted.leaf), Self.der(trusted.intermediate), Self.der(forgedCopy)], leaf: .first,
            at: Self.time)
        #expect(withCopy.failures.map(\.code) == [.chainUntrusted])
        // The genuine chain still verifies, once.
        let genuine = await verifier.verify(
            certificates: trusted.certificates.map(Self.der), leaf: .first, at: Self.time)
        #expect(genuine.isTrusted)
        #expect(verifier.cachedChainCount == 1)
    }

    @Test func anXcodeCertificateIsNeverARoot() async {
        // Xcode's signed-data certificate is a CA whose key ships with Xcode: whoever has it can issue an intermediate
        // and a leaf with Apple's markers. Listed as an Xcode certificate, it is not a root, so that chain fails.
        let xcodeKey = Self.key("xcode")
        let xcode = Self.mint(
            "StoreKit Testing in Xcode", serial: 1, key: xcodeKey, issuer: "StoreKit Testing in Xcode",
            issuerKey: xcodeKey, ca: true)
        let intermediate = Self.mint(
            "Forged WWDR", serial: 2, key: Self.key("forged-intermediate"), issuer: "StoreKit Testing in Xcode",
            issuerKey: xcodeKey, ca: true, marker: .AppleMarker.wwdrIntermediate)
        let leaf = Self.mint(
            "Forged Leaf", serial: 3, key: Self.key("forged-leaf"), issuer: "Forged WWDR",
            issuerKey: Self.key("forged-intermediate"), ca: false, marker: .AppleMarker.receiptSigningLeaf)
        let careless = TrustStore(roots: [TestJWS.trusted.root, xcode]).insecurelyAcceptingXcodeTestCertificates([xcode]
        )
        #expect(careless.roots == [TestJWS.trusted.root])
        let verifier = ChainVerifier(trustStore: careless)
        let forged = await verifier.verify(
            certificates: [leaf, intermediate, xcode].map(Self.der), leaf: .first, at: Self.time)
        #expect(!forged.isTrusted)
        #expect(forged.kind == nil)
        #expect(forged.failures.map(\.code) == [.chainUntrusted])
        // The Xcode certificate alone still signs Xcode's own one-certificate documents.
        let alone = await verifier.verify(certificates: [Self.der(xcode)], leaf: .first, at: Self.time)
        #expect(alone.kind == .xcodeTest)
    }
}
