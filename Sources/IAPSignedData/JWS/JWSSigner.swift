public import Crypto
import SwiftASN1
public import X509

/// Signs compact JWS with ES256, as the App Store does: the simulator signs transactions, renewal information and
/// notifications with an `x5c` chain; App Store Server API tokens carry a `kid` instead.
public struct JWSSigner: Sendable {
    /// The signing key (the leaf certificate's key when there is a chain).
    public let privateKey: P256.Signing.PrivateKey
    /// The protected header every document gets.
    public let header: JSONObject
    private let encodedHeader: [UInt8]

    /// A signer whose header is `{"alg":"ES256","x5c":[...]}` with the chain, leaf first.
    public init(privateKey: P256.Signing.PrivateKey, certificateChain: [Certificate]) throws {
        var x5c: [JSONValue] = []
        for certificate in certificateChain {
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            x5c.append(
                .string(String(decoding: Base64.encode(serializer.serializedBytes, alphabet: .standard), as: UTF8.self))
            )
        }
        self.init(privateKey: privateKey, header: JSONObject([("alg", .string("ES256")), ("x5c", .array(x5c))]))
    }

    /// A signer whose header is `{"alg":"ES256","kid":...,"typ":"JWT"}`, as App Store Server API tokens use.
    public init(privateKey: P256.Signing.PrivateKey, keyID: String) {
        self.init(
            privateKey: privateKey,
            header: JSONObject([("alg", .string("ES256")), ("kid", .string(keyID)), ("typ", .string("JWT"))]))
    }

    /// A signer with a header of the caller's making. Tests use it to forge documents; `alg` is not checked.
    public init(privateKey: P256.Signing.PrivateKey, header: JSONObject) {
        self.privateKey = privateKey
        self.header = header
        self.encodedHeader = Base64.encode(JSONWriter.bytes(.object(header)), alphabet: .url)
    }

    /// Signs payload bytes and returns the compact JWS.
    public func sign(payload: some Collection<UInt8>) throws -> String {
        var signingInput = encodedHeader
        signingInput.append(UInt8(ascii: "."))
        signingInput += Base64.encode(payload, alphabet: .url)
        let signature = try privateKey.signature(for: signingInput)
        signingInput.append(UInt8(ascii: "."))
        signingInput += Base64.encode(signature.rawRepresentation, alphabet: .url)
        return String(decoding: signingInput, as: UTF8.self)
    }

    /// Signs a payload model (encoded as compact JSON) and returns the compact JWS.
    public func sign(_ payload: some PayloadModel) throws -> String {
        try sign(payload: payload.jsonBytes())
    }
}

/// Base64url without padding, for callers assembling or taking apart JWS by hand (tests forging documents).
public enum Base64URL {
    /// The unpadded base64url text of `bytes`.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        String(decoding: Base64.encode(bytes, alphabet: .url), as: UTF8.self)
    }

    /// The bytes `text` encodes, or nil when it is not canonical unpadded base64url.
    public static func decode(_ text: String) -> [UInt8]? {
        Base64.decode(text.utf8, alphabet: .url)
    }
}
