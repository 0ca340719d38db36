public import SwiftASN1

/// `AlgorithmIdentifier ::= SEQUENCE { algorithm OBJECT IDENTIFIER, parameters ANY OPTIONAL }`.
public struct AlgorithmIdentifier: BERImplicitlyTaggable, Hashable, Sendable {
    public static var defaultIdentifier: ASN1Identifier { .sequence }

    public var algorithm: ASN1ObjectIdentifier
    public var parameters: ASN1Any?

    public init(algorithm: ASN1ObjectIdentifier, parameters: ASN1Any? = nil) {
        self.algorithm = algorithm
        self.parameters = parameters
    }

    public init(berEncoded node: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
        self = try BER.sequence(node, identifier: identifier) { nodes in
            let algorithm = try ASN1ObjectIdentifier(berEncoded: &nodes)
            let parameters = nodes.next().map { ASN1Any(berEncoded: $0) }
            return AlgorithmIdentifier(algorithm: algorithm, parameters: parameters)
        }
    }

    public init(derEncoded node: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
        try self.init(berEncoded: node, withIdentifier: identifier)
    }

    public func serialize(into coder: inout DER.Serializer, withIdentifier identifier: ASN1Identifier) throws {
        try coder.appendConstructedNode(identifier: identifier) { coder in
            try coder.serialize(algorithm)
            if let parameters { try coder.serialize(parameters) }
        }
    }

    /// An algorithm with an explicit NULL parameter, as RSA and SHA identifiers are usually written.
    static func withNullParameters(_ algorithm: ASN1ObjectIdentifier) -> AlgorithmIdentifier {
        AlgorithmIdentifier(algorithm: algorithm, parameters: try? ASN1Any(erasing: ASN1Null()))
    }
}

extension ASN1ObjectIdentifier {
    /// The PKCS#7 / CMS object identifiers receipts use.
    public enum CMS {
        public static let data: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 1]
        public static let signedData: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 2]
        public static let contentTypeAttribute: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 9, 3]
        public static let messageDigestAttribute: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 9, 4]
        public static let signingTimeAttribute: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 9, 5]
    }

    /// Digest and RSA signature algorithm identifiers.
    public enum DigestAndSignature {
        public static let sha1: ASN1ObjectIdentifier = [1, 3, 14, 3, 2, 26]
        public static let sha256: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 1]
        public static let rsaEncryption: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 1, 1]
        public static let sha1WithRSAEncryption: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 1, 5]
        public static let sha256WithRSAEncryption: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 1, 11]
    }
}
