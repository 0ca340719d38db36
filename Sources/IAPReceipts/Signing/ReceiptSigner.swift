import Crypto
public import Foundation
import IAPCore
import IAPTrust
import SwiftASN1
public import X509
public import _CryptoExtras

/// Builds an ``AppReceipt`` into a DER PKCS#7 receipt signed with RSA PKCS#1 v1.5, the way the App Store does.
///
/// The local App Store signs with this, and tests use it with chains minted in process.
public struct ReceiptSigner: Sendable {
    /// The digest the signature uses: SHA-1 (App Store receipts until 2023) or SHA-256 (since, and Xcode).
    public enum Digest: Sendable {
        case sha1, sha256
    }

    /// The signing key (the private key of `certificates[0]`).
    public var key: _RSA.Signing.PrivateKey
    /// The certificates to embed, signer first (leaf, intermediate, root, as Apple does).
    public var certificates: [Certificate]
    public var digest: Digest
    /// When set, the signature covers signed attributes (content type, signing time, message digest) rather than the
    /// content itself. Apple's receipts carry none; the option exists because the format allows it.
    public var signingTime: Date?

    public init(
        key: _RSA.Signing.PrivateKey, certificates: [Certificate], digest: Digest = .sha256, signingTime: Date? = nil
    ) {
        self.key = key
        self.certificates = certificates
        self.digest = digest
        self.signingTime = signingTime
    }

    /// Signs the receipt's DER payload and returns the receipt as a verifier will read it.
    ///
    /// DER sorts the payload's attribute set, so the in-app records of the result are in DER order, which may differ
    /// from the order they were given in.
    public func sign(_ receipt: AppReceipt) throws -> SignedReceipt {
        guard let leaf = certificates.first else {
            throw ReceiptParsingError(.notAReceipt, "a receipt signer needs at least its own certificate")
        }
        let content = try receipt.payload()
        let kind: CMSSignatureCheck.DigestKind = digest == .sha1 ? .sha1 : .sha256
        let digestAlgorithm = AlgorithmIdentifier.withNullParameters(
            digest == .sha1 ? .DigestAndSignature.sha1 : .DigestAndSignature.sha256)
        let signatureAlgorithm = AlgorithmIdentifier.withNullParameters(
            digest == .sha1 ? .DigestAndSignature.sha1WithRSAEncryption : .DigestAndSignature.sha256WithRSAEncryption)

        var signedAttributes: [CMSAttribute]?
        if let signingTime {
            let utcTime = try UTCTime(Self.components(of: signingTime))
            signedAttributes = [
                CMSAttribute(
                    type: .CMS.contentTypeAttribute, values: [try ASN1Any(erasing: ASN1ObjectIdentifier.CMS.data)]),
                CMSAttribute(type: .CMS.signingTimeAttribute, values: [try ASN1Any(erasing: utcTime)]),
                CMSAttribute(
                    type: .CMS.messageDigestAttribute,
                    values: [
                        try ASN1Any(
                            erasing: ASN1OctetString(contentBytes: CMSSignatureCheck.digest(content, kind)[...]))
                    ]),
            ]
        }
        let signedBytes = try signedAttributes.map { try SignerInfo.encodeForSigning($0) } ?? content
        let signature: _RSA.Signing.RSASignature
        switch digest {
        case .sha1:
            signature = try key.signature(for: Insecure.SHA1.hash(data: signedBytes), padding: .insecurePKCS1v1_5)
        case .sha256: signature = try key.signature(for: SHA256.hash(data: signedBytes), padding: .insecurePKCS1v1_5)
        }
        var sid = DER.Serializer()
        try sid.serialize(IssuerAndSerialNumber(issuer: leaf.issuer, serialNumber: leaf.serialNumber))
        let signer = try SignerInfo(
            version: 1,
            issuerAndSerialNumber: sid.serializedBytes[...],
            digestAlgorithm: digestAlgorithm,
            signedAttributes: signedAttributes,
            signatureAlgorithm: signatureAlgorithm,
            signature: Array(signature.rawRepresentation)
        )
        let certificateBytes = try certificates.map { certificate -> ArraySlice<UInt8> in
            var coder = DER.Serializer()
            try coder.serialize(certificate)
            return coder.serializedBytes[...]
        }
        let signedData = CMSSignedData(
            digestAlgorithms: [digestAlgorithm], content: content, certificates: certificateBytes, signerInfos: [signer]
        )
        return try SignedReceipt(bytes: signedData.contentInfoBytes())
    }

    private static func components(of date: Date) -> (Int, Int, Int, Int, Int, Int) {
        let days = Int((date.timeIntervalSince1970 / 86_400).rounded(.down))
        let seconds = Int(date.timeIntervalSince1970.rounded(.down)) - days * 86_400
        let (year, month, day) = CivilCalendar.date(fromDays: days)
        return (year, month, day, seconds / 3600, seconds / 60 % 60, seconds % 60)
    }
}

extension UTCTime {
    fileprivate init(_ c: (Int, Int, Int, Int, Int, Int)) throws {
        try self.init(year: c.0, month: c.1, day: c.2, hours: c.3, minutes: c.4, seconds: c.5)
    }
}
