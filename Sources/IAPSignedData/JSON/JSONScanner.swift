import IAPCore

/// A strict, fast RFC 8259 reader over bytes, which payload models drive field by field.
///
/// It never builds a tree it does not need: a model asks for the members of an object and reads each value as the
/// type it expects. It refuses invalid UTF-8, control characters in strings, lone surrogates, leading zeros, trailing
/// commas, nesting deeper than ``maximumDepth``, duplicated keys (two parsers could otherwise read different values
/// from the same signed bytes) and anything after the top-level value.
struct JSONScanner {
    static let maximumDepth = 64

    private let bytes: UnsafeBufferPointer<UInt8>
    private(set) var index = 0
    private var depth = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Reads a whole document with `body`, then refuses anything but whitespace after it.
    static func read<T>(_ bytes: some Collection<UInt8>, _ body: (inout JSONScanner) throws -> T) throws -> T {
        func run(_ buffer: UnsafeBufferPointer<UInt8>) throws -> T {
            var scanner = JSONScanner(buffer)
            let result = try body(&scanner)
            scanner.skipWhitespace()
            guard scanner.index == buffer.count else { throw scanner.error("unexpected text after the JSON value") }
            return result
        }
        if let result = try bytes.withContiguousStorageIfAvailable(run) { return result }
        return try Array(bytes).withUnsafeBufferPointer(run)
    }

    // MARK: Structure

    /// Calls `body` with each member's key (its bytes, escapes decoded, not yet checked as UTF-8) and the scanner
    /// positioned at the member's value, which `body` must read. The caller refuses duplicated keys.
    mutating func forEachMember(_ body: (inout JSONScanner, UnsafeBufferPointer<UInt8>) throws -> Void) throws {
        try enter(UInt8(ascii: "{"), "an object")
        if try !consume(UInt8(ascii: "}")) {
            repeat {
                WorkMeter.tick()
                skipWhitespace()
                guard peek() == UInt8(ascii: "\"") else { throw error("expected a member name") }
                if let raw = scanPlainString() {
                    try expect(UInt8(ascii: ":"))
                    try body(&self, raw)
                } else {
                    let key = try readString()
                    try expect(UInt8(ascii: ":"))
                    try Array(key.utf8).withUnsafeBufferPointer { try body(&self, $0) }
                }
            } while try consume(UInt8(ascii: ","))
            try expect(UInt8(ascii: "}"))
        }
        depth -= 1
    }

    /// A key's bytes as a string, refusing invalid UTF-8.
    func keyString(_ bytes: UnsafeBufferPointer<UInt8>) throws -> String {
        guard let key = Self.string(bytes) else { throw error("invalid UTF-8 in a key") }
        return key
    }

    func duplicateKeyError(_ bytes: UnsafeBufferPointer<UInt8>) -> SignedDataParsingError {
        error("the key \"\(String(decoding: bytes, as: UTF8.self))\" appears twice")
    }

    /// Calls `body` with the scanner positioned at each element of an array, which `body` must read.
    mutating func forEachElement(_ body: (inout JSONScanner) throws -> Void) throws {
        try enter(UInt8(ascii: "["), "an array")
        if try !consume(UInt8(ascii: "]")) {
            repeat {
                WorkMeter.tick()
                try body(&self)
            } while try consume(UInt8(ascii: ","))
            try expect(UInt8(ascii: "]"))
        }
        depth -= 1
    }

    /// Whether the next value starts with `byte`.
    mutating func nextIs(_ byte: UInt8) -> Bool {
        skipWhitespace()
        return peek() == byte
    }

    /// Consumes `null` if that is the next value.
    mutating func consumeNull() -> Bool {
        skipWhitespace()
        guard index + 4 <= bytes.count, bytes[index] == UInt8(ascii: "n"), bytes[index + 1] == UInt8(ascii: "u"),
            bytes[index + 2] == UInt8(ascii: "l"), bytes[index + 3] == UInt8(ascii: "l")
        else { return false }
        index += 4
        return true
    }

    // MARK: Typed values

    /// The next value as a string, or an error naming `field`.
    mutating func string(_ field: String) throws -> String {
        skipWhitespace()
        guard peek() == UInt8(ascii: "\"") else { throw typeError(field, "a string") }
        return try readString()
    }

    /// The next value as a boolean.
    mutating func bool(_ field: String) throws -> Bool {
        skipWhitespace()
        if matchLiteral("true") { return true }
        if matchLiteral("false") { return false }
        throw typeError(field, "true or false")
    }

    /// The next value as the text of a number.
    mutating func number(_ field: String) throws -> JSONNumber {
        skipWhitespace()
        guard let first = peek(), first == UInt8(ascii: "-") || isDigit(first) else {
            throw typeError(field, "a number")
        }
        return try readNumber()
    }

    /// The next value as a whole number that fits 64 bits (no fraction, no exponent).
    mutating func int64(_ field: String) throws -> Int64 {
        skipWhitespace()
        let start = index
        var negative = false
        if peek() == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        var value: Int64 = 0
        var digits = 0
        while let byte = peek(), isDigit(byte) {
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (added, overflow2) = shifted.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else {
                index = start
                throw typeError(field, "a whole number that fits 64 bits")
            }
            value = added
            digits += 1
            index += 1
        }
        let next = peek()
        guard digits > 0, !(digits > 1 && bytes[negative ? start + 1 : start] == UInt8(ascii: "0")),
            next != UInt8(ascii: "."), next != UInt8(ascii: "e"), next != UInt8(ascii: "E")
        else {
            index = start
            throw typeError(field, "a whole number")
        }
        return negative ? -value : value
    }

    /// The next value as a double (integers, fractions and exponents).
    mutating func double(_ field: String) throws -> Double {
        skipWhitespace()
        let start = index
        if let whole = try? int64(field), whole.magnitude < 1 << 53 { return Double(whole) }
        index = start
        let number = try self.number(field)
        guard let value = number.doubleValue, value.isFinite else { throw typeError(field, "a finite number") }
        return value
    }

    /// The next value, whatever it is.
    mutating func value() throws -> JSONValue {
        skipWhitespace()
        guard let byte = peek() else { throw error("expected a value") }
        switch byte {
        case UInt8(ascii: "{"):
            var object = JSONObject()
            try forEachMember { scanner, keyBytes in
                let key = try scanner.keyString(keyBytes)
                guard !object.contains(key) else { throw scanner.duplicateKeyError(keyBytes) }
                object.appendNew(key, try scanner.value())
            }
            return .object(object)
        case UInt8(ascii: "["):
            var array: [JSONValue] = []
            try forEachElement { scanner in array.append(try scanner.value()) }
            return .array(array)
        case UInt8(ascii: "\""):
            return .string(try readString())
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            return .bool(try bool("value"))
        case UInt8(ascii: "n"):
            guard consumeNull() else { throw error("expected a value") }
            return .null
        default:
            guard byte == UInt8(ascii: "-") || isDigit(byte) else { throw error("expected a value") }
            return .number(try readNumber())
        }
    }

    // MARK: Errors

    func error(_ message: String) -> SignedDataParsingError {
        SignedDataParsingError(.malformedJSON, "\(message) at byte \(index)")
    }

    func typeError(_ field: String, _ expected: String) -> SignedDataParsingError {
        SignedDataParsingError(.malformedField, "\"\(field)\" must be \(expected) (byte \(index))")
    }

    // MARK: Lexing

    private func peek() -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func enter(_ opening: UInt8, _ what: String) throws {
        skipWhitespace()
        guard peek() == opening else { throw error("expected \(what)") }
        guard depth < Self.maximumDepth else { throw error("nesting deeper than \(Self.maximumDepth) levels") }
        depth += 1
        index += 1
    }

    private mutating func consume(_ byte: UInt8) throws -> Bool {
        skipWhitespace()
        guard peek() == byte else { return false }
        index += 1
        return true
    }

    private mutating func expect(_ byte: UInt8) throws {
        guard try consume(byte) else { throw error("expected '\(Character(Unicode.Scalar(byte)))'") }
    }

    private mutating func matchLiteral(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        let literalBytes = UnsafeBufferPointer(start: literal.utf8Start, count: count)
        for offset in 0..<count where bytes[index + offset] != literalBytes[offset] { return false }
        index += count
        return true
    }

    private mutating func readNumber() throws -> JSONNumber {
        let start = index
        if peek() == UInt8(ascii: "-") { index += 1 }
        guard let first = peek(), isDigit(first) else { throw error("a number needs digits") }
        index += 1
        if first == UInt8(ascii: "0"), let next = peek(), isDigit(next) { throw error("a number has a leading zero") }
        while let byte = peek(), isDigit(byte) { index += 1 }
        if peek() == UInt8(ascii: ".") {
            index += 1
            guard let byte = peek(), isDigit(byte) else { throw error("a fraction needs digits") }
            while let byte = peek(), isDigit(byte) { index += 1 }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard let byte = peek(), isDigit(byte) else { throw error("an exponent needs digits") }
            while let byte = peek(), isDigit(byte) { index += 1 }
        }
        guard index - start <= 64 else { throw error("a number longer than 64 characters") }
        return JSONNumber(text: String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
    }

    /// The bytes as a string, or nil when they are not valid UTF-8. ASCII, nearly every string Apple sends, takes a
    /// fast path; `String(validating:as:)` is generic and measured slow when called unspecialised.
    static func string(_ raw: UnsafeBufferPointer<UInt8>) -> String? {
        var index = 0
        while index < raw.count, raw[index] < 0x80 { index += 1 }
        if index == raw.count { return String(decoding: raw, as: UTF8.self) }
        return String(validating: raw, as: UTF8.self)
    }

    /// At an opening quote: when the string has no escapes and no control characters, consumes it and returns its
    /// bytes (not yet checked as UTF-8); otherwise consumes nothing and returns nil.
    private mutating func scanPlainString() -> UnsafeBufferPointer<UInt8>? {
        var end = index + 1
        while end < bytes.count {
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") {
                let raw = UnsafeBufferPointer(rebasing: bytes[(index + 1)..<end])
                index = end + 1
                return raw
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
            end += 1
        }
        return nil
    }

    /// Reads a string starting at its opening quote.
    private mutating func readString() throws -> String {
        index += 1
        let start = index
        // Fast path: no escapes, so the text is the bytes themselves (checked as UTF-8).
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let raw = UnsafeBufferPointer(rebasing: bytes[start..<index])
                guard let text = String(validating: raw, as: UTF8.self) else {
                    throw error("invalid UTF-8 in a string")
                }
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw error("a control character in a string") }
            index += 1
        }
        guard index < bytes.count else { throw error("an unterminated string") }
        return try readEscapedString(from: start)
    }

    private mutating func readEscapedString(from start: Int) throws -> String {
        var text: [UInt8] = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let result = text.withUnsafeBufferPointer(Self.string) else {
                    throw error("invalid UTF-8 in a string")
                }
                return result
            case UInt8(ascii: "\\"):
                index += 1
                guard let escape = peek() else { break }
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escape)
                case UInt8(ascii: "b"): text.append(0x08)
                case UInt8(ascii: "f"): text.append(0x0C)
                case UInt8(ascii: "n"): text.append(0x0A)
                case UInt8(ascii: "r"): text.append(0x0D)
                case UInt8(ascii: "t"): text.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try readHex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard matchLiteral("\\u") else { throw error("a lone surrogate") }
                        let low = try readHex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw error("a lone surrogate") }
                        scalar = 0x10000 + (scalar - 0xD800) << 10 + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(scalar) {
                        throw error("a lone surrogate")
                    }
                    text.append(contentsOf: Array(String(Character(Unicode.Scalar(scalar)!)).utf8))
                default:
                    throw error("an invalid escape")
                }
            default:
                guard byte >= 0x20 else { throw error("a control character in a string") }
                text.append(byte)
                index += 1
            }
        }
        throw error("an unterminated string")
    }

    private mutating func readHex4() throws -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("a truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("an invalid \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }
}
