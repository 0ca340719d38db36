/// A compact JWS (RFC 7515): `BASE64URL(header) "." BASE64URL(payload) "." BASE64URL(signature)`.
///
/// Parsing only splits and decodes; it trusts nothing. ``SignedDataVerifier`` decides whether to believe it.
public struct CompactJWS: Sendable {
    /// The largest input accepted by default. Apple's biggest documents (notifications carrying two signed
    /// documents) are about 15 KB.
    public static let defaultMaximumSize = 1 << 20

    /// The decoded header.
    public let header: JWSHeader
    /// The decoded payload bytes (JSON for Apple's documents).
    public let payload: [UInt8]
    /// The decoded signature; for ES256, raw r‖s, 64 bytes.
    public let signature: [UInt8]
    /// The bytes the signature covers: the ASCII of `header "." payload` as sent.
    public let signingInput: [UInt8]

    /// Parses compact JWS text.
    public init(_ text: String, maximumSize: Int = defaultMaximumSize) throws(SignedDataParsingError) {
        try self.init(bytes: Array(text.utf8), maximumSize: maximumSize)
    }

    /// Parses compact JWS bytes (ASCII). Surrounding whitespace, such as a file's final newline, is ignored.
    public init(bytes input: [UInt8], maximumSize: Int = defaultMaximumSize) throws(SignedDataParsingError) {
        try self.init(bytes: input, maximumSize: maximumSize, headerCache: nil)
    }

    init(bytes input: [UInt8], maximumSize: Int = defaultMaximumSize, headerCache: JWSHeaderCache?)
        throws(SignedDataParsingError)
    {
        guard input.count <= maximumSize else {
            throw SignedDataParsingError(
                .inputTooLarge, "\(input.count) bytes is more than the limit of \(maximumSize)")
        }
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        let start = input.firstIndex { !isSpace($0) } ?? input.endIndex
        let end = (input.lastIndex { !isSpace($0) }).map { $0 + 1 } ?? start
        let text = input[start..<end]
        guard let firstDot = text.firstIndex(of: UInt8(ascii: ".")),
            let secondDot = text[(firstDot + 1)...].firstIndex(of: UInt8(ascii: "."))
        else {
            throw SignedDataParsingError(.malformedJWS, "a compact JWS has three parts separated by dots")
        }
        let headerText = text[text.startIndex..<firstDot]
        let payloadText = text[(firstDot + 1)..<secondDot]
        let signatureText = text[(secondDot + 1)...]
        guard !signatureText.contains(UInt8(ascii: ".")) else {
            throw SignedDataParsingError(.malformedJWS, "more than three parts (a JWE, or two documents joined)")
        }
        guard !headerText.isEmpty, !payloadText.isEmpty, !signatureText.isEmpty else {
            throw SignedDataParsingError(.malformedJWS, "an empty part (an unsigned or detached-payload JWS)")
        }
        func decode(_ part: ArraySlice<UInt8>, _ name: String) throws(SignedDataParsingError) -> [UInt8] {
            guard let bytes = Base64.decode(part, alphabet: .url) else {
                throw SignedDataParsingError(.malformedBase64, "the \(name) is not unpadded base64url")
            }
            return bytes
        }
        if let headerCache {
            header = try headerCache.header(for: headerText) { () throws(SignedDataParsingError) in
                try JWSHeader(json: decode(headerText, "header"))
            }
        } else {
            header = try JWSHeader(json: decode(headerText, "header"))
        }
        payload = try decode(payloadText, "payload")
        signature = try decode(signatureText, "signature")
        signingInput = Array(text[text.startIndex..<secondDot])
    }

    /// The payload decoded as a model.
    public func decodePayload<Payload: PayloadModel>(as type: Payload.Type) throws(SignedDataParsingError) -> Payload {
        try Payload(jsonBytes: payload)
    }
}

/// The protected header of a JWS.
public struct JWSHeader: Sendable, Hashable {
    /// `alg`: the signature algorithm the header claims. Only "ES256" is ever accepted.
    public let algorithm: String
    /// `x5c`: the certificate chain, leaf first, as DER. Nil when the header has no `x5c`.
    public let certificateChain: [[UInt8]]?
    /// `kid`, when present (Xcode writes "Apple_Xcode_Key"); never used to find a key.
    public let keyID: String?
    /// Every member of the header as written.
    public let fields: JSONObject

    /// Header members that name another source for the key or demand extensions: a verifier refuses them.
    public static let refusedMembers = ["jwk", "jku", "x5u", "crit"]

    /// Reads a header from its JSON.
    public init(json: [UInt8]) throws(SignedDataParsingError) {
        let value: JSONValue
        do {
            value = try JSONScanner.read(json) { scanner in try scanner.value() }
        } catch let error as SignedDataParsingError {
            throw SignedDataParsingError(.malformedHeader, "the header is not JSON: \(error.reason)")
        } catch {
            throw SignedDataParsingError(.malformedHeader, "the header is not JSON")
        }
        guard case .object(let fields) = value else {
            throw SignedDataParsingError(.malformedHeader, "the header is not a JSON object")
        }
        guard case .string(let algorithm)? = fields["alg"] else {
            throw SignedDataParsingError(.malformedHeader, "the header has no \"alg\" string")
        }
        var chain: [[UInt8]]?
        if let x5c = fields["x5c"] {
            guard case .array(let elements) = x5c else {
                throw SignedDataParsingError(.malformedHeader, "\"x5c\" is not an array")
            }
            chain = []
            for (index, element) in elements.enumerated() {
                guard case .string(let text) = element, let der = Base64.decode(text.utf8, alphabet: .standard),
                    !der.isEmpty
                else {
                    throw SignedDataParsingError(.malformedHeader, "x5c[\(index)] is not a base64 certificate")
                }
                chain?.append(der)
            }
        }
        self.algorithm = algorithm
        self.certificateChain = chain
        self.keyID = fields["kid"]?.stringValue
        self.fields = fields
    }
}
