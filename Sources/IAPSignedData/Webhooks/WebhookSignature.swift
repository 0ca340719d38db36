import Crypto
public import Foundation

/// How the validation server signs the events it sends to an app's backend (its webhooks), and how a receiver checks
/// them: one definition for both sides.
///
/// Each delivery is a `POST` of the event as JSON with
///
/// ```text
/// IAPKit-Event-Id: EVENTID
/// IAPKit-Signature: t=SECONDS,v1=HEX
/// ```
///
/// where `v1` is HMAC-SHA256, keyed with the webhook's secret, over the bytes `SECONDS.BODY` (the Unix time of the
/// attempt in decimal, a full stop, then the body exactly as sent), in lowercase hex. The time is part of the signed
/// bytes, so a receiver that refuses old timestamps refuses replays; the event id is in the body too and stays the
/// same on every retry, so a receiver deduplicates on it. During a rotation a receiver passes both secrets.
///
/// ```swift
/// let event = try WebhookSignature.verify(
///     body: requestBody, header: request.headers["IAPKit-Signature"], secrets: [secret], now: Date())
/// ```
public enum WebhookSignature {
    /// The request header carrying the signature.
    public static let header = "IAPKit-Signature"
    /// The request header carrying the event id (also the body's `id`).
    public static let eventIDHeader = "IAPKit-Event-Id"

    /// The header value for `body` sent at `time` with `secret`.
    public static func sign(body: some DataProtocol, secret: String, time: Date) -> String {
        let seconds = Int64(time.timeIntervalSince1970.rounded(.down))
        return "t=\(seconds),v1=\(hex(mac(body: body, seconds: seconds, secret: secret)))"
    }

    /// Why a delivery was refused.
    public enum Failure: String, Error, Sendable, CustomStringConvertible {
        /// No header, or one not of the form `t=SECONDS,v1=HEX`.
        case malformedHeader
        /// No secret given signs these bytes at that time: forged, altered, or signed with another secret.
        case signatureMismatch
        /// Signed further from `now` than the tolerance: a replay, or a clock far off.
        case stale

        public var description: String {
            switch self {
            case .malformedHeader: "the IAPKit-Signature header is missing or not t=SECONDS,v1=HEX"
            case .signatureMismatch: "the signature does not match the body with any of the secrets"
            case .stale: "the signature's time is outside the tolerance"
            }
        }
    }

    /// Checks that `header` signs `body` with one of `secrets`, at a time within `tolerance` of `now` (five minutes
    /// by default). Throws ``Failure`` otherwise; the comparison takes the same time wherever the bytes differ.
    public static func verify(
        body: some DataProtocol, header: String?, secrets: [String], now: Date, tolerance: TimeInterval = 300
    ) throws(Failure) {
        guard let header, let (seconds, signatures) = parse(header) else { throw .malformedHeader }
        guard abs(now.timeIntervalSince1970 - Double(seconds)) <= tolerance else { throw .stale }
        for secret in secrets {
            let expected = mac(body: body, seconds: seconds, secret: secret)
            if signatures.contains(where: { constantTimeEqual($0, expected) }) { return }
        }
        throw .signatureMismatch
    }

    /// The time and every `v1` signature of a header (a sender may give several during a rotation).
    private static func parse(_ header: String) -> (Int64, [[UInt8]])? {
        guard header.utf8.count <= 1_024 else { return nil }
        var seconds: Int64?
        var signatures: [[UInt8]] = []
        for part in header.split(separator: ",") {
            let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { return nil }
            switch pair[0] {
            case "t": seconds = Int64(pair[1])
            case "v1":
                guard let bytes = unhex(pair[1]) else { return nil }
                signatures.append(bytes)
            default: continue  // a later scheme this version does not know
            }
        }
        guard let seconds, !signatures.isEmpty else { return nil }
        return (seconds, signatures)
    }

    private static func mac(body: some DataProtocol, seconds: Int64, secret: String) -> [UInt8] {
        var hmac = HMAC<SHA256>(key: SymmetricKey(data: Data(secret.utf8)))
        hmac.update(data: Data("\(seconds).".utf8))
        hmac.update(data: body)
        return Array(hmac.finalize())
    }

    private static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func unhex(_ text: Substring) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count.isMultiple(of: 2), utf8.count <= 256 else { return nil }
        func value(_ byte: UInt8) -> UInt8? {
            switch byte {
            case 0x30...0x39: byte - 0x30
            case 0x61...0x66: byte - 0x61 + 10
            case 0x41...0x46: byte - 0x41 + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = value(utf8[index]), let low = value(utf8[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }
}
