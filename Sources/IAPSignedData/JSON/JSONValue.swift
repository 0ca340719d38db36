import IAPCore

/// A JSON value as it was written, kept exactly enough to write it again: numbers keep their text, objects their
/// member order.
///
/// Payload models keep the fields they do not know (Apple adds fields every year) as `JSONValue`s, so nothing a
/// signed document says is lost when it is decoded and encoded again.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// The value of `key` when this is an object that has it.
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// The text when this is a string.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// True when two values are the same JSON data: objects compared without regard to member order, numbers by
    /// value (so `1698148900000` equals `1698148900000.0`).
    public func isEquivalent(to other: JSONValue) -> Bool {
        switch (self, other) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number(let a), .number(let b)): return a.text == b.text || a.doubleValue == b.doubleValue
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.isEquivalent(to: $1) }
        case (.object(let a), .object(let b)):
            return a.count == b.count
                && a.members.allSatisfy { member in b[member.key].map { member.value.isEquivalent(to: $0) } ?? false }
        default: return false
        }
    }
}

/// A JSON number, kept as the text it was written as (JSON numbers have no fixed precision).
public struct JSONNumber: Hashable, Sendable, CustomStringConvertible {
    /// The number as written, e.g. `1697679936049.7297` or `-62135769600000`.
    public let text: String

    /// A number from its JSON text; the caller guarantees the text is a JSON number.
    init(text: String) { self.text = text }

    public init(_ value: Int64) { self.text = String(value) }

    /// A double written in its shortest exact form, as an integer when it is a whole number.
    public init(_ value: Double) {
        if value.rounded() == value, abs(value) < 9.0e15 {
            self.text = String(Int64(value))
        } else {
            self.text = "\(value)"
        }
    }

    /// The value, when the text is an integer that fits 64 bits.
    public var int64Value: Int64? { Int64(text) }
    /// The nearest double.
    public var doubleValue: Double? { Double(text) }
    public var description: String { text }
}

/// A JSON object's members, in the order they were written. Keys are unique (the parser refuses duplicates).
///
/// Small objects (Apple's payloads have a few dozen members) are searched in order; past
/// 16 members (`indexThreshold`) a key index takes over, so looking up or adding a member stays constant-time
/// whatever the input holds (a payload of 66,000 unknown members once took seconds to refuse).
public struct JSONObject: Hashable, Sendable {
    /// One `"key": value` member.
    public struct Member: Hashable, Sendable {
        public var key: String
        public var value: JSONValue
    }

    /// The member count from which keys are indexed.
    static let indexThreshold = 16

    public private(set) var members: [Member] = []
    /// Position of each key in ``members``, kept once there are 16 members (`indexThreshold`).
    private var positions: [String: Int]?

    public init() {}

    public init(_ members: [(String, JSONValue)]) {
        for (key, value) in members { self[key] = value }
    }

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }
    public var keys: [String] { members.map(\.key) }

    /// Where the member with this key is.
    private func position(of key: String) -> Int? {
        if let positions {
            WorkMeter.tick()
            return positions[key]
        }
        WorkMeter.tick(members.count)
        return members.firstIndex { $0.key == key }
    }

    /// The member's value; setting nil removes the member, setting a new key appends it.
    public subscript(key: String) -> JSONValue? {
        get { position(of: key).map { members[$0].value } }
        set {
            switch (position(of: key), newValue) {
            case (let index?, let value?): members[index].value = value
            case (let index?, nil):
                members.remove(at: index)
                if positions != nil { positions = Self.positions(of: members) }
            case (nil, let value?): appendNew(key, value)
            case (nil, nil): break
            }
        }
    }

    /// Appends a member known not to be present yet.
    mutating func appendNew(_ key: String, _ value: JSONValue) {
        members.append(Member(key: key, value: value))
        if positions != nil {
            positions![key] = members.count - 1
        } else if members.count >= Self.indexThreshold {
            positions = Self.positions(of: members)
        }
    }

    /// Whether a member has this key.
    func contains(_ key: String) -> Bool { position(of: key) != nil }

    private static func positions(of members: [Member]) -> [String: Int] {
        var positions = [String: Int](minimumCapacity: members.count * 2)
        for (index, member) in members.enumerated() { positions[member.key] = index }
        return positions
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool { lhs.members == rhs.members }
    public func hash(into hasher: inout Hasher) { hasher.combine(members) }
}

extension JSONValue {
    /// Parses JSON text strictly (RFC 8259, UTF-8, no duplicated keys, at most 64 levels deep).
    public init(jsonBytes: some Collection<UInt8>) throws(SignedDataParsingError) {
        do {
            self = try JSONScanner.read(jsonBytes) { scanner in try scanner.value() }
        } catch let error as SignedDataParsingError {
            throw error
        } catch {
            throw SignedDataParsingError(.malformedJSON, "\(error)")
        }
    }

    /// The value as compact JSON text.
    public func jsonBytes() -> [UInt8] { JSONWriter.bytes(self) }
}
