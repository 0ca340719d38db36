import Crypto
import IAPTrust
import SwiftASN1
import X509
import _CryptoExtras

/// The CMS signature rules, in the order RFC 5652 and swift-certificates' `CMS.isValidSignature` apply them: the
/// digest algorithm is declared, the algorithms are ones Apple uses (RSA PKCS#1 v1.5 with SHA-1 or SHA-256), a
/// messageDigest signed attribute equals the content's digest, and the signature verifies over the signed attributes
/// when present or over the content otherwise.
enum CMSSignatureCheck {
    enum DigestKind: String {
        case sha1 = "SHA-1"
        case sha256 = "SHA-256"
    }

    /// The digest algorithm the signer uses, or a failure when it is not one receipts use.
    static func digestKind(of signer: SignerInfo, in signedData: CMSSignedData) -> Result<
        DigestKind, VerificationFailure
    > {
        let digest = signer.digestAlgorithm.algorithm
        guard signedData.digestAlgorithms.contains(where: { $0.algorithm == digest }) else {
            return .failure(
                VerificationFailure(
                    .unsupportedSignatureAlgorithm, "digest \(digest) is not declared by the signed data"))
        }
        let kind: DigestKind
        switch digest {
        case .DigestAndSignature.sha1: kind = .sha1
        case .DigestAndSignature.sha256: kind = .sha256
        default:
            return .failure(
                VerificationFailure(.unsupportedSignatureAlgorithm, "digest \(digest) is not SHA-1 or SHA-256"))
        }
        let signature = signer.signatureAlgorithm.algorithm
        let consistent: Bool
        switch signature {
        case .DigestAndSignature.rsaEncryption: consistent = true
        case .DigestAndSignature.sha1WithRSAEncryption: consistent = kind == .sha1
        case .DigestAndSignature.sha256WithRSAEncryption: consistent = kind == .sha256
        default: consistent = false
        }
        guard consistent else {
            return .failure(
                VerificationFailure(
                    .unsupportedSignatureAlgorithm,
                    "signature algorithm \(signature) does not match digest \(kind.rawValue)"
                ))
        }
        return .success(kind)
    }

    /// Every failure of the signature itself, given the signer's key.
    static func failures(
        signer: SignerInfo,
        content: [UInt8],
        digest kind: DigestKind,
        key: Certificate.PublicKey
    ) -> [VerificationFailure] {
        guard let rsaKey = _RSA.Signing.PublicKey(key) else {
            return [VerificationFailure(.unsupportedSignatureAlgorithm, "the signing certificate's key is not RSA")]
        }
        let signature = _RSA.Signing.RSASignature(rawRepresentation: signer.signature)
        guard let signedAttributesBytes = signer.signedAttributesBytes else {
            return verify(rsaKey, signature, over: content, kind)
                ? [] : [VerificationFailure(.signatureInvalid, "the signature does not match the receipt content")]
        }
        var failures: [VerificationFailure] = []
        // RFC 5652 5.3: with signed attributes, a content-type attribute must name the content type that was signed
        // (a receipt's is always id-data), so a signature made over another type of content cannot be replayed here.
        if let value = signer.signedAttribute(.CMS.contentTypeAttribute),
            let type = try? ASN1ObjectIdentifier(asn1Any: value)
        {
            if type != .CMS.data {
                failures.append(
                    VerificationFailure(.contentTypeMismatch, "the signed content type is \(type), not id-data"))
            }
        } else {
            failures.append(VerificationFailure(.contentTypeMismatch, "signed attributes without one content type"))
        }
        let contentDigest = digest(content, kind)
        if let value = signer.signedAttribute(.CMS.messageDigestAttribute),
            let octets = try? ASN1OctetString(asn1Any: value)
        {
            if Array(octets.bytes) != contentDigest {
                failures.append(
                    VerificationFailure(.messageDigestMismatch, "the signed messageDigest is not the content's digest"))
            }
        } else {
            failures.append(VerificationFailure(.messageDigestMismatch, "signed attributes without one messageDigest"))
        }
        if !verify(rsaKey, signature, over: signedAttributesBytes, kind) {
            failures.append(
                VerificationFailure(.signatureInvalid, "the signature does not match the signed attributes"))
        }
        return failures
    }

    static func digest(_ bytes: [UInt8], _ kind: DigestKind) -> [UInt8] {
        switch kind {
        case .sha1: Array(Insecure.SHA1.hash(data: bytes))
        case .sha256: Array(SHA256.hash(data: bytes))
        }
    }

    private static func verify(
        _ key: _RSA.Signing.PublicKey, _ signature: _RSA.Signing.RSASignature, over bytes: [UInt8], _ kind: DigestKind
    ) -> Bool {
        switch kind {
        case .sha1:
            key.isValidSignature(signature, for: Insecure.SHA1.hash(data: bytes), padding: .insecurePKCS1v1_5)
        case .sha256:
            key.isValidSignature(signature, for: SHA256.hash(data: bytes), padding: .insecurePKCS1v1_5)
        }
    }
}
