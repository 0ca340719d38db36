import Foundation
import IAPSignedData
import Testing

/// The webhook signature both sides share: what the server signs, a receiver checks.
@Suite struct WebhookSignatureTests {
    static let secret = "whsec_0123456789abcdef"
    static let body = Array(#"{"id":"evt_1","type":"renewal"}"#.utf8)
    static let moment = Date(timeIntervalSince1970: 1_790_000_000)

    @Test func aSignedBodyVerifiesWithinTheTolerance() throws {
        let header = WebhookSignature.sign(body: Self.body, secret: Self.secret, time: Self.moment)
        #expect(header.hasPrefix("t=1790000000,v1="))
        #expect(header.count == "t=1790000000,v1=".count + 64)
        try WebhookSignature.verify(body: Self.body, header: header, secrets: [Self.secret], now: Self.moment + 299)
        // During a rotation the receiver passes both secrets.
        try WebhookSignature.verify(
            body: Self.body, header: header, secrets: ["whsec_new_secret_0000", Self.secret], now: Self.moment)
    }

    @Test func aChangedBodyAnotherSecretOrAnOldTimeIsRefused() {
        let header = WebhookSignature.sign(body: Self.body, secret: Self.secret, time: Self.moment)
        var changed = Self.body
        changed[changed.count - 3] ^= 0x01
        #expect(throws: WebhookSignature.Failure.signatureMismatch) {
            try WebhookSignature.verify(body: changed, header: header, secrets: [Self.secret], now: Self.moment)
        }
        #expect(throws: WebhookSignature.Failure.signatureMismatch) {
            try WebhookSignature.verify(
                body: Self.body, header: header, secrets: ["another-secret-0000"], now: Self.moment)
        }
        #expect(throws: WebhookSignature.Failure.stale) {
            try WebhookSignature.verify(body: Self.body, header: header, secrets: [Self.secret], now: Self.moment + 301)
        }
        // The time is signed: moving it to look fresh breaks the signature.
        let moved = header.replacingOccurrences(of: "t=1790000000", with: "t=1790000400")
        #expect(throws: WebhookSignature.Failure.signatureMismatch) {
            try WebhookSignature.verify(body: Self.body, header: moved, secrets: [Self.secret], now: Self.moment + 400)
        }
    }

    @Test(arguments: [
        nil, "", "t=1790000000", "v1=00", "t=abc,v1=00", "t=1790000000,v1=zz", "t=1790000000,v1=0",
        "t=1790000000;v1=00", String(repeating: "v1=00,", count: 400),
    ])
    func aMalformedHeaderIsRefused(_ header: String?) {
        #expect(throws: WebhookSignature.Failure.malformedHeader) {
            try WebhookSignature.verify(body: Self.body, header: header, secrets: [Self.secret], now: Self.moment)
        }
    }

    @Test func anUnknownSchemeBesideV1IsIgnored() throws {
        let header = WebhookSignature.sign(body: Self.body, secret: Self.secret, time: Self.moment)
        try WebhookSignature.verify(
            body: Self.body, header: header + ",v2=future", secrets: [Self.secret], now: Self.moment)
    }
}
