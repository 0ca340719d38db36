import Crypto
import Foundation
import SwiftASN1
public import X509

/// Reads root certificates from files or bytes (DER or PEM) and refuses impostors of Apple's roots.
public enum TrustAnchorLoader {
    /// Loads every certificate in the file at `path` (one DER certificate, or one or more PEM certificates).
    public static func certificates(contentsOfFile path: String) throws(TrustError) -> [Certificate] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TrustError(.unreadableFile, "cannot read certificate file \(path)")
        }
        do {
            return try certificates(from: Array(data))
        } catch {
            throw TrustError(error.code, "\(path): \(error.reason)")
        }
    }

    /// Parses one DER certificate, or every certificate of a PEM text, and checks each against Apple's known roots.
    public static func certificates(from bytes: [UInt8]) throws(TrustError) -> [Certificate] {
        let parsed: [Certificate]
        if let text = String(validating: bytes, as: UTF8.self), text.contains("-----BEGIN") {
            do {
                parsed = try PEMDocument.parseMultiple(pemString: text)
                    .filter { $0.discriminator == "CERTIFICATE" }
                    .map { try Certificate(derEncoded: $0.derBytes) }
            } catch {
                throw TrustError(
                    .notACertificate, "PEM text whose CERTIFICATE block is no readable X.509 certificate")
            }
            guard !parsed.isEmpty else {
                throw TrustError(.notACertificate, "PEM text without a CERTIFICATE block")
            }
        } else {
            do {
                parsed = [try Certificate(derEncoded: bytes)]
            } catch {
                let looksLikeText = String(validating: bytes, as: UTF8.self) != nil
                throw TrustError(
                    .notACertificate,
                    looksLikeText
                        ? "a text file, not a certificate: give a DER (.cer, .der) or PEM (-----BEGIN CERTIFICATE-----) file"
                        : "neither a DER nor a PEM certificate")
            }
        }
        for certificate in parsed {
            try refuseImpostor(certificate)
        }
        return parsed
    }

    /// The lowercase hex SHA-256 fingerprint of a certificate's DER bytes.
    public static func sha256Fingerprint(of certificate: Certificate) -> String {
        var serializer = DER.Serializer()
        // Serializing a parsed certificate cannot fail: it re-emits the bytes it was parsed from.
        try? serializer.serialize(certificate)
        return SHA256.hash(data: serializer.serializedBytes).hexString
    }

    /// Throws when a self-signed certificate carries the name of one of Apple's roots but not its fingerprint.
    public static func refuseImpostor(_ certificate: Certificate) throws(TrustError) {
        guard certificate.subject == certificate.issuer,
            let name = certificate.subject.commonName,
            let known = KnownAppleRoot.claimed(byCommonName: name)
        else { return }
        let fingerprint = sha256Fingerprint(of: certificate)
        guard fingerprint == known.sha256Fingerprint else {
            throw TrustError(
                .impostorAppleRoot,
                "certificate claims to be \"\(known.commonName)\" but its SHA-256 fingerprint is \(fingerprint), "
                    + "not Apple's \(known.sha256Fingerprint); download the real one from "
                    + "https://www.apple.com/certificateauthority/"
            )
        }
    }
}

extension DistinguishedName {
    /// The first common name (CN) of the name, if it has one.
    public var commonName: String? {
        for rdn in self {
            for attribute in rdn where attribute.type == .RDNAttributeType.commonName {
                // The string itself when it is one (the escaped `description` costs ten times more).
                return String(attribute.value) ?? attribute.value.description
            }
        }
        return nil
    }
}

extension Sequence<UInt8> {
    /// Lowercase hexadecimal, two digits per byte.
    package var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
