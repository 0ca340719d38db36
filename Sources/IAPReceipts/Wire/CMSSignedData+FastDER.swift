import SwiftASN1

extension CMSSignedData {
    /// The DER encoding of the signedData object identifier's content.
    private static let signedDataOID: [UInt8] = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02]

    /// Reads a DER `ContentInfo` of signed data by walking its skeleton with ``DERReader``: certificates stay raw
    /// bytes, the content is copied once, and only the small structures (digest algorithms, signer infos) go through
    /// swift-asn1. Returns `nil` for BER input (indefinite lengths), which ``init(contentInfo:)`` reads instead.
    ///
    /// Both readers produce the same value for the same DER input; the test suite checks that on every corpus
    /// receipt and on fuzzed ones.
    static func readFastDER(_ input: ArraySlice<UInt8>) throws(DERReader.Failure) -> CMSSignedData? {
        let result = input.withUnsafeBufferPointer { buffer -> Result<CMSSignedData?, DERReader.Failure> in
            do throws(DERReader.Failure) {
                var top = DERReader(buffer)
                let contentInfo = try top.expect(0x30, "ContentInfo")
                guard top.isAtEnd else { throw .malformed("bytes after the ContentInfo") }
                var info = top.children(of: contentInfo)
                let type = try info.expect(0x06, "the content type")
                guard top.bytes(type.content) == signedDataOID else {
                    throw .unexpected("ContentInfo is not signedData")
                }
                var explicit = info.children(of: try info.expect(0xa0, "the [0] content"))
                let signedDataElement = try explicit.expect(0x30, "CMSSignedData")
                guard explicit.isAtEnd, info.isAtEnd else { throw .unexpected("extra elements in ContentInfo") }

                var fields = top.children(of: signedDataElement)
                let version = try top.int(try fields.expect(0x02, "CMSSignedData version"))
                let digestSet = try fields.expect(0x31, "digestAlgorithms")
                var digestAlgorithms: [AlgorithmIdentifier] = []
                var digests = top.children(of: digestSet)
                while let element = try digests.next() {
                    digestAlgorithms.append(try algorithm(element, top))
                }

                var encapsulated = top.children(of: try fields.expect(0x30, "encapContentInfo"))
                let contentType = try swiftASN1(
                    ASN1ObjectIdentifier.self, top.bytes(try encapsulated.expect(0x06, "eContentType").encoded))
                var content: [UInt8]?
                if let wrapper = try encapsulated.optional(0xa0) {
                    var octets = top.children(of: wrapper)
                    let string = try octets.expect(0x04, "eContent")
                    guard octets.isAtEnd else { throw .unexpected("extra elements in eContent") }
                    content = top.bytes(string.content)
                }
                guard encapsulated.isAtEnd else { throw .unexpected("extra elements in encapContentInfo") }

                var certificates: [ArraySlice<UInt8>] = []
                if let set = try fields.optional(0xa0) {
                    var reader = top.children(of: set)
                    while let certificate = try reader.next() {
                        guard certificate.tag == 0x30 else {
                            throw .unexpected("certificate set holds a non-certificate")
                        }
                        certificates.append(DERReader.slice(input, certificate.encoded))
                    }
                }
                var revocation: ASN1Any?
                if let element = try fields.optional(0xa1) {
                    revocation = try swiftASN1(ASN1Any.self, top.bytes(element.encoded))
                }
                let signerSet = try fields.expect(0x31, "signerInfos")
                guard fields.isAtEnd else { throw .unexpected("extra elements in CMSSignedData") }
                var signers = top.children(of: signerSet)
                var signerInfos: [SignerInfo] = []
                while let element = try signers.next() {
                    signerInfos.append(try readSignerInfo(element, top, input))
                }
                var signedData = CMSSignedData(
                    version: version, digestAlgorithms: digestAlgorithms, contentType: contentType, content: content,
                    certificates: certificates, signerInfos: signerInfos)
                signedData.revocationInfo = revocation
                return .success(signedData)
            } catch .indefiniteLength {
                return .success(nil)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Reads a SignerInfo without signed attributes (how Apple signs receipts) in place; one with signed or unsigned
    /// attributes goes to swift-asn1 whole.
    private static func readSignerInfo(_ element: DERReader.Element, _ top: DERReader, _ input: ArraySlice<UInt8>)
        throws(DERReader.Failure) -> SignerInfo
    {
        var fields = top.children(of: element)
        let version = try top.int(try fields.expect(0x02, "SignerInfo version"))
        let sid = try fields.expect(0x30, "SignerInfo sid")
        let digest = try algorithm(try fields.expect(0x30, "SignerInfo digestAlgorithm"), top)
        guard let next = try fields.next(), next.tag == 0x30 else {
            return try swiftASN1(SignerInfo.self, top.bytes(element.encoded))
        }
        let signatureAlgorithm = try algorithm(next, top)
        let signature = try fields.expect(0x04, "SignerInfo signature")
        guard fields.isAtEnd else { return try swiftASN1(SignerInfo.self, top.bytes(element.encoded)) }
        do {
            return try SignerInfo(
                version: version, issuerAndSerialNumber: DERReader.slice(input, sid.encoded), digestAlgorithm: digest,
                signedAttributes: nil, signatureAlgorithm: signatureAlgorithm, signature: top.bytes(signature.content))
        } catch {
            throw .unexpected("SignerInfo: \(DERReader.message(error))")
        }
    }

    /// The algorithm identifiers receipts use, by their exact DER bytes, so the hot path skips parsing them.
    private static let knownAlgorithms: [[UInt8]: AlgorithmIdentifier] = {
        var known: [[UInt8]: AlgorithmIdentifier] = [:]
        for oid: ASN1ObjectIdentifier in [
            .DigestAndSignature.sha1, .DigestAndSignature.sha256, .DigestAndSignature.rsaEncryption,
            .DigestAndSignature.sha1WithRSAEncryption, .DigestAndSignature.sha256WithRSAEncryption,
        ] {
            for identifier in [AlgorithmIdentifier(algorithm: oid), .withNullParameters(oid)] {
                var coder = DER.Serializer()
                try? coder.serialize(identifier)
                known[coder.serializedBytes] = identifier
            }
        }
        return known
    }()

    private static func algorithm(_ element: DERReader.Element, _ top: DERReader) throws(DERReader.Failure)
        -> AlgorithmIdentifier
    {
        let bytes = top.bytes(element.encoded)
        if let known = knownAlgorithms[bytes] { return known }
        return try swiftASN1(AlgorithmIdentifier.self, bytes)
    }

    /// Parses a small structure with swift-asn1, reporting its errors as unexpected structure.
    private static func swiftASN1<T: DERParseable>(_ type: T.Type, _ bytes: [UInt8]) throws(DERReader.Failure) -> T {
        do {
            return try T(derEncoded: bytes)
        } catch {
            throw .unexpected("\(T.self): \(DERReader.message(error))")
        }
    }
}
