public import SwiftASN1

/// `Attribute ::= SEQUENCE { attrType OBJECT IDENTIFIER, attrValues SET OF ANY }` (CMS signed attributes).
public struct CMSAttribute: BERImplicitlyTaggable, Hashable, Sendable {
    public static var defaultIdentifier: ASN1Identifier { .sequence }

    public var type: ASN1ObjectIdentifier
    public var values: [ASN1Any]

    public init(type: ASN1ObjectIdentifier, values: [ASN1Any]) {
        self.type = type
        self.values = values
    }

    public init(berEncoded node: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
        self = try BER.sequence(node, identifier: identifier) { nodes in
            let type = try ASN1ObjectIdentifier(berEncoded: &nodes)
            guard let set = nodes.next() else {
                throw ASN1Error.invalidASN1Object(reason: "attribute without values")
            }
            let values = try BER.set(set, identifier: .set) { nodes in
                var values: [ASN1Any] = []
                while let node = nodes.next() { values.append(ASN1Any(berEncoded: node)) }
                return values
            }
            return CMSAttribute(type: type, values: values)
        }
    }

    public init(derEncoded node: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
        try self.init(berEncoded: node, withIdentifier: identifier)
    }

    public func serialize(into coder: inout DER.Serializer, withIdentifier identifier: ASN1Identifier) throws {
        try coder.appendConstructedNode(identifier: identifier) { coder in
            try coder.serialize(type)
            try coder.serializeSetOf(values)
        }
    }
}
