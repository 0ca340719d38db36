import IAPCore
public import SwiftASN1

/// `ReceiptAttribute ::= SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`, the unit of a receipt payload.
///
/// The value octets hold a DER-encoded ASN.1 value (a string, an integer, or for in-app purchases a nested set of
/// attributes); which one depends on the type. Unknown types are kept as they are.
public struct ReceiptAttribute: BERImplicitlyTaggable, Hashable, Sendable, Codable {
    public static var defaultIdentifier: ASN1Identifier { .sequence }

    public var type: Int
    public var version: Int
    /// The value octets; a slice of the payload they were read from, so reading a receipt copies no attribute.
    public var value: ArraySlice<UInt8>

    public init(type: Int, version: Int = 1, value: ArraySlice<UInt8>) {
        self.type = type
        self.version = version
        self.value = value
    }

    public init(berEncoded node: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
        self = try BER.sequence(node, identifier: identifier) { nodes in
            let type = try Int(berEncoded: &nodes)
            let version = try Int(berEncoded: &nodes)
            let value = try ASN1OctetString(berEncoded: &nodes)
            return ReceiptAttribute(type: type, version: version, value: value.bytes)
        }
    }

    public init(derEncoded node: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
        try self.init(berEncoded: node, withIdentifier: identifier)
    }

    public func serialize(into coder: inout DER.Serializer, withIdentifier identifier: ASN1Identifier) throws {
        try coder.appendConstructedNode(identifier: identifier) { coder in
            try coder.serialize(type)
            try coder.serialize(version)
            try coder.serialize(ASN1OctetString(contentBytes: value))
        }
    }

    /// Parses a DER or BER `SET OF ReceiptAttribute` (a receipt payload, or the value of an in-app attribute).
    public static func parseSet(_ bytes: ArraySlice<UInt8>) throws -> [ReceiptAttribute] {
        var attributes: [ReceiptAttribute] = []
        let walked = try bytes.withUnsafeBufferPointer { buffer throws(ReceiptParsingError) in
            try walkSet(buffer, failure: { ReceiptParsingError(.malformedAttribute, $0) }) { view in
                attributes.append(
                    ReceiptAttribute(type: view.type, version: view.version, value: DERReader.slice(bytes, view.range)))
            }
        }
        if walked { return attributes }
        return try BER.set(of: ReceiptAttribute.self, identifier: .set, rootNode: ASN1Parsing.parse(bytes))
    }

    /// A BER payload re-encoded as DER in the same order, with the in-app sets inside attribute 17 re-encoded too.
    static func normalizedToDER(_ payload: ArraySlice<UInt8>) throws -> [UInt8] {
        let attributes = try BER.set(of: ReceiptAttribute.self, identifier: .set, rootNode: ASN1Parsing.parse(payload))
        return serializeSetInOrder(
            try attributes.map { attribute in
                guard attribute.type == ReceiptAttributeType.inAppPurchase else { return attribute }
                let inner = try BER.set(
                    of: ReceiptAttribute.self, identifier: .set, rootNode: ASN1Parsing.parse(attribute.value))
                return ReceiptAttribute(
                    type: attribute.type, version: attribute.version, value: serializeSetInOrder(inner)[...])
            })
    }

    /// The DER encoding of a `SET OF ReceiptAttribute` in the order given (how Xcode writes its payloads; DER proper
    /// sorts, see ``serializeSet(_:)``).
    static func serializeSetInOrder(_ attributes: [ReceiptAttribute]) -> [UInt8] {
        var coder = DER.Serializer()
        // Integers and octet strings always encode.
        try? coder.appendConstructedNode(identifier: .set) { coder in
            for attribute in attributes { try coder.serialize(attribute) }
        }
        return coder.serializedBytes
    }

    /// The DER encoding of a `SET OF ReceiptAttribute` (elements sorted, as DER requires).
    public static func serializeSet(_ attributes: [ReceiptAttribute]) throws -> [UInt8] {
        var coder = DER.Serializer()
        try coder.serializeSetOf(attributes)
        return coder.serializedBytes
    }
}

/// The one place that picks the ASN.1 rules for input bytes: DER, unless the outermost length is indefinite (BER, as
/// Xcode writes) or DER fails. swift-asn1 bounds every length by the bytes present and limits nesting depth; this
/// also bounds the number of elements, which swift-asn1 turns into nodes before anything is checked (a 16 MiB BER
/// input of empty chunks would otherwise be eight million nodes).
enum ASN1Parsing {
    /// The most elements one parse may hold. A receipt's signed-data skeleton has a few hundred; a payload's top level
    /// four per attribute (each purchase set is parsed on its own), so this allows some 65,000 attributes.
    static let maximumElementCount = 1 << 18

    static func parse(_ bytes: ArraySlice<UInt8>) throws -> ASN1Node {
        guard elementCount(bytes, limit: maximumElementCount) != nil else {
            throw ReceiptParsingError(
                .malformedASN1, "more than \(maximumElementCount) ASN.1 elements, more than any receipt holds")
        }
        let start = bytes.startIndex
        if bytes.count > 1, bytes[start + 1] == 0x80 {
            return try BER.parse(bytes)
        }
        do {
            return try DER.parse(bytes)
        } catch {
            // Definite outside, indefinite somewhere inside: still BER.
            return try BER.parse(bytes)
        }
    }
}

extension ASN1Parsing {
    /// Counts the elements (identifier-length headers, end-of-contents markers included) in one linear pass without
    /// building anything; `nil` as soon as there are more than `limit`. Constructed elements are stepped into,
    /// primitive ones skipped; a header that runs past the end stops the count (the parser reports it).
    static func elementCount(_ bytes: ArraySlice<UInt8>, limit: Int) -> Int? {
        var index = bytes.startIndex
        let end = bytes.endIndex
        var count = 0
        defer { WorkMeter.tick(count) }
        while index < end {
            count += 1
            guard count <= limit else { return nil }
            let identifier = bytes[index]
            index += 1
            if identifier & 0x1f == 0x1f {  // high tag number: base-128 octets, the last without the top bit
                while index < end, bytes[index] & 0x80 != 0 { index += 1 }
                index += 1
            }
            guard index < end else { break }
            let first = bytes[index]
            index += 1
            var length = 0
            if first & 0x80 != 0, first != 0x80 {
                let octets = Int(first & 0x7f)
                guard octets <= 8, end - index >= octets else { break }
                for _ in 0..<octets {
                    guard length <= (Int.max >> 8) else { return count }
                    length = length << 8 | Int(bytes[index])
                    index += 1
                }
            } else if first < 0x80 {
                length = Int(first)
            }
            // Constructed or indefinite: the children follow at once. Primitive: skip the content.
            if identifier & 0x20 == 0 {
                guard length <= end - index else { break }
                index += length
            }
        }
        return count
    }
}

extension ReceiptAttribute {
    private enum CodingKeys: String, CodingKey { case type, version, value }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            type: try container.decode(Int.self, forKey: .type),
            version: try container.decode(Int.self, forKey: .version),
            value: try container.decode([UInt8].self, forKey: .value)[...])
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(type, forKey: .type)
        try container.encode(version, forKey: .version)
        try container.encode(Array(value), forKey: .value)
    }
}
