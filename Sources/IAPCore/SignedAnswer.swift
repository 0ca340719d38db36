import Foundation

/// How the validation server signs an answer for an app that asked with a nonce, and what the app checks: one
/// definition of the signed bytes for both sides.
///
/// The app sends `X-IAPKit-Nonce: NONCE` (16 to 128 characters of letters, digits, `-` and `_`, new for every
/// request). The server answers a success with
///
/// ```text
/// X-IAPKit-Signature: v1; kid=KEYID; t=MILLISECONDS; n=NONCE; sig=BASE64
/// ```
///
/// where `sig` is an ES256 signature (P-256, SHA-256, DER) by the server's key `KEYID` over
/// ``message(method:target:status:nonce:time:requestBody:body:)``: the method, the path with its query, the request's
/// body, the status, the nonce, the time and the answer's body, so no part of an answer can be
/// changed, moved to another request or replayed for a later one (the nonce is repeated in the header so an app can
/// tell a replayed answer from a forged one). Refusals (4xx, 5xx) are not signed: an app unlocks
/// nothing from them.
public enum SignedAnswer {
    /// The request header carrying the app's nonce.
    public static let nonceHeader = "X-IAPKit-Nonce"
    /// The answer header carrying the signature.
    public static let signatureHeader = "X-IAPKit-Signature"

    /// Whether `nonce` is one the server signs over.
    public static func isValidNonce(_ nonce: String) -> Bool {
        (16...128).contains(nonce.utf8.count)
            && nonce.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == 0x2D || byte == 0x5F
            }
    }

    /// The bytes signed: a line each for the scheme, the method, the target (path and query as sent), the status, the
    /// nonce, the time in milliseconds since 1970 and the request body's length in bytes; then the request's body, then
    /// the answer's body, each as sent.
    public static func message(
        method: String, target: String, status: Int, nonce: String, time: Int64,
        requestBody: some Collection<UInt8>, body: some Collection<UInt8>
    ) -> [UInt8] {
        var bytes = Array(
            "iapkit-answer-v1\n\(method)\n\(target)\n\(status)\n\(nonce)\n\(time)\n\(requestBody.count)\n".utf8)
        bytes.append(contentsOf: requestBody)
        bytes.append(contentsOf: body)
        return bytes
    }

    /// The parts of a signature header.
    public struct Signature: Hashable, Sendable {
        public var keyID: String
        /// Milliseconds since 1970, by the server's clock.
        public var time: Int64
        /// The nonce the answer was signed for.
        public var nonce: String
        /// The DER-encoded ECDSA signature.
        public var signature: [UInt8]

        public init(keyID: String, time: Int64, nonce: String, signature: [UInt8]) {
            self.keyID = keyID
            self.time = time
            self.nonce = nonce
            self.signature = signature
        }

        /// Reads a header value; nil when it is not one (unknown version, a part missing or malformed).
        public init?(header: String) {
            guard header.utf8.count <= 1_024 else { return nil }
            let parts = header.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.first == "v1" else { return nil }
            var fields: [String: String] = [:]
            for part in parts.dropFirst() {
                let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
                guard pair.count == 2, fields[pair[0]] == nil else { return nil }
                fields[pair[0]] = pair[1]
            }
            guard let keyID = fields["kid"], !keyID.isEmpty, let time = fields["t"].flatMap({ Int64($0) }),
                let nonce = fields["n"], let signature = fields["sig"].flatMap({ Data(base64Encoded: $0) })
            else { return nil }
            self.init(keyID: keyID, time: time, nonce: nonce, signature: Array(signature))
        }

        /// The header value.
        public var header: String {
            "v1; kid=\(keyID); t=\(time); n=\(nonce); sig=\(Data(signature).base64EncodedString())"
        }
    }
}
