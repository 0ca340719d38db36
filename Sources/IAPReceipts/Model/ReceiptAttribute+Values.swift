import Foundation
import SwiftASN1

/// One attribute of a DER attribute set, seen in place while the set is walked: nothing is copied until a field is
/// decoded, and only unknown attributes become ``ReceiptAttribute`` values.
struct AttributeView {
    let type: Int
    let version: Int
    /// The value octets.
    let value: UnsafeBufferPointer<UInt8>
    /// Where the value octets are in the walked set's bytes.
    let range: Range<Int>

    /// A UTF8String or IA5String value.
    func string() throws(ReceiptParsingError) -> String {
        let content = try primitiveContent(0x0c, or: 0x16, what: "a string")
        guard let text = String(validating: content, as: UTF8.self) else {
            throw malformed("holds a string that is not valid UTF-8")
        }
        return text
    }

    /// An INTEGER value that fits in `Int`.
    func int() throws(ReceiptParsingError) -> Int {
        let content = try primitiveContent(0x02, or: 0x02, what: "an integer")
        guard let value = try? DERReader.int(content) else {
            throw malformed("holds an integer that is empty, not minimal, or too large for Int")
        }
        return value
    }

    /// An INTEGER value of any size.
    func integer() throws(ReceiptParsingError) -> ReceiptInteger {
        let content = try primitiveContent(0x02, or: 0x02, what: "an integer")
        guard !content.isEmpty else { throw malformed("holds an empty integer") }
        guard ReceiptInteger.minimalByteCount(of: content) <= ReceiptInteger.maximumByteCount else {
            throw malformed("holds an integer wider than \(ReceiptInteger.maximumByteCount) bytes")
        }
        return ReceiptInteger(bytes: content)
    }

    /// An INTEGER flag: 0 is false, anything else true.
    func bool() throws(ReceiptParsingError) -> Bool {
        let content = try primitiveContent(0x02, or: 0x02, what: "an integer")
        guard !content.isEmpty else { throw malformed("holds an empty integer") }
        return content.contains { $0 != 0 }
    }

    /// An IA5String RFC 3339 date; `nil` for the empty string.
    func date() throws(ReceiptParsingError) -> Date? {
        let content = try primitiveContent(0x16, or: 0x0c, what: "a date string")
        do {
            return try ReceiptDate.parse(content)
        } catch {
            throw ReceiptParsingError(.invalidDate, "attribute \(type): \(error.reason)")
        }
    }

    /// The raw value octets.
    var bytes: [UInt8] { Array(value) }

    /// The content of the one primitive element the value holds, which must carry tag `first` or `second`.
    private func primitiveContent(_ first: UInt8, or second: UInt8, what: StaticString) throws(ReceiptParsingError)
        -> UnsafeBufferPointer<UInt8>
    {
        var reader = DERReader(value)
        guard let element = try? reader.next(), reader.isAtEnd, element.tag == first || element.tag == second else {
            throw malformed("does not hold \(what)")
        }
        return UnsafeBufferPointer(rebasing: value[element.content])
    }

    private func malformed(_ problem: String) -> ReceiptParsingError {
        ReceiptParsingError(.malformedAttribute, "attribute \(type) \(problem)")
    }
}

/// Building the values receipt attributes hold.
extension ReceiptAttribute {
    static func string(_ type: Int, _ value: String) -> ReceiptAttribute {
        ReceiptAttribute(type: type, value: encode { try $0.serialize(ASN1UTF8String(value)) })
    }

    static func date(_ type: Int, _ value: Date) -> ReceiptAttribute {
        ReceiptAttribute(type: type, value: encode { try $0.serialize(ASN1IA5String(ReceiptDate.format(value))) })
    }

    static func integer(_ type: Int, _ value: ReceiptInteger) -> ReceiptAttribute {
        ReceiptAttribute(
            type: type, value: encode { $0.appendPrimitiveNode(identifier: .integer) { $0 += value.bytes } })
    }

    static func int(_ type: Int, _ value: Int) -> ReceiptAttribute {
        ReceiptAttribute(type: type, value: encode { try $0.serialize(value) })
    }

    static func bool(_ type: Int, _ value: Bool) -> ReceiptAttribute { int(type, value ? 1 : 0) }

    /// Serializes one value; the values built here (strings, integers) always encode.
    private static func encode(_ body: (inout DER.Serializer) throws -> Void) -> ArraySlice<UInt8> {
        var coder = DER.Serializer()
        try? body(&coder)
        return coder.serializedBytes[...]
    }
}
