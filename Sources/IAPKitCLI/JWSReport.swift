import Foundation
import IAPSignedData
import IAPTrust
import SwiftASN1
import X509

/// JSON payloads as `Encodable`, for the commands' JSON Lines (numbers written as integers when they are whole).
struct EncodableJSON: Encodable {
    let value: JSONValue

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch value {
        case .null: try container.encodeNil()
        case .bool(let flag): try container.encode(flag)
        case .number(let number):
            if let integer = number.int64Value {
                try container.encode(integer)
            } else {
                try container.encode(number.doubleValue ?? 0)
            }
        case .string(let text): try container.encode(text)
        case .array(let elements): try container.encode(elements.map(EncodableJSON.init))
        case .object(let object):
            var keyed = encoder.container(keyedBy: AnyKey.self)
            for member in object.members {
                try keyed.encode(EncodableJSON(value: member.value), forKey: AnyKey(stringValue: member.key))
            }
        }
    }

    struct AnyKey: CodingKey {
        let stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }
}

/// One certificate of an `x5c` chain, for people.
struct CertificateReport: Encodable {
    let subject: String
    let issuer: String
    let notValidBefore: String
    let notValidAfter: String
    let sha256: String

    init?(der: [UInt8]) {
        guard let certificate = try? Certificate(derEncoded: der) else { return nil }
        subject = certificate.subject.description
        issuer = certificate.issuer.description
        notValidBefore = certificate.notValidBefore.formatted(.iso8601)
        notValidAfter = certificate.notValidAfter.formatted(.iso8601)
        sha256 = TrustAnchorLoader.sha256Fingerprint(of: certificate)
    }
}

/// A decoded JWS: its header, its kind and its payload, and the documents nested in it.
struct DecodedJWSReport: Encodable {
    let file: String?
    let field: String?
    let algorithm: String
    let keyID: String?
    let certificates: [CertificateReport?]
    let type: String?
    let payload: EncodableJSON
    let nested: [DecodedJWSReport]

    init(file: String?, field: String?, jws: CompactJWS) {
        self.file = file
        self.field = field
        algorithm = jws.header.algorithm
        keyID = jws.header.keyID
        certificates = (jws.header.certificateChain ?? []).map(CertificateReport.init(der:))
        type = SignedPayloadKind.detect(payload: jws.payload)?.rawValue
        let payload = (try? JSONValue(jsonBytes: jws.payload)) ?? .string(String(decoding: jws.payload, as: UTF8.self))
        self.payload = EncodableJSON(value: payload)
        var nested: [DecodedJWSReport] = []
        for (path, text) in Self.nestedDocuments(in: payload) {
            if let inner = try? CompactJWS(text) { nested.append(DecodedJWSReport(file: nil, field: path, jws: inner)) }
        }
        self.nested = nested
    }

    /// The signed documents a notification carries, by field.
    static func nestedDocuments(in payload: JSONValue) -> [(String, String)] {
        [
            ("data", "signedTransactionInfo"), ("data", "signedRenewalInfo"), ("appData", "signedAppTransactionInfo"),
        ].compactMap { parent, field in
            payload[parent]?[field]?.stringValue.map { ("\(parent).\(field)", $0) }
        }
    }
}

/// The JSON view of one signed-data verdict.
struct JWSVerdictReport: Encodable {
    let file: String?
    let field: String?
    let valid: Bool
    let type: String?
    let failures: [String]
    let reasons: [ErrorReport.Detail]
    let skippedChecks: [ErrorReport.Detail]
    let chain: String?
    let chainValidationTime: String?
    let payload: EncodableJSON?
    let nested: [JWSVerdictReport]

    init(file: String?, field: String?, verdict: SignedDataVerdict<SignedPayload>) {
        self.file = file
        self.field = field
        valid = verdict.isValid
        type = verdict.payload?.kind.rawValue
        failures = verdict.failures.map(\.code.rawValue)
        reasons = verdict.failures.map { .init(code: $0.code.rawValue, reason: $0.reason, field: $0.field) }
        skippedChecks = verdict.skippedChecks.map { .init(code: $0.code.rawValue, reason: $0.reason) }
        chain = verdict.chainKind?.rawValue
        chainValidationTime = verdict.chainValidationTime?.formatted(.iso8601)
        payload = verdict.payload.map { EncodableJSON(value: $0.json) }
        nested = verdict.nested.map { JWSVerdictReport(file: nil, field: $0.field, verdict: $0.verdict) }
    }

    enum Keys: String, CodingKey {
        case file, field, valid, type, failures, reasons, skippedChecks, chain, chainValidationTime, payload, nested
    }

    /// Every key is written, with null where there is nothing, so consumers see one shape.
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        if let file { try c.encode(file, forKey: .file) }
        if let field { try c.encode(field, forKey: .field) }
        try c.encode(valid, forKey: .valid)
        try c.encode(type, forKey: .type)
        try c.encode(failures, forKey: .failures)
        try c.encode(reasons, forKey: .reasons)
        try c.encode(skippedChecks, forKey: .skippedChecks)
        try c.encode(chain, forKey: .chain)
        try c.encode(chainValidationTime, forKey: .chainValidationTime)
        try c.encode(payload, forKey: .payload)
        try c.encode(nested, forKey: .nested)
    }
}
