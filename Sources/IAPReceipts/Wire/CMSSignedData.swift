public import SwiftASN1

/// A PKCS#7 / CMS `SignedData` (RFC 5652), read from and written as its `ContentInfo` wrapper.
///
/// ```
/// ContentInfo ::= SEQUENCE { contentType OBJECT IDENTIFIER, content [0] EXPLICIT ANY }
/// SignedData ::= SEQUENCE {
///   version CMSVersion, digestAlgorithms SET OF DigestAlgorithmIdentifier,
///   encapContentInfo SEQUENCE { eContentType OBJECT IDENTIFIER, eContent [0] EXPLICIT OCTET STRING OPTIONAL },
///   certificates [0] IMPLICIT CertificateSet OPTIONAL, crls [1] IMPLICIT RevocationInfoChoices OPTIONAL,
///   signerInfos SET OF SignerInfo }
/// ```
/// Reads BER (Xcode writes indefinite lengths and chunked OCTET STRINGs) and DER; writes DER. Certificates are kept as
/// their exact bytes: the trust layer parses them, once per distinct chain.
public struct CMSSignedData: BERImplicitlyTaggable, Hashable, Sendable {
    public static var defaultIdentifier: ASN1Identifier { .sequence }
    static let contextZero = ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)
    static let contextOne = ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific)

    public var version: Int
    public var digestAlgorithms: [AlgorithmIdentifier]
    /// The type of the encapsulated content (`data` for receipts).
    public var contentType: ASN1ObjectIdentifier
    /// The encapsulated content octets (the receipt payload), flattened when the input chunked them.
    public var content: [UInt8]?
    /// The DER bytes of each certificate, in the order they came.
    public var certificates: [ArraySlice<UInt8>]
    /// Revocation information, kept as it came (receipts carry none).
    public var revocationInfo: ASN1Any?
    public var signerInfos: [SignerInfo]

    public init(
        version: Int = 1,
        digestAlgorithms: [AlgorithmIdentifier],
        contentType: ASN1ObjectIdentifier = .CMS.data,
        content: [UInt8]?,
        certificates: [ArraySlice<UInt8>],
        signerInfos: [SignerInfo]
    ) {
        self.version = version
        self.digestAlgorithms = digestAlgorithms
        self.contentType = contentType
        self.content = content
        self.certificates = certificates
        self.revocationInfo = nil
        self.signerInfos = signerInfos
    }

    /// Parses a `ContentInfo` of type signedData from its root node.
    public init(contentInfo node: ASN1Node) throws {
        self = try BER.sequence(node, identifier: .sequence) { nodes in
            let type = try ASN1ObjectIdentifier(berEncoded: &nodes)
            guard type == .CMS.signedData else {
                throw ASN1Error.invalidASN1Object(reason: "ContentInfo of type \(type), not signedData")
            }
            return try BER.explicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) { node in
                try CMSSignedData(berEncoded: node)
            }
        }
    }

    /// The DER bytes of the `ContentInfo` holding this signed data.
    public func contentInfoBytes() throws -> [UInt8] {
        var coder = DER.Serializer()
        try coder.appendConstructedNode(identifier: .sequence) { coder in
            try coder.serialize(ASN1ObjectIdentifier.CMS.signedData)
            try coder.serialize(self, explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific)
        }
        return coder.serializedBytes
    }

    public init(berEncoded node: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
        self = try BER.sequence(node, identifier: identifier) { nodes in
            let version = try Int(berEncoded: &nodes)
            let digestAlgorithms = try BER.set(of: AlgorithmIdentifier.self, identifier: .set, nodes: &nodes)
            guard let encapsulated = nodes.next() else {
                throw ASN1Error.invalidASN1Object(reason: "SignedData without encapsulated content")
            }
            let (contentType, content) = try BER.sequence(encapsulated, identifier: .sequence) { inner in
                let type = try ASN1ObjectIdentifier(berEncoded: &inner)
                let octets = try BER.optionalExplicitlyTagged(&inner, tagNumber: 0, tagClass: .contextSpecific) {
                    try ASN1OctetString(berEncoded: $0)
                }
                return (type, octets.map { Array($0.bytes) })
            }
            var next = nodes.next()
            var certificates: [ArraySlice<UInt8>] = []
            if let node = next, node.identifier == Self.contextZero {
                certificates = try BER.sequence(node, identifier: Self.contextZero) { children in
                    var certificates: [ArraySlice<UInt8>] = []
                    while let child = children.next() {
                        guard child.identifier == .sequence else {
                            throw ASN1Error.invalidASN1Object(reason: "certificate set holds a non-certificate")
                        }
                        certificates.append(child.encodedBytes)
                    }
                    return certificates
                }
                next = nodes.next()
            }
            var revocationInfo: ASN1Any?
            if let node = next, node.identifier == Self.contextOne {
                revocationInfo = ASN1Any(berEncoded: node)
                next = nodes.next()
            }
            guard let signersNode = next else {
                throw ASN1Error.invalidASN1Object(reason: "SignedData without signerInfos")
            }
            let signerInfos = try BER.set(of: SignerInfo.self, identifier: .set, rootNode: signersNode)
            var signedData = CMSSignedData(
                version: version, digestAlgorithms: digestAlgorithms, contentType: contentType, content: content,
                certificates: certificates, signerInfos: signerInfos)
            signedData.revocationInfo = revocationInfo
            return signedData
        }
    }

    public init(derEncoded node: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
        try self.init(berEncoded: node, withIdentifier: identifier)
    }

    public func serialize(into coder: inout DER.Serializer, withIdentifier identifier: ASN1Identifier) throws {
        try coder.appendConstructedNode(identifier: identifier) { coder in
            try coder.serialize(version)
            try coder.serializeSetOf(digestAlgorithms)
            try coder.appendConstructedNode(identifier: .sequence) { coder in
                try coder.serialize(contentType)
                if let content {
                    try coder.serialize(
                        ASN1OctetString(contentBytes: content[...]), explicitlyTaggedWithTagNumber: 0,
                        tagClass: .contextSpecific)
                }
            }
            if !certificates.isEmpty {
                coder.appendConstructedNode(identifier: Self.contextZero) { coder in
                    for certificate in certificates { coder.serializeRawBytes(certificate) }
                }
            }
            if let revocationInfo { try coder.serialize(revocationInfo) }
            try coder.serializeSetOf(signerInfos)
        }
    }
}
