import Foundation
import IAPEntitlements

/// Writes JSON bytes as `Encodable` walks a value, with no intermediate tree: about ten times faster than Foundation's
/// `JSONEncoder` for the server's answers and stored records, which made up a sixth of a request's time.
///
/// Keys come in the order the value encodes them (declaration order for synthesized conformances); a dictionary with
/// string keys is written in key order, so answers are the same bytes every time. Dates are ISO 8601 in UTC with
/// milliseconds (``DateFormat``), or, with `datesAsReferenceSeconds`, what `Date`'s own conformance writes (Foundation's
/// default, which the stored records keep). Slashes are not escaped. A container is closed when the next key or
/// element of its parent is written, or when the value that opened it returns, so conformances that finish a nested
/// container before going on (all synthesized ones do) come out right.
struct StreamingJSONEncoder {
    var datesAsReferenceSeconds = false

    func encode(_ value: some Encodable) throws -> [UInt8] {
        let writer = JSONStreamWriter(datesAsReferenceSeconds: datesAsReferenceSeconds)
        try writer.write(value)
        return writer.bytes
    }
}

/// A value that cannot be written as JSON (a non-finite number).
struct JSONStreamError: Error, CustomStringConvertible {
    let description: String
}

/// The bytes written so far and the containers still open.
final class JSONStreamWriter {
    var bytes: [UInt8] = []
    /// For each open container: whether it is an object, and how many members it has.
    private var open: [(object: Bool, count: Int)] = []
    private let datesAsReferenceSeconds: Bool

    init(datesAsReferenceSeconds: Bool) {
        self.datesAsReferenceSeconds = datesAsReferenceSeconds
        bytes.reserveCapacity(1024)
    }

    var depth: Int { open.count }

    /// Writes one value whole: containers it opens are closed when it returns; a value that wrote nothing is `{}`.
    ///
    /// Leaf types are recognised by comparing metatypes, not by casting the value: a failed cast of a struct to a
    /// protocol copies it into a box first, and every nested value of an answer went through a dozen of them.
    func write<T: Encodable>(_ value: T) throws {
        switch ObjectIdentifier(T.self) {
        case ObjectIdentifier(String.self): return writeString(value as! String)
        case ObjectIdentifier(Int.self): return writeInteger(value as! Int)
        case ObjectIdentifier(Bool.self): return bytes.append(contentsOf: (value as! Bool) ? "true".utf8 : "false".utf8)
        case ObjectIdentifier(Double.self): return try writeDouble(value as! Double)
        case ObjectIdentifier(Date.self) where !datesAsReferenceSeconds:
            return DateFormat.append(value as! Date, to: &bytes, quoted: true)
        case ObjectIdentifier(Int64.self): return writeInteger(value as! Int64)
        case ObjectIdentifier(Int32.self): return writeInteger(value as! Int32)
        case ObjectIdentifier(Int16.self): return writeInteger(value as! Int16)
        case ObjectIdentifier(Int8.self): return writeInteger(value as! Int8)
        case ObjectIdentifier(UInt.self): return writeInteger(value as! UInt)
        case ObjectIdentifier(UInt64.self): return writeInteger(value as! UInt64)
        case ObjectIdentifier(UInt32.self): return writeInteger(value as! UInt32)
        case ObjectIdentifier(UInt16.self): return writeInteger(value as! UInt16)
        case ObjectIdentifier(UInt8.self): return writeInteger(value as! UInt8)
        case ObjectIdentifier(Float.self): return try writeDouble(Double(value as! Float))
        case ObjectIdentifier(Decimal.self): return bytes.append(contentsOf: (value as! Decimal).description.utf8)
        case ObjectIdentifier(URL.self): return writeString((value as! URL).absoluteString)
        case ObjectIdentifier(Data.self): return writeString((value as! Data).base64EncodedString())
        case ObjectIdentifier(ConsumableEvent.self): return try writeConsumableEvent(value as! ConsumableEvent)
        default: break
        }
        if T.self is any StringKeyedEncodable.Type, let dictionary = value as? any StringKeyedEncodable {
            return try dictionary.writeSorted(to: self)
        }
        let depth = open.count
        let start = bytes.count
        try value.encode(to: JSONStreamEncoder(writer: self))
        close(downTo: depth)
        if bytes.count == start { bytes.append(contentsOf: "{}".utf8) }
    }

    func writeString(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        let utf8 = text.utf8
        // Most strings (keys, identifiers, dates, signed documents) need no escape: copied whole. The check runs over
        // the string's own bytes where it has them (a loop without branches, which the compiler vectorizes): through
        // `String.UTF8View` it cost 3% of a server's CPU when each re-post's document was written into a batch. A
        // string that needs escapes (a stored record's JSON, quotes throughout) is copied run by run between them.
        let written: Void? = utf8.withContiguousStorageIfAvailable { source in
            if Self.needsNoEscape(source) { bytes.append(contentsOf: source) } else { writeEscaped(source) }
        }
        if written == nil {
            var copy = text
            copy.withUTF8 { writeEscaped($0) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Writes `source` with JSON's escapes, the runs between them copied whole.
    private func writeEscaped(_ source: UnsafeBufferPointer<UInt8>) {
        var run = 0
        for index in source.indices {
            let byte = source[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: source[run..<index]))
            run = index + 1
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): bytes.append(contentsOf: "\\\\".utf8)
            case UInt8(ascii: "\n"): bytes.append(contentsOf: "\\n".utf8)
            case UInt8(ascii: "\r"): bytes.append(contentsOf: "\\r".utf8)
            case UInt8(ascii: "\t"): bytes.append(contentsOf: "\\t".utf8)
            default:
                let hex: StaticString = "0123456789abcdef"
                bytes.append(contentsOf: "\\u00".utf8)
                bytes.append(hex.utf8Start[Int(byte >> 4)])
                bytes.append(hex.utf8Start[Int(byte & 0xF)])
            }
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: source[run...]))
    }

    /// A consumable's event, the most numerous value in an answer (one per purchase, consumption and refund of each
    /// consumable), written straight: what its synthesized `Encodable` conformance writes here, key for key, without
    /// a keyed container's dynamic dispatch for each member (4% of a server's CPU under re-posts of consumables).
    private func writeConsumableEvent(_ event: ConsumableEvent) throws {
        bytes.append(contentsOf: #"{"date":"#.utf8)
        try write(event.date)
        bytes.append(contentsOf: #","kind":"#.utf8)
        writeString(event.kind.rawValue)
        bytes.append(contentsOf: #","quantity":"#.utf8)
        writeInteger(event.quantity)
        if let transactionID = event.transactionID {
            bytes.append(contentsOf: #","transactionID":"#.utf8)
            writeString(transactionID)
        }
        bytes.append(contentsOf: #","balanceAfter":"#.utf8)
        writeInteger(event.balanceAfter)
        bytes.append(UInt8(ascii: "}"))
    }

    /// Whether `bytes` hold no control character, quote or backslash.
    private static func needsNoEscape(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var found: UInt8 = 0
        for byte in bytes {
            found |= (byte < 0x20 ? 1 : 0) | (byte == UInt8(ascii: "\"") ? 1 : 0) | (byte == UInt8(ascii: "\\") ? 1 : 0)
        }
        return found == 0
    }

    /// Writes an integer's decimal digits straight into the bytes.
    func writeInteger(_ number: some BinaryInteger) {
        if number < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = UInt64(number.magnitude)
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for 20 digits, written from the end
        withUnsafeMutableBytes(of: &digits) { buffer in
            var index = buffer.count
            repeat {
                index -= 1
                buffer[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: buffer[index...])
        }
    }

    func writeDouble(_ number: Double) throws {
        guard number.isFinite else { throw JSONStreamError(description: "\(number) is not a JSON number") }
        if number == number.rounded(), abs(number) < 1e15 {
            writeInteger(Int64(number))
        } else {
            bytes.append(contentsOf: String(number).utf8)
        }
    }

    func writeNull() { bytes.append(contentsOf: "null".utf8) }

    /// Opens an object or an array where the writer stands (after a key, an array's comma, or at the top).
    func openContainer(object: Bool) {
        bytes.append(object ? UInt8(ascii: "{") : UInt8(ascii: "["))
        open.append((object, 0))
    }

    /// Starts the next member of the container at `depth`: closes deeper containers, writes the comma.
    func nextMember(at depth: Int) {
        close(downTo: depth)
        if open[depth - 1].count > 0 { bytes.append(UInt8(ascii: ",")) }
        open[depth - 1].count += 1
    }

    func key(_ key: String, at depth: Int) {
        nextMember(at: depth)
        writeString(key)
        bytes.append(UInt8(ascii: ":"))
    }

    /// Closes every container deeper than `depth`.
    func close(downTo depth: Int) {
        while open.count > depth {
            bytes.append(open.removeLast().object ? UInt8(ascii: "}") : UInt8(ascii: "]"))
        }
    }
}

/// A dictionary with string keys, written in key order.
protocol StringKeyedEncodable {
    func writeSorted(to writer: JSONStreamWriter) throws
}

extension Dictionary: StringKeyedEncodable where Key == String, Value: Encodable {
    func writeSorted(to writer: JSONStreamWriter) throws {
        writer.openContainer(object: true)
        let depth = writer.depth
        for key in keys.sorted() {
            writer.key(key, at: depth)
            try writer.write(self[key]!)
        }
        writer.close(downTo: depth - 1)
    }
}

/// The `Encoder` handed to a value's `encode(to:)`.
private struct JSONStreamEncoder: Encoder {
    let writer: JSONStreamWriter
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        writer.openContainer(object: true)
        return KeyedEncodingContainer(KeyedJSONStream<Key>(writer: writer, depth: writer.depth))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        writer.openContainer(object: false)
        return UnkeyedJSONStream(writer: writer, depth: writer.depth)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleJSONStream(writer: writer) }
}

private struct KeyedJSONStream<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let writer: JSONStreamWriter
    let depth: Int
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws {
        writer.key(key.stringValue, at: depth)
        writer.writeNull()
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try member(value, key) }

    private func member(_ value: some Encodable, _ key: Key) throws {
        writer.key(key.stringValue, at: depth)
        try writer.write(value)
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws { try member(value, key) }
    mutating func encode(_ value: String, forKey key: Key) throws {
        writer.key(key.stringValue, at: depth)
        writer.writeString(value)
    }
    mutating func encode(_ value: Double, forKey key: Key) throws { try member(value, key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try member(value, key) }
    mutating func encode(_ value: Int, forKey key: Key) throws {
        writer.key(key.stringValue, at: depth)
        writer.writeInteger(value)
    }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try member(value, key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try member(value, key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try member(value, key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try member(value, key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try member(value, key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try member(value, key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try member(value, key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try member(value, key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try member(value, key) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        writer.key(key.stringValue, at: depth)
        writer.openContainer(object: true)
        return KeyedEncodingContainer(KeyedJSONStream<NestedKey>(writer: writer, depth: writer.depth))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        writer.key(key.stringValue, at: depth)
        writer.openContainer(object: false)
        return UnkeyedJSONStream(writer: writer, depth: writer.depth)
    }

    mutating func superEncoder() -> any Encoder {
        writer.key("super", at: depth)
        return JSONStreamEncoder(writer: writer)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        writer.key(key.stringValue, at: depth)
        return JSONStreamEncoder(writer: writer)
    }
}

private struct UnkeyedJSONStream: UnkeyedEncodingContainer {
    let writer: JSONStreamWriter
    let depth: Int
    var codingPath: [any CodingKey] { [] }
    var count = 0

    init(writer: JSONStreamWriter, depth: Int) {
        self.writer = writer
        self.depth = depth
    }

    mutating func encodeNil() throws {
        writer.nextMember(at: depth)
        writer.writeNull()
        count += 1
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        writer.nextMember(at: depth)
        try writer.write(value)
        count += 1
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        writer.nextMember(at: depth)
        count += 1
        writer.openContainer(object: true)
        return KeyedEncodingContainer(KeyedJSONStream<NestedKey>(writer: writer, depth: writer.depth))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        writer.nextMember(at: depth)
        count += 1
        writer.openContainer(object: false)
        return UnkeyedJSONStream(writer: writer, depth: writer.depth)
    }

    mutating func superEncoder() -> any Encoder {
        writer.nextMember(at: depth)
        count += 1
        return JSONStreamEncoder(writer: writer)
    }
}

private struct SingleJSONStream: SingleValueEncodingContainer {
    let writer: JSONStreamWriter
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil() throws { writer.writeNull() }
    mutating func encode<T: Encodable>(_ value: T) throws { try writer.write(value) }
    mutating func encode(_ value: Bool) throws { try writer.write(value) }
    mutating func encode(_ value: String) throws { try writer.write(value) }
    mutating func encode(_ value: Double) throws { try writer.write(value) }
    mutating func encode(_ value: Float) throws { try writer.write(value) }
    mutating func encode(_ value: Int) throws { try writer.write(value) }
    mutating func encode(_ value: Int8) throws { try writer.write(value) }
    mutating func encode(_ value: Int16) throws { try writer.write(value) }
    mutating func encode(_ value: Int32) throws { try writer.write(value) }
    mutating func encode(_ value: Int64) throws { try writer.write(value) }
    mutating func encode(_ value: UInt) throws { try writer.write(value) }
    mutating func encode(_ value: UInt8) throws { try writer.write(value) }
    mutating func encode(_ value: UInt16) throws { try writer.write(value) }
    mutating func encode(_ value: UInt32) throws { try writer.write(value) }
    mutating func encode(_ value: UInt64) throws { try writer.write(value) }
}
