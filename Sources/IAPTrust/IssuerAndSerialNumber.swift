package import SwiftASN1
package import X509

/// CMS `IssuerAndSerialNumber ::= SEQUENCE { issuer Name, serialNumber CertificateSerialNumber }`.
package struct IssuerAndSerialNumber: DERImplicitlyTaggable, Sendable {
    package static var defaultIdentifier: ASN1Identifier { .sequence }
    package var issuer: DistinguishedName
    package var serialNumber: Certificate.SerialNumber

    package init(derEncoded der: ArraySlice<UInt8>) throws {
        self = try Self(derEncoded: DER.parse(der))
    }

    package init(derEncoded node: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
        self = try DER.sequence(node, identifier: identifier) { nodes in
            guard let issuerNode = nodes.next() else {
                throw ASN1Error.invalidASN1Object(reason: "IssuerAndSerialNumber without issuer")
            }
            let issuer = try DistinguishedName(derEncoded: issuerNode)
            let serial = try ArraySlice<UInt8>(derEncoded: &nodes)
            return IssuerAndSerialNumber(issuer: issuer, serialNumber: Certificate.SerialNumber(bytes: serial))
        }
    }

    package init(issuer: DistinguishedName, serialNumber: Certificate.SerialNumber) {
        self.issuer = issuer
        self.serialNumber = serialNumber
    }

    package func serialize(into coder: inout DER.Serializer, withIdentifier identifier: ASN1Identifier) throws {
        try coder.appendConstructedNode(identifier: identifier) { coder in
            try coder.serialize(issuer)
            try coder.serialize(ArraySlice(serialNumber.bytes))
        }
    }
}
