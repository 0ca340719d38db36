import Foundation
import IAPCatalog
import IAPEntitlements
import IAPTestSupport
import Testing

@testable import IAPServer

/// The server reads its stored records and digests with its own decoder; these tests hold it to what Foundation's
/// `JSONDecoder` reads from the same bytes: the same values, and an error wherever Foundation gives one.
@Suite("Streaming JSON decoder")
struct StreamingJSONDecoderTests {
    static let ours = StreamingJSONDecoder()
    static let foundation = JSONDecoder()

    /// Records with every field set or left out, in varied combinations.
    static func records(_ count: Int, seed: UInt64) -> [PurchaseRecord] {
        var random = SeededGenerator(seed: seed)
        func maybe<T>(_ value: @autoclosure () -> T) -> T? { Bool.random(using: &random) ? value() : nil }
        func date() -> Date {
            Date(timeIntervalSince1970: Double(Int64.random(in: 0..<4_102_444_800_000, using: &random)) / 1000)
        }
        let products = [
            FloristCatalog.gold, FloristCatalog.flowers, FloristCatalog.installation, "a \"quoted\" é/ü 🌷\n",
        ]
        return (0..<count).map { index in
            let bought = date()
            return PurchaseRecord(
                transactionID: "\(2_000_000_000 + index)", originalTransactionID: maybe("\(1_000_000 + index)"),
                productID: products[index % products.count],
                kind: maybe([ProductKind.consumable, .nonConsumable, .autoRenewable, .nonRenewable][index % 4]),
                subscriptionGroupID: maybe(FloristCatalog.vipGroup), quantity: Int.random(in: 1...99, using: &random),
                purchaseDate: bought, originalPurchaseDate: maybe(date()),
                expiresDate: maybe(bought.addingTimeInterval(Double(Int.random(in: 1...99_999, using: &random)))),
                ownership: Bool.random(using: &random) ? .purchased : .familyShared,
                revocation: maybe(
                    Revocation(date: date(), kind: .proratedRefund, reason: maybe("1"), percentage: maybe(-5))),
                isUpgraded: Bool.random(using: &random),
                offer: maybe(OfferUse(kind: .winBack, identifier: maybe("back\\slash"), isFreeTrial: true)),
                appAccountToken: maybe("\(index)-token"), webOrderLineItemID: maybe("\(index)"),
                environment: maybe("Sandbox"), source: [.receipt, .signedTransaction, .simulator, .manual][index % 4],
                signedDate: maybe(date()),
                price: maybe(Int64.random(in: -9_999_999_999...9_999_999_999, using: &random)),
                currency: maybe("EUR"), storefront: maybe("FRA"))
        }
    }

    /// Both decoders on `bytes`: the same value, or an error from both.
    static func expectAgreement<T: Decodable & Equatable>(
        _ type: T.Type, _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let mine = Result { try ours.decode(type, from: bytes) }
        let theirs = Result { try foundation.decode(type, from: Data(bytes)) }
        switch (mine, theirs) {
        case (.success(let a), .success(let b)):
            #expect(a == b, "\(String(decoding: bytes, as: UTF8.self))", sourceLocation: sourceLocation)
        case (.failure, .failure):
            break
        default:
            Issue.record(
                "ours \(mine), Foundation's \(theirs) for \(String(decoding: bytes, as: UTF8.self))",
                sourceLocation: sourceLocation)
        }
    }

    @Test func storedRecordsReadBackAsTheyWereWritten() throws {
        let records = Self.records(400, seed: 7)
        let renewals = records.map {
            RenewalRecord(
                originalTransactionID: $0.originalTransactionID, productID: $0.productID,
                autoRenewProductID: $0.subscriptionGroupID, willAutoRenew: $0.isUpgraded ? nil : true,
                expirationReason: $0.isUpgraded ? .billingError : nil, isInBillingRetry: $0.isUpgraded,
                gracePeriodExpiresDate: $0.expiresDate, renewalDate: $0.originalPurchaseDate,
                priceIncreasePending: $0.offer == nil ? nil : false, signedDate: $0.signedDate, source: $0.source)
        }
        let consumptions = records.map {
            ConsumptionRecord(
                productID: $0.productID, quantity: $0.quantity, date: $0.purchaseDate,
                transactionID: $0.appAccountToken, id: $0.webOrderLineItemID)
        }
        let writer = StreamingJSONEncoder(datesAsReferenceSeconds: true)
        let pretty = JSONEncoder()
        pretty.outputFormatting = [.prettyPrinted, .sortedKeys]
        for (record, (renewal, consumption)) in zip(records, zip(renewals, consumptions)) {
            // What the server writes, and Foundation's own output in another key order with whitespace and escaped
            // slashes (rows written by earlier versions).
            for bytes in [try writer.encode(record), [UInt8](try pretty.encode(record))] {
                #expect(try Self.ours.decode(PurchaseRecord.self, from: bytes) == record)
                Self.expectAgreement(PurchaseRecord.self, bytes)
            }
            for bytes in [try writer.encode(renewal), [UInt8](try pretty.encode(renewal))] {
                #expect(try Self.ours.decode(RenewalRecord.self, from: bytes) == renewal)
            }
            for bytes in [try writer.encode(consumption), [UInt8](try pretty.encode(consumption))] {
                #expect(try Self.ours.decode(ConsumptionRecord.self, from: bytes) == consumption)
            }
        }
    }

    @Test func aFoldedDigestReadsBackWhole() throws {
        let engine = EntitlementEngine(catalog: FloristCatalog.catalog)
        var history = PurchaseHistory()
        history.records = Self.records(300, seed: 11)
        history.consumptions = history.records.prefix(40).map {
            ConsumptionRecord(productID: $0.productID, quantity: 1, date: $0.purchaseDate.addingTimeInterval(60))
        }
        let moment = Date(timeIntervalSince1970: 3_000_000_000)
        let compact = engine.compacted(CompactHistory(history), at: moment, keeping: 20)
        #expect(compact.foldedThrough != nil, "the digest has folded parts to read")
        let bytes = try StreamingJSONEncoder(datesAsReferenceSeconds: true).encode(compact)
        let read = try Self.ours.decode(CompactHistory.self, from: bytes)
        #expect(read == compact)
        #expect(engine.snapshot(of: read, at: moment) == engine.snapshot(of: compact, at: moment))
    }

    /// A value of every kind the decoder reads on its own.
    struct Everything: Codable, Equatable {
        var text: String
        var integer: Int
        var small: Int8
        var unsigned: UInt64
        var double: Double
        var float: Float
        var flag: Bool
        var date: Date
        var missing: String?
        var nothing: Int?
        var list: [Int?]
        var nested: [[String]]
        var table: [String: Double]
        var numbered: [Int: String]
        var url: URL
        var data: Data
        var decimal: Decimal
    }

    @Test func documentsFromElsewhereReadAsFoundationReadsThem() throws {
        let base = """
            {"text": "a\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u00e9\\ud83c\\udf37\\u0000é🌷", "integer": -9223372036854775808,
             "small": -128, "unsigned": 18446744073709551615, "double": -1.5e-300, "float": 3.25, "flag": true,
             "date": 774192000.123, "nothing": null, "list": [1, null, -0, 2E3],
             "nested": [[], ["x"], ["y", "z"]], "table": {"b": 1, "a": 2.5, "": 0}, "numbered": {"1": "one", "-2": "two"},
             "url": "https://example.com/a?b=c", "data": "aGVsbG8=", "decimal": 12.345, "unknown": {"deep": [[{}]]}}
            """
        let changes: [(String, String)] = [
            ("\"integer\": -9223372036854775808", "\"integer\": 1.0"),
            ("\"integer\": -9223372036854775808", "\"integer\": 1.5"),
            ("\"integer\": -9223372036854775808", "\"integer\": 9007199254740993.0"),
            ("\"integer\": -9223372036854775808", "\"integer\": 100e-2"),
            ("\"integer\": -9223372036854775808", "\"integer\": -1.5E1"),
            ("\"unsigned\": 18446744073709551615", "\"unsigned\": 1.8446744073709551616e19"),
            ("\"small\": -128", "\"small\": 128"),
            ("\"unsigned\": 18446744073709551615", "\"unsigned\": -1"),
            ("\"double\": -1.5e-300", "\"double\": 1e999"),
            ("\"flag\": true", "\"flag\": 1"),
            ("\"nothing\": null", "\"nothing\": \"1\""),
            ("\"text\"", "\"te\\u0078t\""),
            ("\"text\": ", "\"text\": \"first\", \"text\": "),
            ("\"data\": \"aGVsbG8=\"", "\"data\": \"not base 64\""),
            ("\"numbered\": {\"1\"", "\"numbered\": {\"one\""),
            ("\"date\": 774192000.123", "\"date\": \"2025-01-01\""),
            ("\\ud83c\\udf37", "\\ud83c"),
            ("-0,", "01,"),
        ]
        let variants =
            [base, " \n\t" + base + "\r\n", base + " x"]
            + changes.map { base.replacingOccurrences(of: $0.0, with: $0.1) }
        let read = try Self.ours.decode(Everything.self, from: base)
        #expect(read.text == "a\"b\\c/d\u{8}\u{c}\n\r\té🌷\u{0}é🌷" && read.numbered == [1: "one", -2: "two"])
        #expect(read.list == [1, nil, 0, 2000] && read.date == Date(timeIntervalSinceReferenceDate: 774_192_000.123))
        for json in variants { Self.expectAgreement(Everything.self, Array(json.utf8)) }
    }

    /// Reads `b` before `a`, and what is under "super" through a super decoder.
    struct OutOfOrder: Decodable, Equatable {
        var a: Int
        var b: Int
        var inherited: [String: Int]?
        enum CodingKeys: String, CodingKey { case a, b }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            b = try container.decode(Int.self, forKey: .b)
            a = try container.decode(Int.self, forKey: .a)
            inherited = try? [String: Int](from: container.superDecoder())
        }
    }

    /// Keeps the integers of an array and skips what is not one, as apps read lenient lists.
    struct Lenient: Decodable, Equatable {
        var integers: [Int]
        struct Skipped: Decodable {}
        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            integers = []
            while !container.isAtEnd {
                if let integer = try? container.decode(Int.self) {
                    integers.append(integer)
                } else if try container.decodeNil() {
                    integers.append(0)
                } else {
                    _ = try container.decode(Skipped.self)
                }
            }
        }
    }

    @Test func repeatedKeysSuperDecodersAndSkippedElementsReadAsFoundationReadsThem() {
        Self.expectAgreement([String: Int].self, Array(#"{"a": 1, "b": 2, "a": 3}"#.utf8))
        Self.expectAgreement(OutOfOrder.self, Array(#"{"a": 1, "b": 2, "a": 3}"#.utf8))
        Self.expectAgreement(OutOfOrder.self, Array(#"{"b": 2, "a": 1, "super": {"x": 1, "x": 2, "y": 3}}"#.utf8))
        Self.expectAgreement(OutOfOrder.self, Array(#"{"a": 1, "\u0061": 5, "b": 2}"#.utf8))
        Self.expectAgreement(OutOfOrder.self, Array(#"{"a": null, "b": 2}"#.utf8))
        Self.expectAgreement(Lenient.self, Array(#"[1, "two", null, 3.0, {"four": 4}, [5], 6]"#.utf8))
        Self.expectAgreement([Int].self, Array(#"[1, "two"]"#.utf8))
        Self.expectAgreement([Int?].self, Array(#"[1, null]"#.utf8))
        #expect((try? Self.ours.decode(Lenient.self, from: #"[1, "two", null, 3.0, 6]"#).integers) == [1, 0, 3, 6])
    }

    @Test func brokenRecordsAreErrorsWhereFoundationFindsThem() throws {
        let record = try #require(Self.records(8, seed: 3).max { $0.productID.count < $1.productID.count })
        let bytes = try StreamingJSONEncoder(datesAsReferenceSeconds: true).encode(record)
        for end in 0..<bytes.count { Self.expectAgreement(PurchaseRecord.self, Array(bytes[..<end])) }
        let replacements = Array(" \"\\09-e.{}[],:nx".utf8) + [0x01, 0x7F, 0xC3, 0xFF]
        for index in bytes.indices {
            for replacement in replacements where replacement != bytes[index] {
                var broken = bytes
                broken[index] = replacement
                Self.expectAgreement(PurchaseRecord.self, broken)
            }
        }
    }

    @Test func longObjectsAndHugeExponentsAreReadInTimeAndWithoutTraps() throws {
        // 20,000 keys read in work linear in them (not 200 million key comparisons), with a repeated key too.
        let keys = (0..<20_000).map { #""k\#($0)": \#($0)"# }
        let long = "{" + keys.joined(separator: ", ") + "}"
        #expect(try Self.ours.decode([String: Int].self, from: long).count == 20_000)
        let repeated = "{" + (keys + [#""k7": -1"#]).joined(separator: ", ") + "}"
        Self.expectAgreement([String: Int].self, Array(repeated.utf8))
        for exponent in ["1e-9223372036854775808", "1e9223372036854775807", "0e99999", "1.0e-999"] {
            _ = try? Self.ours.decode(Int.self, from: exponent)
            _ = try? Self.ours.decode(UInt8.self, from: "-" + exponent)
        }
    }

    @Test func deepNestingIsAnErrorNotACrash() {
        for json in [String(repeating: "[", count: 100_000), String(repeating: "{\"a\":", count: 100_000)] {
            #expect(throws: DecodingError.self) { try Self.ours.decode([String: Int].self, from: json) }
        }
        let nested = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: Never.self) { try Self.ours.decode(JSONNested.self, from: nested) }
    }

    /// Arrays in arrays, as deep as the document goes.
    indirect enum JSONNested: Decodable {
        case list([JSONNested])
        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            var items: [JSONNested] = []
            while !container.isAtEnd { items.append(try container.decode(JSONNested.self)) }
            self = .list(items)
        }
    }
}
