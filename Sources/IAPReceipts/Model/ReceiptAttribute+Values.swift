import Foundation
import SwiftASN1

/// Reading and writing the typed values that receipt attributes hold in their value octets.
extension ReceiptAttribute {
    /// A UTF8String or IA5String value.
    func stringValue() throws(ReceiptParsingError) -> String {
        let content = try primitiveContent(allowed: [.utf8String, .ia5String], what: "a string")
        guard let text = String(validating: content, as: UTF8.self) else {
            throw malformed("holds a string that is not valid UTF-8")
        }
        return text
    }

    /// An INTEGER value that fits in `Int`.
    func intValue() throws(ReceiptParsingError) -> Int {
        let content = try primitiveContent(allowed: [.integer], what: "an integer")
        let value: Int? = content.withUnsafeBufferPointer { try? DERReader.int($0) }
        guard let value else { throw malformed("holds an integer that is empty, not minimal, or too large for Int") }
        return value
    }

    /// An INTEGER value of any size.
    func integerValue() throws(ReceiptParsingError) -> ReceiptInteger {
        let content = try primitiveContent(allowed: [.integer], what: "an integer")
        guard !content.isEmpty else { throw malformed("holds an empty integer") }
        return ReceiptInteger(bytes: content)
    }

    /// An INTEGER flag: 0 is false, anything else true.
    func boolValue() throws(ReceiptParsingError) -> Bool {
        let content = try primitiveContent(allowed: [.integer], what: "an integer")
        guard !content.isEmpty else { throw malformed("holds an empty integer") }
        return content.contains { $0 != 0 }
    }

    /// An IA5String RFC 3339 date; `nil` for the empty string.
    func dateValue() throws(ReceiptParsingError) -> Date? {
        let content = try primitiveContent(allowed: [.ia5String, .utf8String], what: "a date string")
        do {
            return try ReceiptDate.parse(content)
        } catch {
            throw ReceiptParsingError(.invalidDate, "attribute \(type): \(error.reason)")
        }
    }

    private func primitiveContent(allowed: [ASN1Identifier], what: String) throws(ReceiptParsingError)
        -> ArraySlice<UInt8>
    {
        let found: Range<Int>? = value.withUnsafeBufferPointer { buffer in
            var reader = DERReader(buffer)
            guard let element = try? reader.next(), reader.isAtEnd, element.tag & 0x20 == 0,
                allowed.contains(where: { $0.tagClass == .universal && $0.tagNumber == UInt(element.tag) })
            else { return nil }
            return element.content
        }
        guard let found else { throw malformed("does not hold \(what)") }
        return DERReader.slice(value, found)
    }

    private func malformed(_ problem: String) -> ReceiptParsingError {
        ReceiptParsingError(.malformedAttribute, "attribute \(type) \(problem)")
    }

    // MARK: Building

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

    /// Serializes one value; the values built here (strings, integers, octets) always encode.
    private static func encode(_ body: (inout DER.Serializer) throws -> Void) -> ArraySlice<UInt8> {
        var coder = DER.Serializer()
        try? body(&coder)
        return coder.serializedBytes[...]
    }
}
