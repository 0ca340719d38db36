import Foundation
import IAPCore
import IAPSignedData

/// Reads the JSON the server stores (records, digests) into `Decodable` values, the counterpart of
/// ``StreamingJSONEncoder``: a post reads every row of its customer, and Foundation's `JSONDecoder` spent a tenth of a
/// request there.
///
/// The document is scanned once into a flat list of its values (``JSONTape``); decoding walks that list without
/// building dictionaries. A keyed container looks for the next key where the last one was found, so a value read in
/// the order it was written (what synthesized conformances do) costs one comparison a key; any other order, unknown
/// keys and whitespace read as well. It reads what Foundation's decoder reads with its default strategies: dates as
/// `Date`'s own form (seconds since 2001), data as base64, URLs as strings; a key that appears twice gives its first
/// value; an integer written with a fraction or an exponent is read from its digits, exactly. Invalid JSON, invalid
/// UTF-8 (in any string, read or not), numbers that do not fit and documents nested deeper than ``maximumDepth`` are
/// errors, never crashes. Stricter than Foundation in one place: its depth limit is 512.
struct StreamingJSONDecoder {
    /// Containers nested deeper than this are refused.
    static let maximumDepth = 128

    func decode<T: Decodable>(_ type: T.Type, from json: String) throws -> T {
        try decode(type, from: Array(json.utf8))
    }

    func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try decode(type, from: [UInt8](data))
    }

    func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try TapeDecoder(tape: try JSONTape(bytes)).value(T.self, at: 0, key: nil)
    }
}

/// A JSON document as the list of its values in document order: an object's members follow it as a key (a string)
/// and its value, an array's elements follow it, and every value says where the value after it (and after all it
/// contains) starts.
struct JSONTape {
    enum Kind: UInt8 { case object, array, string, escapedString, number, `true`, `false`, null }

    struct Value {
        var kind: Kind
        /// Strings: the bytes between the quotes; numbers: their text.
        var start: Int
        var end: Int
        /// The index of the value after this one and everything it contains.
        var next: Int
        /// Members of an object, elements of an array.
        var count: Int
        /// An object in which a key appears twice (its first value is the one read, as Foundation's decoder does).
        var repeatsKeys = false
    }

    let bytes: [UInt8]
    private(set) var values: [Value] = []
    /// The keys of the objects being read (a hash of each and its index), to find a key that appears twice. An object
    /// with more than ``linearKeys`` keys (records have about 20) keeps a set of them instead, so a long one costs no
    /// more than its length.
    private var openKeys: [(hash: UInt64, index: Int)] = []
    private static let linearKeys = 64

    init(_ bytes: [UInt8]) throws {
        self.bytes = bytes
        values.reserveCapacity(bytes.count / 16)
        // A byte order mark is skipped, as Foundation's decoder skips it.
        var position = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        try readValue(&position, depth: 0)
        skipSpace(&position)
        guard position == bytes.count else { throw Self.invalid("unexpected bytes after the document", position) }
    }

    static func invalid(_ reason: String, _ position: Int) -> DecodingError {
        .dataCorrupted(.init(codingPath: [], debugDescription: "Invalid JSON at byte \(position): \(reason)"))
    }

    private func skipSpace(_ position: inout Int) {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    private func byte(_ position: Int) throws -> UInt8 {
        guard position < bytes.count else { throw Self.invalid("the document ends early", position) }
        return bytes[position]
    }

    private mutating func readValue(_ position: inout Int, depth: Int) throws {
        skipSpace(&position)
        let first = try byte(position)
        switch first {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard depth < StreamingJSONDecoder.maximumDepth else { throw Self.invalid("nested too deep", position) }
            let object = first == UInt8(ascii: "{")
            let index = values.count
            values.append(Value(kind: object ? .object : .array, start: position, end: position, next: 0, count: 0))
            position += 1
            skipSpace(&position)
            var count = 0
            let firstKey = openKeys.count
            defer { openKeys.removeSubrange(firstKey...) }
            var indexedKeys: Set<String> = []
            if try byte(position) == (object ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                position += 1
            } else {
                while true {
                    if object {
                        skipSpace(&position)
                        guard try byte(position) == UInt8(ascii: "\"") else { throw Self.invalid("a key", position) }
                        try readString(&position)
                        noteKey(values.count - 1, of: index, since: firstKey, indexed: &indexedKeys)
                        skipSpace(&position)
                        guard try byte(position) == UInt8(ascii: ":") else { throw Self.invalid("a colon", position) }
                        position += 1
                    }
                    try readValue(&position, depth: depth + 1)
                    count += 1
                    skipSpace(&position)
                    let separator = try byte(position)
                    position += 1
                    if separator == UInt8(ascii: ",") { continue }
                    guard separator == (object ? UInt8(ascii: "}") : UInt8(ascii: "]")) else {
                        throw Self.invalid("a comma or the container's end", position - 1)
                    }
                    break
                }
            }
            values[index].end = position
            values[index].count = count
            values[index].next = values.count
        case UInt8(ascii: "\""):
            try readString(&position)
        case UInt8(ascii: "t"): try readLiteral("true", .true, &position)
        case UInt8(ascii: "f"): try readLiteral("false", .false, &position)
        case UInt8(ascii: "n"): try readLiteral("null", .null, &position)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try readNumber(&position)
        default:
            throw Self.invalid("no value starts with this byte", position)
        }
    }

    /// Marks `object` when the key at `key` appeared before in it: among its first ``linearKeys`` keys by hash, then
    /// by text (a collision costs at most a comparison with each of those); past them, in a set of their texts.
    private mutating func noteKey(_ key: Int, of object: Int, since first: Int, indexed: inout Set<String>) {
        let earlier = openKeys.count - first
        guard indexed.isEmpty, earlier < Self.linearKeys else {
            if !indexed.insert(string(key) ?? "").inserted { values[object].repeatsKeys = true }
            return
        }
        var fnv = FNV1a()
        if values[key].kind == .string {
            fnv.add(bytes[values[key].start..<values[key].end])
        } else {
            fnv.add(string(key) ?? "")
        }
        let hash = fnv.value
        for known in openKeys[first...] where known.hash == hash && string(known.index) == string(key) {
            values[object].repeatsKeys = true
        }
        openKeys.append((hash, key))
        if earlier + 1 == Self.linearKeys {
            for known in openKeys[first...] { indexed.insert(string(known.index) ?? "") }
        }
    }

    private mutating func readLiteral(_ text: StaticString, _ kind: Kind, _ position: inout Int) throws {
        let length = text.utf8CodeUnitCount
        guard position + length <= bytes.count,
            text.withUTF8Buffer({ bytes[position..<position + length].elementsEqual($0) })
        else { throw Self.invalid("an unknown literal", position) }
        values.append(Value(kind: kind, start: position, end: position + length, next: values.count + 1, count: 0))
        position += length
    }

    private mutating func readString(_ position: inout Int) throws {
        let start = position + 1
        var index = start
        var escaped = false
        var ascii = true
        while true {
            let next = try byte(index)
            if next == UInt8(ascii: "\"") { break }
            if next == UInt8(ascii: "\\") {
                escaped = true
                index += 2
            } else {
                guard next >= 0x20 else { throw Self.invalid("a control character in a string", index) }
                ascii = ascii && next < 0x80
                index += 1
            }
        }
        let value = Value(
            kind: escaped ? .escapedString : .string, start: start, end: index, next: values.count + 1, count: 0)
        // Every string is checked, read or not, as Foundation's decoder does: escapes, then UTF-8.
        if escaped || !ascii, quotedText(value) == nil { throw Self.invalid("an invalid string", start) }
        values.append(value)
        position = index + 1
    }

    private mutating func readNumber(_ position: inout Int) throws {
        let start = position
        func digits(_ position: inout Int) throws {
            guard position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) else {
                throw Self.invalid("a digit", position)
            }
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
                position += 1
            }
        }
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        let leading = position
        try digits(&position)
        guard bytes[leading] != UInt8(ascii: "0") || position == leading + 1 else {
            throw Self.invalid("a number with a leading zero", leading)
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            try digits(&position)
        }
        if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            try digits(&position)
        }
        values.append(Value(kind: .number, start: start, end: position, next: values.count + 1, count: 0))
    }

    // MARK: - Reading values

    /// The text of the string at `index`, escapes resolved (every string was checked when the document was read).
    func string(_ index: Int) -> String? {
        let value = values[index]
        switch value.kind {
        case .string: return String(decoding: bytes[value.start..<value.end], as: UTF8.self)
        case .escapedString: return quotedText(value)
        default: return nil
        }
    }

    /// Whether the string at `index` is `text`, compared byte for byte when it has no escapes.
    func string(_ index: Int, is text: String) -> Bool {
        let value = values[index]
        guard value.kind == .string else { return string(index) == text }
        var text = text
        return text.withUTF8 { utf8 in
            utf8.count == value.end - value.start
                && bytes.withUnsafeBufferPointer { all in
                    utf8.isEmpty || memcmp(all.baseAddress! + value.start, utf8.baseAddress!, utf8.count) == 0
                }
        }
    }

    /// A string's text read by the package's JSON scanner, its quotes included.
    private func quotedText(_ value: Value) -> String? {
        bytes.withUnsafeBufferPointer { all in
            JSONString.text(UnsafeBufferPointer(rebasing: all[(value.start - 1)..<(value.end + 1)]))
        }
    }

    /// A number written with a fraction or an exponent (`1.0`, `2E3`, `9007199254740993.0`) as the integer it stands
    /// for, computed from its digits (a `Double` would round past 2^53); nil when it has a fraction or does not fit.
    private func scaledInteger<T: FixedWidthInteger>(_ value: Value, as _: T.Type) -> T? {
        var digits: [UInt8] = []
        var position = value.start
        let negative = bytes[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        var scale = 0
        var inFraction = false
        while position < value.end, bytes[position] | 0x20 != UInt8(ascii: "e") {
            if bytes[position] == UInt8(ascii: ".") {
                inFraction = true
            } else {
                digits.append(bytes[position] - UInt8(ascii: "0"))
                if inFraction { scale -= 1 }
            }
            position += 1
        }
        if position < value.end {
            guard let exponent = Int(Substring(decoding: bytes[(position + 1)..<value.end], as: UTF8.self)),
                exponent.magnitude < 1_000
            else { return nil }
            scale += exponent
        }
        while let first = digits.first, first == 0, digits.count > 1 { digits.removeFirst() }
        if scale < 0 {
            // The digits shifted out must all be zeros.
            let kept = max(digits.count + scale, 0)
            guard digits[kept...].allSatisfy({ $0 == 0 }) else { return nil }
            digits.removeSubrange(kept...)
        } else {
            guard digits.count + scale <= 40 || digits.allSatisfy({ $0 == 0 }) else { return nil }
            digits += repeatElement(0, count: digits.allSatisfy { $0 == 0 } ? 0 : scale)
        }
        var result: T = 0
        for digit in digits {
            guard Self.append(digit, to: &result, negative: negative) else { return nil }
        }
        return result
    }

    /// The text of the number at `index`.
    func numberText(_ index: Int) -> Substring? {
        let value = values[index]
        guard value.kind == .number else { return nil }
        return Substring(decoding: bytes[value.start..<value.end], as: UTF8.self)
    }

    /// The number at `index` as `T`: its digits read directly, or, written with a fraction or an exponent, the
    /// number it stands for when `T` holds it exactly.
    func integer<T: FixedWidthInteger>(_ index: Int, as _: T.Type) -> T? {
        let value = values[index]
        guard value.kind == .number else { return nil }
        var position = value.start
        let negative = bytes[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        var result: T = 0
        while position < value.end {
            let digit = bytes[position] &- UInt8(ascii: "0")
            guard digit < 10 else { return scaledInteger(value, as: T.self) }
            guard Self.append(digit, to: &result, negative: negative) else { return nil }
            position += 1
        }
        return result
    }

    /// `result` times ten plus `digit` (minus, for a negative number, so that `T.min` fits); false on overflow.
    private static func append<T: FixedWidthInteger>(_ digit: UInt8, to result: inout T, negative: Bool) -> Bool {
        let (shifted, overflow) = result.multipliedReportingOverflow(by: 10)
        let (next, overflow2) =
            negative ? shifted.subtractingReportingOverflow(T(digit)) : shifted.addingReportingOverflow(T(digit))
        guard !overflow, !overflow2 else { return false }
        result = next
        return true
    }
}
