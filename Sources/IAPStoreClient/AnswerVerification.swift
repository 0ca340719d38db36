public import Crypto
public import Foundation
import IAPCore

/// How the app checks the validation server's answers before it unlocks anything from them (`SignedAnswer` of
/// IAPCore): every request carries a new nonce, and a successful answer must carry the server's signature over the
/// nonce, the request, the status, the time and the body, by one of the keys the app embeds.
///
/// A proxy on the customer's own device can rewrite plain JSON; it cannot sign. An answer that is unsigned, signed by
/// an unknown key, changed, given for an earlier request, or older (or newer) than `tolerance` by the device's clock is
/// refused with a typed error (``StoreError/Code/answerNotSigned``, ``StoreError/Code/answerSignatureInvalid``,
/// ``StoreError/Code/answerReplayed``, ``StoreError/Code/answerStale``), and nothing is unlocked.
///
/// Rotation: embed the new public key beside the old (ids tell them apart), ship the app, then move the server to the
/// new key; drop the old key in a later version.
public struct AnswerVerification: Sendable {
    /// The server's public keys, by key id.
    public var keys: [String: P256.Signing.PublicKey]
    /// How far the answer's time may be from the device's clock, either way.
    public var tolerance: TimeInterval
    let clock: @Sendable () -> Date
    let nonce: @Sendable () -> String

    /// - Parameters:
    ///   - keys: the server's public keys (`iapkit serve --answer-key` holds the private halves), by key id.
    ///   - tolerance: how far the answer's time may be from `clock`, either way.
    ///   - clock: the device's clock.
    ///   - nonce: where a request's nonce comes from (16 to 128 letters, digits, `-`, `_`; new each time).
    public init(
        keys: [String: P256.Signing.PublicKey], tolerance: TimeInterval = 300,
        clock: @escaping @Sendable () -> Date = { Date() },
        nonce: @escaping @Sendable () -> String = AnswerVerification.randomNonce
    ) {
        self.keys = keys
        self.tolerance = tolerance
        self.clock = clock
        self.nonce = nonce
    }

    /// 32 hexadecimal digits from the system's random source.
    public static func randomNonce() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in String(generator.next() as UInt64, radix: 16).leftPadded(to: 16) }.joined()
    }

    /// Checks an answer to `method target` sent with `requestBody` and `nonce`; refusals (non-2xx) carry nothing to
    /// unlock and are not checked. The signature is checked over the nonce the answer names first, so an answer signed
    /// by the server for another request is told apart (a replay) from one nobody signed.
    func check(
        _ answer: HTTPTransportAnswer, method: String, target: String, requestBody: [UInt8], nonce: String
    ) throws(StoreError) {
        guard (200..<300).contains(answer.status) else { return }
        let request = "\(method) \(target)"
        guard let header = answer.header(SignedAnswer.signatureHeader) else {
            throw StoreError(.answerNotSigned, "\(request) answered without the server's signature")
        }
        guard let signature = SignedAnswer.Signature(header: header) else {
            throw StoreError(.answerSignatureInvalid, "\(request): the signature header is malformed")
        }
        guard let key = keys[signature.keyID] else {
            throw StoreError(
                .answerSignatureInvalid, "\(request) is signed by key '\(signature.keyID)', not one of the app's")
        }
        let message = SignedAnswer.message(
            method: method, target: target, status: answer.status, nonce: signature.nonce, time: signature.time,
            requestBody: requestBody, body: answer.body)
        guard let ecdsa = try? P256.Signing.ECDSASignature(derRepresentation: signature.signature),
            key.isValidSignature(ecdsa, for: message)
        else {
            throw StoreError(.answerSignatureInvalid, "\(request): the answer does not match its signature")
        }
        guard signature.nonce == nonce else {
            throw StoreError(.answerReplayed, "\(request) was answered with the server's answer to another request")
        }
        let age = clock().timeIntervalSince(Date(millisecondsSince1970: signature.time))
        guard abs(age) <= tolerance else {
            throw StoreError(
                .answerStale,
                "\(request) was signed \(Int(age)) s from the device's clock (at most \(Int(tolerance)))")
        }
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
