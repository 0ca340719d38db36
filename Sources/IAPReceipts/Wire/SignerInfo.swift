public import SwiftASN1

/// A CMS `SignerInfo`: who signed (issuer and serial number), with which algorithms, over which attributes.
///
/// ```
/// SignerInfo ::= SEQUENCE {
///   version CMSVersion, sid SignerIdentifier, digestAlgorithm DigestAlgorithmIdentifier,
///   signedAttrs [0] IMPLICIT SignedAttributes OPTIONAL, signatureAlgorithm SignatureAlgorithmIdentifier,
///   signature OCTET STRING, unsignedAttrs [1] IMPLICIT UnsignedAttributes OPTIONAL }
/// ```
public struct SignerInfo: BERImplicitlyTaggable, Hashable, Sendable {
    public static var defaultIdentifier: ASN1Identifier { .sequence }
    static let signedAttributesTag = ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)
    static let unsignedAttributesTag = ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific)

    public var version: Int
    /// The DER bytes of the `IssuerAndSerialNumber` naming the signing certificate.
    public var issuerAndSerialNumber: ArraySlice<UInt8>
    public var digestAlgorithm: AlgorithmIdentifier
    /// The signed attributes, when the signature covers them rather than the content itself.
    public var signedAttributes: [CMSAttribute]?
    /// The exact bytes the signature covers when there are signed attributes: their encoding with a SET tag.
    public var signedAttributesBytes: [UInt8]?
    public var signatureAlgorithm: AlgorithmIdentifier
    public var signature: [UInt8]
    /// Unsigned attributes, kept as they came.
    public var unsignedAttributes: ASN1Any?

    public init(
        version: Int,
        issuerAndSerialNumber: ArraySlice<UInt8>,
        digestAlgorithm: AlgorithmIdentifier,
        signedAttributes: [CMSAttribute]?,
        signatureAlgorithm: AlgorithmIdentifier,
        signature: [UInt8]
    ) throws {
        self.version = version
        self.issuerAndSerialNumber = issuerAndSerialNumber
        self.digestAlgorithm = digestAlgorithm
        self.signedAttributes = signedAttributes
        self.signedAttributesBytes = try signedAttributes.map { try Self.encodeForSigning($0) }
        self.signatureAlgorithm = signatureAlgorithm
        self.signature = signature
    }

    /// The DER encoding of signed attributes as a `SET OF Attribute`: what a signature over them covers.
    public static func encodeForSigning(_ attributes: [CMSAttribute]) throws -> [UInt8] {
        var coder = DER.Serializer()
        try coder.serializeSetOf(attributes)
        return coder.serializedBytes
    }

    public init(berEncoded node: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
        self = try BER.sequence(node, identifier: identifier) { nodes in
            let version = try Int(berEncoded: &nodes)
            guard let sid = nodes.next(), sid.identifier == .sequence else {
                throw ASN1Error.invalidASN1Object(
                    reason: "SignerInfo does not name its signer by issuer and serial number")
            }
            let digestAlgorithm = try AlgorithmIdentifier(berEncoded: &nodes)
            var next = nodes.next()
            var signedAttributes: [CMSAttribute]?
            var signedAttributesBytes: [UInt8]?
            if let attributesNode = next, attributesNode.identifier == Self.signedAttributesTag {
                signedAttributes = try BER.set(attributesNode, identifier: Self.signedAttributesTag) { nodes in
                    var attributes: [CMSAttribute] = []
                    while let node = nodes.next() { attributes.append(try CMSAttribute(berEncoded: node)) }
                    return attributes
                }
                signedAttributesBytes = Self.bytesForSigning(attributesNode, attributes: signedAttributes ?? [])
                next = nodes.next()
            }
            guard let algorithmNode = next else { throw ASN1Error.invalidASN1Object(reason: "SignerInfo too short") }
            let signatureAlgorithm = try AlgorithmIdentifier(berEncoded: algorithmNode)
            let signature = try ASN1OctetString(berEncoded: &nodes)
            var unsigned: ASN1Any?
            if let node = nodes.next() {
                guard node.identifier == Self.unsignedAttributesTag else {
                    throw ASN1Error.unexpectedFieldType(node.identifier)
                }
                unsigned = ASN1Any(berEncoded: node)
            }
            var info = try SignerInfo(
                version: version, issuerAndSerialNumber: sid.encodedBytes, digestAlgorithm: digestAlgorithm,
                signedAttributes: nil, signatureAlgorithm: signatureAlgorithm, signature: Array(signature.bytes))
            info.signedAttributes = signedAttributes
            info.signedAttributesBytes = signedAttributesBytes
            info.unsignedAttributes = unsigned
            return info
        }
    }

    /// The bytes a signature over these attributes covers: exactly the received encoding with the [0] tag replaced by
    /// SET when it is definite-length (so what is checked is what was signed); a DER re-encoding otherwise.
    private static func bytesForSigning(_ node: ASN1Node, attributes: [CMSAttribute]) -> [UInt8]? {
        var bytes = Array(node.encodedBytes)
        if bytes.count > 1, bytes[1] != 0x80 {
            bytes[0] = 0x31
            return bytes
        }
        return try? encodeForSigning(attributes)
    }

    public init(derEncoded node: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
        try self.init(berEncoded: node, withIdentifier: identifier)
    }

    public func serialize(into coder: inout DER.Serializer, withIdentifier identifier: ASN1Identifier) throws {
        try coder.appendConstructedNode(identifier: identifier) { coder in
            try coder.serialize(version)
            coder.serializeRawBytes(issuerAndSerialNumber)
            try coder.serialize(digestAlgorithm)
            if let signedAttributes {
                try coder.serializeSetOf(signedAttributes, identifier: Self.signedAttributesTag)
            }
            try coder.serialize(signatureAlgorithm)
            try coder.serialize(ASN1OctetString(contentBytes: signature[...]))
            if let unsignedAttributes { try coder.serialize(unsignedAttributes) }
        }
    }

    /// The value of the signed attribute of this type, if present with exactly one value.
    public func signedAttribute(_ type: ASN1ObjectIdentifier) -> ASN1Any? {
        guard let matches = signedAttributes?.filter({ $0.type == type }), matches.count == 1,
            matches[0].values.count == 1
        else { return nil }
        return matches[0].values[0]
    }
}
