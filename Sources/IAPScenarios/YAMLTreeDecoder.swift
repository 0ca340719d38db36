import IAPCore

/// A `Decoder` over a ``YAMLNode`` tree: keyed lookups are dictionary lookups, and every error is a ``ScenarioError``
/// that names the line and the key path.
///
/// Scalars decode the way Yams decodes them: any scalar as a `String`; plain `true`, `yes`, `on`, `false`, `no`,
/// `off` (any case) as `Bool`; whole numbers as integers of any width; finite numbers as `Double`; a plain `~`,
/// `null` or nothing as nil.
struct YAMLTreeDecoder: Decoder {
    let node: YAMLNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(_ node: YAMLNode, codingPath: [any CodingKey] = []) {
        self.node = node
        self.codingPath = codingPath
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .mapping(let entries, let keys) = node.content else { throw mismatch("a mapping") }
        return KeyedDecodingContainer(Keyed<Key>(decoder: self, entries: entries, keys: keys))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .sequence(let items) = node.content else { throw mismatch("a list") }
        return Unkeyed(decoder: self, items: items)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    /// The error for a node of the wrong kind.
    func mismatch(_ expected: String) -> ScenarioError {
        let found: String
        switch node.content {
        case .scalar(let text, _): found = "'\(text.prefix(40))'"
        case .sequence: found = "a list"
        case .mapping: found = "a mapping"
        }
        return ScenarioError(
            .unreadable, "line \(node.line): \(Scenario.path(codingPath)) must be \(expected), not \(found)")
    }

    func child(_ node: YAMLNode, _ key: any CodingKey) -> YAMLTreeDecoder {
        WorkMeter.tick()
        return YAMLTreeDecoder(node, codingPath: codingPath + [key])
    }

    /// A scalar's text, or an error naming what was expected.
    func scalar(_ expected: String) throws(ScenarioError) -> (text: String, plain: Bool) {
        guard case .scalar(let text, let plain) = node.content, !isNull else { throw mismatch(expected) }
        return (text, plain)
    }

    var isNull: Bool { node.isNull }

    /// A whole number of any width, written in decimal (`_` between digits allowed, as YAML 1.1 does).
    func integer<T: FixedWidthInteger>(_ type: T.Type) throws(ScenarioError) -> T {
        let text = String(try scalar("a whole number").text.filter { $0 != "_" })
        guard text.utf8.count <= 40, let value = T(text) else { throw mismatch("a whole number that fits \(T.self)") }
        return value
    }

    func real() throws(ScenarioError) -> Double {
        let text = try scalar("a number").text
        guard text.utf8.count <= 64, let value = Double(text), value.isFinite else { throw mismatch("a finite number") }
        return value
    }
}

extension YAMLTreeDecoder: SingleValueDecodingContainer {
    func decodeNil() -> Bool { isNull }

    func decode(_ type: Bool.Type) throws -> Bool {
        let (text, plain) = try scalar("true or false")
        guard plain else { throw mismatch("true or false") }
        switch text.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw mismatch("true or false")
        }
    }

    func decode(_ type: String.Type) throws -> String {
        guard case .scalar(let text, _) = node.content else { throw mismatch("text") }
        return text
    }

    func decode(_ type: Double.Type) throws -> Double { try real() }
    func decode(_ type: Float.Type) throws -> Float { Float(try real()) }
    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try T(from: self) }
}

/// A mapping's keyed container: each lookup is one dictionary lookup.
private struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: YAMLTreeDecoder
    let entries: [String: YAMLNode]
    let keys: [String]

    var codingPath: [any CodingKey] { decoder.codingPath }
    var allKeys: [Key] { keys.compactMap(Key.init(stringValue:)) }

    func contains(_ key: Key) -> Bool { entries[key.stringValue] != nil }

    private func child(_ key: Key) throws(ScenarioError) -> YAMLTreeDecoder {
        guard let node = entries[key.stringValue] else {
            throw ScenarioError(
                .unreadable,
                "line \(decoder.node.line): missing '\(key.stringValue)' at \(Scenario.path(codingPath))")
        }
        return decoder.child(node, key)
    }

    func decodeNil(forKey key: Key) throws -> Bool { try child(key).isNull }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try child(key).decode(type) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try child(key).decode(type) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try child(key).decode(type) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try child(key).decode(type) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try child(key).decode(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try child(key).decode(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try child(key).decode(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try child(key).decode(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try child(key).decode(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try child(key).decode(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try child(key).decode(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try child(key).decode(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try child(key).decode(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try child(key).decode(type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try T(from: try child(key)) }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try child(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try child(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { decoder }
    func superDecoder(forKey key: Key) throws -> any Decoder { try child(key) }
}

/// A list's container, read front to back.
private struct Unkeyed: UnkeyedDecodingContainer {
    let decoder: YAMLTreeDecoder
    let items: [YAMLNode]
    var currentIndex = 0

    init(decoder: YAMLTreeDecoder, items: [YAMLNode]) {
        self.decoder = decoder
        self.items = items
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    /// The next item's decoder, moving past it.
    private mutating func next() throws(ScenarioError) -> YAMLTreeDecoder {
        guard !isAtEnd else {
            throw ScenarioError(
                .unreadable, "line \(decoder.node.line): \(Scenario.path(codingPath)) has too few items")
        }
        defer { currentIndex += 1 }
        return decoder.child(items[currentIndex], IndexKey(intValue: currentIndex))
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, items[currentIndex].isNull else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next().decode(type) }
    mutating func decode(_ type: String.Type) throws -> String { try next().decode(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try next().decode(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try next().decode(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try next().decode(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next().decode(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next().decode(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next().decode(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next().decode(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next().decode(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next().decode(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next().decode(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next().decode(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next().decode(type) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try T(from: try next()) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try next().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }
    mutating func superDecoder() throws -> any Decoder { try next() }
}

/// A list position as a coding key.
private struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "\(intValue ?? 0)" }
    init(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}
