import Foundation

/// The `Decoder` over a ``JSONTape`` (see ``StreamingJSONDecoder``). One serves a whole document: decoding a nested
/// value points it at that value and back, and keeps the coding path as a stack, so a nested value costs no allocation.
final class TapeDecoder: Decoder {
    let tape: JSONTape
    /// The value the next container is asked of.
    private(set) var index = 0
    private(set) var path: [any CodingKey] = []

    init(tape: JSONTape) { self.tape = tape }

    var codingPath: [any CodingKey] { path }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Decodes the value at `index`, found under `key` (nil for the document, or a single value's own).
    func value<T: Decodable>(_ type: T.Type, at index: Int, key: (any CodingKey)?) throws -> T {
        if let key { path.append(key) }
        defer { if key != nil { path.removeLast() } }
        switch ObjectIdentifier(T.self) {
        case ObjectIdentifier(String.self): return try string(at: index) as! T
        case ObjectIdentifier(Int.self): return try integer(at: index, as: Int.self) as! T
        case ObjectIdentifier(Int64.self): return try integer(at: index, as: Int64.self) as! T
        case ObjectIdentifier(Bool.self): return try bool(at: index) as! T
        case ObjectIdentifier(Double.self): return try double(at: index) as! T
        case ObjectIdentifier(Date.self): return Date(timeIntervalSinceReferenceDate: try double(at: index)) as! T
        case ObjectIdentifier(URL.self):
            guard let url = URL(string: try string(at: index)) else { throw corrupted("Invalid URL string.") }
            return url as! T
        case ObjectIdentifier(Data.self):
            guard let data = Data(base64Encoded: try string(at: index)) else {
                throw corrupted("Encountered Data is not valid Base64.")
            }
            return data as! T
        case ObjectIdentifier(Decimal.self):
            guard let text = tape.numberText(index), let decimal = Decimal(string: String(text)) else {
                throw mismatch(Decimal.self, at: index)
            }
            return decimal as! T
        default:
            let outer = self.index
            self.index = index
            defer { self.index = outer }
            return try T(from: self)
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard tape.values[index].kind == .object else { throw mismatch([String: Any].self, at: index) }
        return KeyedDecodingContainer(TapeKeyedContainer<Key>(decoder: self, object: index, depth: path.count))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard tape.values[index].kind == .array else { throw mismatch([Any].self, at: index) }
        return TapeUnkeyedContainer(decoder: self, array: index, depth: path.count)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        TapeSingleValueContainer(decoder: self, index: index, depth: path.count)
    }

    /// The coding path a container made at `depth` has: the stack is back at that depth whenever it is used.
    func path(at depth: Int) -> [any CodingKey] { Array(path.prefix(depth)) }

    func isNull(_ index: Int) -> Bool { tape.values[index].kind == .null }

    func string(at index: Int) throws -> String {
        guard let text = tape.string(index) else { throw mismatch(String.self, at: index) }
        return text
    }

    func bool(at index: Int) throws -> Bool {
        switch tape.values[index].kind {
        case .true: return true
        case .false: return false
        default: throw mismatch(Bool.self, at: index)
        }
    }

    func double(at index: Int) throws -> Double {
        guard let text = tape.numberText(index) else { throw mismatch(Double.self, at: index) }
        guard let number = Double(text), number.isFinite else {
            throw corrupted("Parsed JSON number <\(text)> does not fit in Double.")
        }
        return number
    }

    func float(at index: Int) throws -> Float {
        let number = try double(at: index)
        guard let float = Float(exactly: number) ?? Float(tape.numberText(index)!), float.isFinite else {
            throw corrupted("Parsed JSON number <\(number)> does not fit in Float.")
        }
        return float
    }

    func integer<T: FixedWidthInteger>(at index: Int, as type: T.Type) throws -> T {
        guard tape.values[index].kind == .number else { throw mismatch(T.self, at: index) }
        guard let number = tape.integer(index, as: T.self) else {
            throw corrupted("Parsed JSON number <\(tape.numberText(index)!)> does not fit in \(T.self).")
        }
        return number
    }

    func corrupted(_ description: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: path, debugDescription: description))
    }

    func mismatch(_ type: Any.Type, at index: Int) -> DecodingError {
        let found = tape.values[index].kind
        if found == .null {
            return .valueNotFound(type, .init(codingPath: path, debugDescription: "Found null instead of \(type)."))
        }
        return .typeMismatch(
            type, .init(codingPath: path, debugDescription: "Expected to decode \(type) but found \(found) instead."))
    }
}

/// The position of an element in an array, in coding paths.
private struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }
    init(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}

/// Where a keyed container looks for its next key: after the last one found.
private final class MemberCursor {
    var next: Int
    /// In an object where a key appears twice: each key's first value, indexed on the first lookup.
    var firsts: [String: Int]?
    init(_ next: Int) { self.next = next }
}

private struct TapeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: TapeDecoder
    let object: Int
    let depth: Int
    private let cursor: MemberCursor

    init(decoder: TapeDecoder, object: Int, depth: Int) {
        self.decoder = decoder
        self.object = object
        self.depth = depth
        cursor = MemberCursor(object + 1)
    }

    var codingPath: [any CodingKey] { decoder.path(at: depth) }

    var allKeys: [Key] {
        var keys: [Key] = []
        var seen: Set<String> = []
        var member = object + 1
        let tape = decoder.tape
        for _ in 0..<tape.values[object].count {
            // A key that appears twice is listed once (its first value is the one read).
            if let name = tape.string(member), !tape.values[object].repeatsKeys || seen.insert(name).inserted,
                let key = Key(stringValue: name)
            {
                keys.append(key)
            }
            member = tape.values[member + 1].next
        }
        return keys
    }

    /// The index of `key`'s value, looked for from the cursor on and then from the start; in an object where a key
    /// appears twice, its first value, from an index of them.
    private func find(_ key: Key) -> Int? { find(name: key.stringValue) }

    private func find(name: String) -> Int? {
        let tape = decoder.tape
        let count = tape.values[object].count
        let end = tape.values[object].next
        if tape.values[object].repeatsKeys { return firstValue(of: name) }
        var member = cursor.next
        for _ in 0..<count {
            if member >= end { member = object + 1 }
            let following = tape.values[member + 1].next
            if tape.string(member, is: name) {
                cursor.next = following
                return member + 1
            }
            member = following
        }
        return nil
    }

    /// The first value of `name` in an object where a key appears twice.
    private func firstValue(of name: String) -> Int? {
        if let firsts = cursor.firsts { return firsts[name] }
        var firsts: [String: Int] = [:]
        var member = object + 1
        let tape = decoder.tape
        for _ in 0..<tape.values[object].count {
            if let text = tape.string(member), firsts[text] == nil { firsts[text] = member + 1 }
            member = tape.values[member + 1].next
        }
        cursor.firsts = firsts
        return firsts[name]
    }

    private func required(_ key: Key) throws -> Int {
        guard let index = find(key) else {
            throw DecodingError.keyNotFound(
                key,
                .init(
                    codingPath: codingPath,
                    debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
        }
        return index
    }

    /// Reads `key`'s value with `read`, the decoder's path extended by the key for its errors.
    private func read<T>(_ key: Key, _ read: (Int) throws -> T) throws -> T {
        let index = try required(key)
        decoder.pushing(key)
        defer { decoder.popping() }
        return try read(index)
    }

    private func readIfPresent<T>(_ key: Key, _ read: (Int) throws -> T) throws -> T? {
        guard let index = find(key), !decoder.isNull(index) else { return nil }
        decoder.pushing(key)
        defer { decoder.popping() }
        return try read(index)
    }

    func contains(_ key: Key) -> Bool { find(key) != nil }
    func decodeNil(forKey key: Key) throws -> Bool { decoder.isNull(try required(key)) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try read(key, decoder.bool) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try read(key, decoder.string) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try read(key, decoder.double) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try read(key, decoder.float) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        try read(key) { try decoder.integer(at: $0, as: type) }
    }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
        try read(key) { try decoder.integer(at: $0, as: type) }
    }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
        try read(key) { try decoder.integer(at: $0, as: type) }
    }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
        try read(key) { try decoder.integer(at: $0, as: type) }
    }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        try read(key) { try decoder.integer(at: $0, as: type) }
    }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
        try read(key) { try decoder.integer(at: $0, as: type) }
    }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
        try read(key) { try decoder.integer(at: $0, as: type) }
    }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
        try read(key) { try decoder.integer(at: $0, as: type) }
    }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
        try read(key) { try decoder.integer(at: $0, as: type) }
    }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
        try read(key) { try decoder.integer(at: $0, as: type) }
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder.value(type, at: try required(key), key: key)
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try readIfPresent(key, decoder.string)
    }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try readIfPresent(key, decoder.bool) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        try readIfPresent(key, decoder.double)
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        try readIfPresent(key) { try decoder.integer(at: $0, as: type) }
    }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
        try readIfPresent(key) { try decoder.integer(at: $0, as: type) }
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let index = find(key), !decoder.isNull(index) else { return nil }
        return try decoder.value(type, at: index, key: key)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try decoder.nested(at: try required(key), key: key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder.nested(at: try required(key), key: key).unkeyedContainer()
    }

    /// The value under "super" (whatever `Key` is), or null when there is none, as Foundation's decoder gives.
    func superDecoder() throws -> any Decoder {
        guard let index = find(name: "super") else { return try TapeDecoder.null(path: codingPath) }
        return decoder.nested(at: index, key: SuperKey())
    }

    func superDecoder(forKey key: Key) throws -> any Decoder { decoder.nested(at: try required(key), key: key) }
}

/// The key of a super decoder's value.
private struct SuperKey: CodingKey {
    var stringValue: String { "super" }
    var intValue: Int? { nil }
    init() {}
    init?(stringValue: String) { nil }
    init?(intValue: Int) { nil }
}

extension TapeDecoder {
    /// A decoder of a null, for a super decoder whose key is missing.
    static func null(path: [any CodingKey]) throws -> TapeDecoder {
        let decoder = TapeDecoder(tape: try JSONTape(Array("null".utf8)))
        decoder.path = path + [SuperKey()]
        return decoder
    }

    func pushing(_ key: any CodingKey) { path.append(key) }
    func popping() { path.removeLast() }

    /// A decoder of its own for the value at `index`, for nested containers and super decoders, which may be used
    /// out of order with this one's.
    func nested(at index: Int, key: any CodingKey) -> TapeDecoder {
        let decoder = TapeDecoder(tape: tape)
        decoder.index = index
        decoder.path = path + [key]
        return decoder
    }
}

private struct TapeUnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: TapeDecoder
    let depth: Int
    let count: Int?
    private(set) var currentIndex = 0
    /// The index of the current element's value.
    private var element: Int

    init(decoder: TapeDecoder, array: Int, depth: Int) {
        self.decoder = decoder
        self.depth = depth
        count = decoder.tape.values[array].count
        element = array + 1
    }

    var codingPath: [any CodingKey] { decoder.path(at: depth) }
    var isAtEnd: Bool { currentIndex >= count! }

    /// The current element's value; the container moves past it only once it has been read, as Foundation's does, so
    /// an element that fails to decode can be tried as another type.
    private func current() throws -> Int {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                Any.self, .init(codingPath: codingPath, debugDescription: "Unkeyed container is at end."))
        }
        return element
    }

    private mutating func advance() {
        element = decoder.tape.values[element].next
        currentIndex += 1
    }

    /// Reads the current element with `read` and moves past it.
    private mutating func read<T>(_ read: (Int) throws -> T) throws -> T {
        let index = try current()
        decoder.pushing(IndexKey(intValue: currentIndex))
        defer { decoder.popping() }
        let value = try read(index)
        advance()
        return value
    }

    mutating func decodeNil() throws -> Bool {
        guard decoder.isNull(try current()) else { return false }
        advance()
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try read(decoder.bool) }
    mutating func decode(_ type: String.Type) throws -> String { try read(decoder.string) }
    mutating func decode(_ type: Double.Type) throws -> Double { try read(decoder.double) }
    mutating func decode(_ type: Float.Type) throws -> Float { try read(decoder.float) }
    mutating func decode(_ type: Int.Type) throws -> Int {
        try read { [decoder] in try decoder.integer(at: $0, as: type) }
    }
    mutating func decode(_ type: Int64.Type) throws -> Int64 {
        try read { [decoder] in try decoder.integer(at: $0, as: type) }
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let value = try decoder.value(type, at: try current(), key: IndexKey(intValue: currentIndex))
        advance()
        return value
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        let container = try decoder.nested(at: try current(), key: IndexKey(intValue: currentIndex))
            .container(keyedBy: type)
        advance()
        return container
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let container = try decoder.nested(at: try current(), key: IndexKey(intValue: currentIndex)).unkeyedContainer()
        advance()
        return container
    }

    mutating func superDecoder() throws -> any Decoder {
        let nested = decoder.nested(at: try current(), key: IndexKey(intValue: currentIndex))
        advance()
        return nested
    }
}

private struct TapeSingleValueContainer: SingleValueDecodingContainer {
    let decoder: TapeDecoder
    let index: Int
    let depth: Int

    var codingPath: [any CodingKey] { decoder.path(at: depth) }

    func decodeNil() -> Bool { decoder.isNull(index) }
    func decode(_ type: Bool.Type) throws -> Bool { try decoder.bool(at: index) }
    func decode(_ type: String.Type) throws -> String { try decoder.string(at: index) }
    func decode(_ type: Double.Type) throws -> Double { try decoder.double(at: index) }
    func decode(_ type: Float.Type) throws -> Float { try decoder.float(at: index) }
    func decode(_ type: Int.Type) throws -> Int { try decoder.integer(at: index, as: type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try decoder.integer(at: index, as: type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try decoder.integer(at: index, as: type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try decoder.integer(at: index, as: type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try decoder.integer(at: index, as: type) }
    func decode(_ type: UInt.Type) throws -> UInt { try decoder.integer(at: index, as: type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decoder.integer(at: index, as: type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decoder.integer(at: index, as: type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decoder.integer(at: index, as: type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decoder.integer(at: index, as: type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.value(type, at: index, key: nil) }
}
