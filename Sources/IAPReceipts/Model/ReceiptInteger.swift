import IAPCore

/// An ASN.1 INTEGER kept exactly as the receipt holds it, however large.
///
/// Sandbox receipts carry web order line item ids past 64 bits; rounding them through `Int` or `Double` would change
/// them. The value is kept as its big-endian two's-complement bytes and shown in decimal.
public struct ReceiptInteger: Hashable, Sendable, CustomStringConvertible, Codable {
    /// The minimal big-endian two's-complement bytes of the value.
    public let bytes: [UInt8]

    /// The widest value read from a receipt or from JSON: 32 bytes (256 bits). Apple's widest integers, sandbox web
    /// order line item ids, take 9; a bound keeps the decimal conversions (quadratic in the width) cheap whatever the
    /// input says.
    public static let maximumByteCount = 32

    /// Takes the content octets of an ASN.1 INTEGER, removing redundant leading sign octets in one pass.
    ///
    /// Any width is kept; readers of untrusted input check ``minimalByteCount(of:)`` against ``maximumByteCount``
    /// first.
    public init(bytes: some Collection<UInt8>) {
        let all = Array(bytes)
        self.bytes = all.isEmpty ? [0] : Array(all[Self.redundantPrefixCount(all)...])
    }

    /// How many bytes the value of these INTEGER content octets takes once written minimally.
    public static func minimalByteCount(of content: some Collection<UInt8>) -> Int {
        let all = Array(content)
        return all.isEmpty ? 1 : all.count - redundantPrefixCount(all)
    }

    /// The number of leading octets that only repeat the sign (0x00 before a clear high bit, 0xFF before a set one).
    private static func redundantPrefixCount(_ bytes: [UInt8]) -> Int {
        var index = 0
        while index + 1 < bytes.count,
            (bytes[index] == 0x00 && bytes[index + 1] & 0x80 == 0)
                || (bytes[index] == 0xff && bytes[index + 1] & 0x80 != 0)
        {
            index += 1
        }
        WorkMeter.tick(index + 1)
        return index
    }

    /// The value of a non-negative `UInt64`.
    public init(_ value: UInt64) {
        var raw: [UInt8] = [0]
        for shift in stride(from: 56, through: 0, by: -8) {
            raw.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
        self.init(bytes: raw)
    }

    /// The most decimal digits ``init(decimal:)`` reads: enough for any value of ``maximumByteCount`` bytes.
    public static let maximumDecimalDigits = 78

    /// Parses a decimal string (an optional leading minus, then at most ``maximumDecimalDigits`` digits).
    public init?(decimal: String) {
        var digits = Substring(decimal).utf8
        let negative = digits.first == UInt8(ascii: "-")
        if negative { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.count <= Self.maximumDecimalDigits,
            digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
        else { return nil }
        var magnitude: [UInt8] = [0]  // big-endian
        for digit in digits {
            var carry = Int(digit - 0x30)
            for index in magnitude.indices.reversed() {
                let value = Int(magnitude[index]) * 10 + carry
                magnitude[index] = UInt8(value & 0xff)
                carry = value >> 8
            }
            while carry > 0 {
                magnitude.insert(UInt8(carry & 0xff), at: 0)
                carry >>= 8
            }
        }
        magnitude.insert(0, at: 0)
        if negative { magnitude = Self.negated(magnitude) }
        self.init(bytes: magnitude)
    }

    public var isNegative: Bool { bytes[0] & 0x80 != 0 }

    /// The value when it fits in a `UInt64`.
    public var uint64Value: UInt64? {
        guard !isNegative else { return nil }
        let significant = bytes.first == 0 ? Array(bytes.dropFirst()) : bytes
        guard significant.count <= 8 else { return nil }
        return significant.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The value when it fits in an `Int`.
    public var intValue: Int? {
        guard bytes.count <= 8 else { return nil }
        var value = isNegative ? -1 : 0
        for byte in bytes { value = value << 8 | Int(byte) }
        return value
    }

    /// The exact decimal value.
    public var description: String {
        var magnitude = isNegative ? Self.negated(bytes) : bytes
        var digits: [UInt8] = []
        while magnitude.contains(where: { $0 != 0 }) {
            WorkMeter.tick(magnitude.count)
            var remainder = 0
            for index in magnitude.indices {
                let value = remainder << 8 | Int(magnitude[index])
                magnitude[index] = UInt8(value / 10)
                remainder = value % 10
            }
            digits.append(UInt8(0x30 + remainder))
        }
        if digits.isEmpty { return "0" }
        return (isNegative ? "-" : "") + String(decoding: digits.reversed(), as: UTF8.self)
    }

    /// Two's-complement negation of big-endian bytes (one extra byte so the result keeps its sign).
    private static func negated(_ value: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: value.first.map { $0 & 0x80 != 0 ? 0xff : 0 } ?? 0, count: 1) + value
        var carry = 1
        for index in result.indices.reversed() {
            let sum = Int(~result[index]) + carry
            result[index] = UInt8(sum & 0xff)
            carry = sum >> 8
        }
        return result
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let value = ReceiptInteger(decimal: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a decimal integer: \(text)")
        }
        self = value
    }

    /// Encodes as a decimal string, so no JSON reader rounds it.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
