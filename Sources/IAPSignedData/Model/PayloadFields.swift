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
struct PayloadField<Model>: Sendable {
    let key: String
    let read: @Sendable (inout Model, inout JSONScanner) throws -> Void
    let write: @Sendable (Model) -> JSONValue?

    init<Value: JSONFieldValue>(_ key: String, _ path: any WritableKeyPath<Model, Value?> & Sendable) {
        self.key = key
        self.read = { model, scanner in model[keyPath: path] = try Value.read(&scanner, field: key) }
        self.write = { model in model[keyPath: path]?.jsonValue }
    }
}

/// The known fields of a payload model, found by key. Only IAPKit's models have one.
public struct PayloadFieldTable<Model>: Sendable {
    let fields: [PayloadField<Model>]
    private let byKey: [String: Int]

    init(_ fields: [PayloadField<Model>]) {
        self.fields = fields
        self.byKey = Dictionary(uniqueKeysWithValues: fields.enumerated().map { ($1.key, $0) })
    }

    subscript(key: String) -> PayloadField<Model>? {
        byKey[key].map { fields[$0] }
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
    /// The fields this model knows.
    static var fieldTable: PayloadFieldTable<Self> { get }
}

extension PayloadModel {
    static func decode(_ scanner: inout JSONScanner) throws -> Self {
        var model = Self()
        try scanner.forEachMember { scanner, key in
            guard let known = fieldTable[key] else {
                model.additionalFields.appendNew(key, try scanner.value())
                return
            }
            if scanner.consumeNull() {
                model.additionalFields.appendNew(key, .null)
            } else {
                try known.read(&model, &scanner)
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

    /// Decodes a payload from its JSON bytes.
    public init(jsonBytes: some Collection<UInt8>) throws(SignedDataParsingError) {
        do {
            self = try JSONScanner.read(jsonBytes) { scanner in try Self.decode(&scanner) }
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
