public import Foundation
import IAPSignedData
import IAPTrust

/// StoreKit's `VerificationResult`: a signed document and whether it verified (here against the session's roots,
/// with IAPKit's verifier: the chain to the root, the signature, the app and the environment).
@frozen public enum VerificationResult<SignedType: Sendable>: Sendable {
    /// The document did not verify.
    case unverified(SignedType, VerificationResult<SignedType>.VerificationError)
    /// The document verified.
    case verified(SignedType)

    /// Why a document did not verify.
    public enum VerificationError: Error, Sendable, Hashable {
        case invalidCertificateChain
        case invalidDeviceVerification
        case invalidEncoding
        case invalidSignature
        case revokedCertificate
    }

    /// The payload when it verified; the verification error otherwise.
    public var payloadValue: SignedType {
        get throws {
            switch self {
            case .verified(let value): return value
            case .unverified(_, let error): throw error
            }
        }
    }

    /// The payload, verified or not.
    public var unsafePayloadValue: SignedType {
        switch self {
        case .verified(let value), .unverified(let value, _): value
        }
    }
}

extension VerificationResult where SignedType == Transaction {
    /// The signed document, as the App Store sent it (what a server verifies).
    public var jwsRepresentation: String { unsafePayloadValue.jws }

    /// The JWS header's bytes (base64url-decoded).
    public var headerData: Data { JWSParts.part(0, of: jwsRepresentation) }
    /// The JWS payload's bytes.
    public var payloadData: Data { JWSParts.part(1, of: jwsRepresentation) }
    /// The signature's bytes.
    public var signatureData: Data { JWSParts.part(2, of: jwsRepresentation) }
    /// What the signature covers: the header and payload parts as they appear in the JWS.
    public var signedData: Data { Data(jwsRepresentation.split(separator: ".").prefix(2).joined(separator: ".").utf8) }

    /// When the App Store signed the document.
    public var signedDate: Date { unsafePayloadValue.signedDate }
}

/// The parts of a compact JWS.
enum JWSParts {
    /// The nonce of a document signed without one.
    static let nilUUID = UUID(uuidString: "00000000-0000-0000-0000-000000000000")!

    /// Part `index` (0 header, 1 payload, 2 signature), base64url-decoded; empty when there is no such part.
    static func part(_ index: Int, of jws: String) -> Data {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard index < parts.count, let bytes = Base64URL.decode(String(parts[index])) else { return Data() }
        return Data(bytes)
    }
}

extension VerificationResult.VerificationError {
    /// The StoreKit error that stands for IAPKit's first failed check.
    init(_ failures: [VerificationFailure]) {
        let codes = Set(failures.map(\.code))
        if codes.contains(.signatureInvalid) || codes.contains(.signerCertificateNotFound) {
            self = .invalidSignature
        } else if !codes.isDisjoint(with: [
            .chainUntrusted, .certificateExpired, .certificateNotYetValid, .leafMarkerMissing,
            .intermediateMarkerMissing, .leafIsCertificateAuthority, .unexpectedChainLength, .malformedCertificate,
            .tooManyCertificates, .xcodeSignedNotAllowed, .certificateChainMissing,
        ]) {
            self = .invalidCertificateChain
        } else {
            // The app, the environment or the document's own fields: not what the device was given.
            self = .invalidEncoding
        }
    }
}
