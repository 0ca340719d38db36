import Crypto
public import Foundation
public import SwiftASN1
public import X509
import _CryptoExtras

/// Mints certificates and Apple-shaped chains (root, intermediate with the WWDR marker, leaf with the receipt-signing
/// marker) from keys the caller supplies.
///
/// The local App Store signs everything it hands out with such a chain, and tests mint fresh ones in process so that no
/// fixture ever expires. Keys, serial numbers and validity are inputs: the same inputs give the same certificates
/// (RSA PKCS#1 v1.5 signatures are deterministic; ECDSA ones are not, but verify the same).
public enum CertificateMinter {
    /// What to put in one certificate.
    public struct Profile: Sendable {
        public var subject: DistinguishedName
        public var serialNumber: Certificate.SerialNumber
        public var notValidBefore: Date
        public var notValidAfter: Date
        public var isCertificateAuthority: Bool
        /// Apple's marker extension to include (one of `ASN1ObjectIdentifier.AppleMarker`), if any.
        public var appleMarker: ASN1ObjectIdentifier?

        public init(
            subject: DistinguishedName,
            serialNumber: Certificate.SerialNumber,
            notValidBefore: Date,
            notValidAfter: Date,
            isCertificateAuthority: Bool,
            appleMarker: ASN1ObjectIdentifier? = nil
        ) {
            self.subject = subject
            self.serialNumber = serialNumber
            self.notValidBefore = notValidBefore
            self.notValidAfter = notValidAfter
            self.isCertificateAuthority = isCertificateAuthority
            self.appleMarker = appleMarker
        }
    }

    /// Mints one certificate for `publicKey`, signed by `issuerKey` in the name of `issuer` (itself when self-signed).
    public static func mint(
        _ profile: Profile,
        publicKey: Certificate.PublicKey,
        issuer: DistinguishedName,
        issuerKey: Certificate.PrivateKey
    ) throws(TrustError) -> Certificate {
        do {
            let extensions = try Certificate.Extensions {
                Critical(
                    profile.isCertificateAuthority
                        ? BasicConstraints.isCertificateAuthority(maxPathLength: nil)
                        : BasicConstraints.notCertificateAuthority
                )
                Critical(
                    profile.isCertificateAuthority
                        ? KeyUsage(keyCertSign: true, cRLSign: true)
                        : KeyUsage(digitalSignature: true)
                )
                SubjectKeyIdentifier(hash: publicKey)
                AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: issuerKey.publicKey).keyIdentifier)
                if let marker = profile.appleMarker {
                    // Apple's marker extensions hold an ASN.1 NULL.
                    Certificate.Extension(oid: marker, critical: false, value: [0x05, 0x00])
                }
            }
            return try Certificate(
                version: .v3,
                serialNumber: profile.serialNumber,
                publicKey: publicKey,
                notValidBefore: profile.notValidBefore,
                notValidAfter: profile.notValidAfter,
                issuer: issuer,
                subject: profile.subject,
                signatureAlgorithm: signatureAlgorithm(for: issuerKey),
                extensions: extensions,
                issuerPrivateKey: issuerKey
            )
        } catch {
            throw TrustError(.mintingFailed, "cannot mint \(profile.subject): \(error)")
        }
    }

    /// The signature algorithm IAPKit uses for a key: SHA-256 with RSA, ECDSA with the curve's own hash.
    public static func signatureAlgorithm(for key: Certificate.PrivateKey) -> Certificate.SignatureAlgorithm {
        let publicKey = key.publicKey
        if P384.Signing.PublicKey(publicKey) != nil { return .ecdsaWithSHA384 }
        if P521.Signing.PublicKey(publicKey) != nil { return .ecdsaWithSHA512 }
        if P256.Signing.PublicKey(publicKey) != nil { return .ecdsaWithSHA256 }
        return .sha256WithRSAEncryption
    }
}

/// A root, an intermediate and a leaf shaped like Apple's App Store chains, with the leaf's private key.
public struct MintedChain: Sendable {
    public let root: Certificate
    public let intermediate: Certificate
    public let leaf: Certificate
    public let leafKey: Certificate.PrivateKey

    /// The chain as signed documents carry it: leaf, intermediate, root.
    public var certificates: [Certificate] { [leaf, intermediate, root] }

    public init(root: Certificate, intermediate: Certificate, leaf: Certificate, leafKey: Certificate.PrivateKey) {
        self.root = root
        self.intermediate = intermediate
        self.leaf = leaf
        self.leafKey = leafKey
    }

    /// Which parts of Apple's shape to reproduce; tests switch parts off to build the attacks a verifier must refuse.
    public struct Options: Sendable {
        public var leafMarker = true
        public var intermediateMarker = true
        public var leafIsCertificateAuthority = false
        /// Organisation name used in every subject ("IAPKit Local App Store" unless set).
        public var organization = "IAPKit Local App Store"
        public init() {}
    }

    /// Mints a chain valid from `notValidBefore` to `notValidAfter` from three keys.
    public static func mint(
        rootKey: Certificate.PrivateKey,
        intermediateKey: Certificate.PrivateKey,
        leafKey: Certificate.PrivateKey,
        notValidBefore: Date,
        notValidAfter: Date,
        options: Options = Options()
    ) throws(TrustError) -> MintedChain {
        func name(_ commonName: String) throws(TrustError) -> DistinguishedName {
            do {
                return try DistinguishedName {
                    CountryName("US")
                    OrganizationName(options.organization)
                    CommonName(commonName)
                }
            } catch {
                throw TrustError(.mintingFailed, "invalid name \(commonName): \(error)")
            }
        }
        let rootName = try name("\(options.organization) Root CA")
        let intermediateName = try name("\(options.organization) Intermediate CA")
        let leafName = try name("\(options.organization) Receipt Signing")
        let root = try CertificateMinter.mint(
            .init(
                subject: rootName, serialNumber: .init(bytes: [0x01]), notValidBefore: notValidBefore,
                notValidAfter: notValidAfter, isCertificateAuthority: true),
            publicKey: rootKey.publicKey, issuer: rootName, issuerKey: rootKey)
        let intermediate = try CertificateMinter.mint(
            .init(
                subject: intermediateName, serialNumber: .init(bytes: [0x02]), notValidBefore: notValidBefore,
                notValidAfter: notValidAfter, isCertificateAuthority: true,
                appleMarker: options.intermediateMarker ? .AppleMarker.wwdrIntermediate : nil),
            publicKey: intermediateKey.publicKey, issuer: rootName, issuerKey: rootKey)
        let leaf = try CertificateMinter.mint(
            .init(
                subject: leafName, serialNumber: .init(bytes: [0x03]), notValidBefore: notValidBefore,
                notValidAfter: notValidAfter, isCertificateAuthority: options.leafIsCertificateAuthority,
                appleMarker: options.leafMarker ? .AppleMarker.receiptSigningLeaf : nil),
            publicKey: leafKey.publicKey, issuer: intermediateName, issuerKey: intermediateKey)
        return MintedChain(root: root, intermediate: intermediate, leaf: leaf, leafKey: leafKey)
    }
}
