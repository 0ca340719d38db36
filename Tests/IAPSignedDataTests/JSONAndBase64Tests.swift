import Foundation
import IAPSignedData
import IAPTestSupport
import Testing

/// The strict JSON reader and the base64url codec: what they accept, what they refuse, and agreement with Foundation.
struct JSONAndBase64Tests {
    func parse(_ text: String) throws -> JSONValue { try JSONValue(jsonBytes: Array(text.utf8)) }

    @Test(arguments: [
        #"{"a":1,"a":2}"#, #"{"a":1,"\u0061":2}"#, "[1,]", "{\"a\":1,}", "01", "-", "1.", "1e", ".5", "+1",
        "\"\u{01}\"", #""\x""#, #""\ud800""#, #""\udc00x""#, #""\ud800\u0041""#, "\"abc", "tru", "nul", "{\"a\" 1}",
        "[1 2]", "{} {}", "{}x", "", " ", "[", "{\"a\":}",
    ])
    func malformedJSONIsRefused(text: String) {
        #expect(throws: SignedDataParsingError.self) { try parse(text) }
    }

    @Test func invalidUTF8IsRefused() {
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22]] {
            #expect(throws: SignedDataParsingError.self) { try JSONValue(jsonBytes: bytes) }
        }
    }

    @Test func deepNestingIsRefusedWithoutRecursingFurther() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect {
            try parse(deep)
        } throws: { error in
            (error as? SignedDataParsingError)?.reason.contains("nesting deeper") == true
        }
        let fine = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try parse(fine) }
    }

    @Test func escapesAndUnicodeDecode() throws {
        let value = try parse(#"{"k":"a\"b\\c\/d\n\u00e9\ud83d\ude00"}"#)
        #expect(value["k"] == .string("a\"b\\c/d\né😀"))
        // Written back and read again, it is the same string.
        #expect(try JSONValue(jsonBytes: value.jsonBytes()) == value)
    }

    @Test func numbersKeepTheirText() throws {
        let value = try parse("[0,-0,1.50,1e3,-62135769600000,1697679936049.7297,123456789012345678901234567890]")
        guard case .array(let numbers) = value else { Issue.record("not an array"); return }
        #expect(
            numbers.map { if case .number(let n) = $0 { n.text } else { "" } } == [
                "0", "-0", "1.50", "1e3", "-62135769600000", "1697679936049.7297", "123456789012345678901234567890",
            ])
    }

    @Test func randomDocumentsRoundTripAndAgreeWithFoundation() throws {
        var generator = SeededGenerator(seed: 0x4A53_4F4E)
        for _ in 0..<300 {
            let value = Self.randomValue(depth: 0, using: &generator)
            let bytes = value.jsonBytes()
            let parsed = try JSONValue(jsonBytes: bytes)
            #expect(parsed == value)
            // Foundation reads our output as the same structure.
            let foundation = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
            let again = try JSONSerialization.data(withJSONObject: foundation, options: [.fragmentsAllowed])
            #expect(try JSONValue(jsonBytes: Array(again)).isEquivalent(to: value))
        }
    }

    static func randomValue(depth: Int, using generator: inout SeededGenerator) -> JSONValue {
        let choice = Int.random(in: 0..<(depth > 4 ? 4 : 6), using: &generator)
        switch choice {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .number(JSONNumber(Int64.random(in: -1_000_000_000_000...1_000_000_000_000, using: &generator)))
        case 3:
            let scalars = (0..<Int.random(in: 0..<12, using: &generator)).map { _ in
                ["a", "\"", "\\", "\n", "é", "😀", "\u{1}", "/", "Z"].randomElement(using: &generator)!
            }
            return .string(scalars.joined())
        case 4:
            return .array(
                (0..<Int.random(in: 0..<5, using: &generator)).map { _ in
                    randomValue(depth: depth + 1, using: &generator)
                })
        default:
            var object = JSONObject()
            for index in 0..<Int.random(in: 0..<5, using: &generator) {
                object["k\(index)\(Int.random(in: 0..<3, using: &generator))"] = randomValue(
                    depth: depth + 1, using: &generator)
            }
            return .object(object)
        }
    }

    @Test func base64URLAgreesWithFoundationOnRandomBytes() {
        var generator = SeededGenerator(seed: 64)
        for length in 0..<200 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let ours = Base64URL.encode(bytes)
            let foundation = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(ours == foundation)
            #expect(Base64URL.decode(ours) == bytes)
        }
    }

    @Test(arguments: ["QQ==", "QQ=", "Q", "QR", "QUJ", "Q+", "Q/", "A A", "QUJD\n", "QUJDRA="])
    func nonCanonicalBase64URLIsRefused(text: String) {
        // Padding, a stray character, the standard alphabet, non-zero leftover bits ("QR", "QUJ"), whitespace.
        #expect(Base64URL.decode(text) == nil)
    }

    @Test func base64URLDecodesTheCanonicalForms() {
        #expect(Base64URL.decode("") == [])
        #expect(Base64URL.decode("QQ") == Array("A".utf8))
        #expect(Base64URL.decode("QUI") == Array("AB".utf8))
        #expect(Base64URL.decode("QUE") == Array("AA".utf8))
        #expect(Base64URL.decode("-_8") == [0xFB, 0xFF])
    }
}
