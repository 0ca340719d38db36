import Foundation
import IAPCore

/// A type a payload field can hold: read from the scanner, written back as a `JSONValue`.
protocol JSONFieldValue: Sendable {
    static func read(_ scanner: inout JSONScanner, field: String) throws -> Self
    var jsonValue: JSONValue { get }
}

extension String: JSONFieldValue {
    static func read(_ scanner: inout JSONScanner, field: String) throws -> String { try scanner.string(field) }
    var jsonValue: JSONValue { .string(self) }
}

extension Int64: JSONFieldValue {
    static func read(_ scanner: inout JSONScanner, field: String) throws -> Int64 { try scanner.int64(field) }
    var jsonValue: JSONValue { .number(JSONNumber(self)) }
}

extension Bool: JSONFieldValue {
    static func read(_ scanner: inout JSONScanner, field: String) throws -> Bool { try scanner.bool(field) }
    var jsonValue: JSONValue { .bool(self) }
}

extension JSONValue: JSONFieldValue {
    static func read(_ scanner: inout JSONScanner, field: String) throws -> JSONValue { try scanner.value() }
    var jsonValue: JSONValue { self }
}

extension Array: JSONFieldValue where Element: JSONFieldValue {
    static func read(_ scanner: inout JSONScanner, field: String) throws -> [Element] {
        var elements: [Element] = []
        guard scanner.nextIs(UInt8(ascii: "[")) else { throw scanner.typeError(field, "an array") }
        try scanner.forEachElement { scanner in elements.append(try Element.read(&scanner, field: field)) }
        return elements
    }
    var jsonValue: JSONValue { .array(map(\.jsonValue)) }
}

/// One known field of a payload model: its JSON key and how to read and write it.
///
/// Fields are closures rather than key paths: applying a key path goes through the runtime's generic machinery on
/// every call, which measured as a third of decoding time.
struct PayloadField<Model>: Sendable {
    let key: String
    let read: @Sendable (inout Model, inout JSONScanner) throws -> Void
    let write: @Sendable (Model) -> JSONValue?

    init<Value: JSONFieldValue>(
        _ key: String, _ get: @escaping @Sendable (Model) -> Value?,
        _ set: @escaping @Sendable (inout Model, Value) -> Void
    ) {
        self.key = key
        self.read = { model, scanner in set(&model, try Value.read(&scanner, field: key)) }
        self.write = { model in get(model)?.jsonValue }
    }
}

/// The known fields of a payload model, found by the bytes of their key. Only IAPKit's models have one.
///
/// Lookup hashes the key's bytes (FNV-1a) into a small open-addressing table and compares bytes, so a known key never
/// becomes a `String`.
public struct PayloadFieldTable<Model>: Sendable {
    let fields: [PayloadField<Model>]
    private let keys: [[UInt8]]
    private let slots: [Int16]
    private let mask: Int

    init(_ fields: [PayloadField<Model>]) {
        precondition(fields.count <= 64, "a model has at most 64 known fields (the duplicate check is a bitmask)")
        self.fields = fields
        self.keys = fields.map { Array($0.key.utf8) }
        var size = 8
        while size < fields.count * 3 { size *= 2 }
        var slots = [Int16](repeating: -1, count: size)
        for (index, key) in keys.enumerated() {
            var slot = Int(truncatingIfNeeded: key.withUnsafeBufferPointer(KeyIndex.hash)) & (size - 1)
            while slots[slot] >= 0 { slot = (slot + 1) & (size - 1) }
            slots[slot] = Int16(index)
        }
        self.slots = slots
        self.mask = size - 1
    }

    /// The index of the field whose key is `key`.
    func index(of key: UnsafeBufferPointer<UInt8>) -> Int? {
        KeyIndex.find(key, keys: keys, slots: slots, mask: mask)
    }
}

/// The byte-level half of ``PayloadFieldTable``, kept out of the generic type so it never needs type metadata.
enum KeyIndex {
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash = FNV1a()
        hash.add(bytes)
        return hash.value
    }

    static func find(_ key: UnsafeBufferPointer<UInt8>, keys: [[UInt8]], slots: [Int16], mask: Int) -> Int? {
        var slot = Int(truncatingIfNeeded: hash(key)) & mask
        while true {
            let index = Int(slots[slot])
            guard index >= 0 else { return nil }
            let matches = keys[index].withUnsafeBufferPointer { candidate in
                candidate.count == key.count
                    && (candidate.count == 0 || memcmp(candidate.baseAddress!, key.baseAddress!, key.count) == 0)
            }
            if matches { return index }
            slot = (slot + 1) & mask
        }
    }
}

/// A decoded JSON payload (or part of one): typed properties for the fields Apple documents, and every other member
/// kept as it was, so a decoded model encodes back to the same members.
///
/// Decoding refuses a known field of the wrong type. A known field set to `null` is kept among the
/// ``additionalFields``.
public protocol PayloadModel: Sendable, Hashable {
    /// Members this model has no property for, in their original order.
    var additionalFields: JSONObject { get set }
    /// An empty model.
    init()
    /// Decodes a payload from its JSON bytes.
    init(jsonBytes: some Collection<UInt8>) throws(SignedDataParsingError)
    /// The fields this model knows.
    static var fieldTable: PayloadFieldTable<Self> { get }
}

extension PayloadModel {
    static func decode(_ scanner: inout JSONScanner) throws -> Self {
        var model = Self()
        let table = fieldTable
        var seen: UInt64 = 0
        try scanner.forEachMember { scanner, keyBytes in
            if let index = table.index(of: keyBytes) {
                guard seen & (1 << index) == 0 else { throw scanner.duplicateKeyError(keyBytes) }
                seen |= 1 << index
                if scanner.consumeNull() {
                    model.additionalFields.appendNew(table.fields[index].key, .null)
                } else {
                    try table.fields[index].read(&model, &scanner)
                }
            } else {
                let key = try scanner.keyString(keyBytes)
                guard !model.additionalFields.contains(key) else { throw scanner.duplicateKeyError(keyBytes) }
                model.additionalFields.appendNew(key, try scanner.value())
            }
        }
        return model
    }

    /// This payload as a JSON object: the known fields in the documented order, then the others.
    public var json: JSONValue {
        var object = JSONObject()
        for field in Self.fieldTable.fields {
            if let value = field.write(self) { object.appendNew(field.key, value) }
        }
        for member in additionalFields.members { object[member.key] = member.value }
        return .object(object)
    }

    /// Decodes a payload from its JSON bytes. Each model's `init(jsonBytes:)` calls this from its concrete type, so
    /// the decoder is specialised for it.
    static func decodeJSON(_ jsonBytes: some Collection<UInt8>) throws(SignedDataParsingError) -> Self {
        do {
            return try JSONScanner.read(jsonBytes) { scanner in try Self.decode(&scanner) }
        } catch let error as SignedDataParsingError {
            throw error
        } catch {
            throw SignedDataParsingError(.malformedJSON, "\(error)")
        }
    }

    /// The payload as compact JSON bytes.
    public func jsonBytes() -> [UInt8] { JSONWriter.bytes(json) }
}

extension JSONFieldValue where Self: PayloadModel {
    static func read(_ scanner: inout JSONScanner, field: String) throws -> Self {
        guard scanner.nextIs(UInt8(ascii: "{")) else { throw scanner.typeError(field, "an object") }
        return try decode(&scanner)
    }
    var jsonValue: JSONValue { json }
}
