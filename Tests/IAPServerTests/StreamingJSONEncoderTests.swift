import Foundation
import IAPEntitlements
import IAPSignedData
import IAPSimulator
import IAPSimulatorServer
import IAPTestSupport
import Testing

@testable import IAPServer

/// The server writes answers and stored records with its own streaming encoder; these tests hold it to what
/// Foundation's `JSONEncoder` writes for the same values (compared as parsed JSON: key order may differ).
@Suite("Streaming JSON encoder")
struct StreamingJSONEncoderTests {
    /// Foundation's encoder with the answers' date form (tested on its own below), the reference.
    static let foundation: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(DateFormat.text(date))
        }
        return encoder
    }()

    static func parsed(_ bytes: some Sequence<UInt8>) throws -> NSObject {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) as? NSObject)
    }

    /// Foundation's ISO 8601 style truncates the fraction of a `Date`'s double, so a whole millisecond such as .108
    /// (stored as .10799...) can come out as .107; ours rounds to the millisecond the App Store signed. Compared here
    /// with Foundation given a date 0.4 ms later, where truncating and rounding agree.
    @Test func datesAreWhatFoundationsISO8601StyleWrites() {
        var random = SeededGenerator(seed: 42)
        var dates = [0, 951_782_400_000, 951_868_800_000, 4_107_542_400_000, 253_402_300_799_999].map {
            Date(timeIntervalSince1970: Double($0) / 1000)
        }
        for _ in 0..<2000 {
            dates.append(
                Date(timeIntervalSince1970: Double(Int64.random(in: 0..<253_402_300_799_999, using: &random)) / 1000))
        }
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: TimeZone(secondsFromGMT: 0)!)
        for date in dates {
            #expect(
                DateFormat.text(date) == date.addingTimeInterval(0.0004).formatted(style),
                "\(date.timeIntervalSince1970)")
        }
        #expect(DateFormat.text(Date(timeIntervalSince1970: -0.001)) == "1969-12-31T23:59:59.999Z")
        #expect(DateFormat.text(Date(timeIntervalSince1970: 253_402_300_800)) == "10000-01-01T00:00:00.000Z")
        #expect(DateFormat.text(Date(timeIntervalSince1970: -62_135_596_800)) == "0001-01-01T00:00:00.000Z")
    }

    @Test func aServersAnswersAndRecordsMatchFoundation() async throws {
        let harness = try ServerHarness()
        try harness.store.createAccount("ana")
        let token = UUID()
        var customer: CustomerKey?
        for product in [
            FloristCatalog.gold, FloristCatalog.flowers, FloristCatalog.installation, FloristCatalog.installation,
        ] {
            let bought = try #require(
                try harness.store.purchase(product, account: "ana", options: .init(appAccountToken: token)).transaction)
            customer = try await harness.service.recordTransaction(
                signedTransaction: bought.jws, signedRenewalInfo: nil, appAccountToken: nil, caller: nil
            ).customer
        }
        let flowers = try #require(
            try harness.store.transactions(account: "ana").first { $0.payload.productID == FloristCatalog.flowers })
        try harness.store.refund(flowers.transactionID)
        try harness.store.advance(by: 40 * 86_400)
        for transaction in try harness.store.transactions(account: "ana") {
            _ = try await harness.service.recordTransaction(
                signedTransaction: transaction.jws, signedRenewalInfo: nil, appAccountToken: nil, caller: nil)
        }
        let key = try #require(customer)
        let snapshot = try await harness.service.entitlements(of: key)
        let records = try await harness.service.records(of: key)
        #expect(!snapshot.revokedTransactions.isEmpty && !snapshot.consumables.isEmpty)
        #expect(!snapshot.subscriptionGroups.isEmpty)

        let answers: [any Encodable] = [
            Answers.Entitlements(key, snapshot), Answers.Transactions(key, records.transactions, limit: 1_000),
            EntitlementEngine().compacted(CompactHistory(records.history), at: snapshot.moment, keeping: 1),
            ["b": 1, "a": 2], [String](), ["text": "quote \" slash / back \\ tab \t nl \n nul \u{0} é 🌸"],
        ]
        for answer in answers {
            let ours = try StreamingJSONEncoder().encode(answer)
            #expect(try Self.parsed(ours) == Self.parsed(try Self.foundation.encode(answer)))
        }
        // A dictionary's keys are written in order, so the same answer is the same bytes.
        #expect(
            String(decoding: try StreamingJSONEncoder().encode(["b": 1, "a": 2]), as: UTF8.self) == #"{"a":2,"b":1}"#)

        // Stored records: what JSONDecoder reads back is the record written.
        let storing = StreamingJSONEncoder(datesAsReferenceSeconds: true)
        for transaction in records.transactions {
            let decoded = try JSONDecoder().decode(
                PurchaseRecord.self, from: Data(try storing.encode(transaction.record)))
            #expect(decoded == transaction.record)
        }
    }

    /// Integers are written digit by digit and strings copied whole unless they need an escape: every width at its
    /// limits, every ASCII character and some beyond come out as Foundation writes them.
    @Test func integersAndStringsAreWhatFoundationWrites() throws {
        struct Widths: Encodable {  // declared in key order, so Foundation's sorted keys are our order
            var flags = [true, false]
            var int = [Int.min, -1, 0, 7, Int.max]
            var int16 = [Int16.min, Int16.max]
            var int32 = [Int32.min, Int32.max]
            var int64 = [Int64.min, Int64.max]
            var int8 = [Int8.min, Int8.max]
            var uint = [UInt.min, UInt.max]
            var uint16 = [UInt16.max]
            var uint32 = [UInt32.max]
            var uint64 = [UInt64.max, 10, 9]
            var uint8 = [UInt8.max]
        }
        let foundation = JSONEncoder()
        foundation.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        #expect(try StreamingJSONEncoder().encode(Widths()) == Array(try foundation.encode(Widths())))
        let every = String(decoding: (0..<128).map { UInt8($0) }, as: UTF8.self)
        let strings = [
            every, "", "plain", "é 🌸 \u{2063}", String(repeating: "\\\"", count: 100), "\"start", "end\"",
            "é\"🌸\\\n\t\r\u{1f}\u{0}x", #"{"record":{"id":"1","date":"2026"}}"#,
        ]
        let ours = try StreamingJSONEncoder().encode(strings)
        #expect(try Self.parsed(ours) == Self.parsed(try foundation.encode(strings)))
        #expect(String(decoding: try StreamingJSONEncoder().encode(["a\u{1}"]), as: UTF8.self) == #"["a\u0001"]"#)
    }

    /// A consumable's event is written without its `Encodable` conformance (the writer's fast path): the bytes are
    /// what the conformance writes, in both date forms, and read back as the same event.
    @Test func consumableEventsAreWhatTheirConformanceWrites() throws {
        /// The same fields in the same order, encoded through the synthesized conformance (no fast path knows it).
        struct Reference: Encodable {
            var date: Date
            var kind: ConsumableEvent.Kind
            var quantity: Int
            var transactionID: String?
            var balanceAfter: Int
        }
        let ids: [String?] = [nil, "2000000123456789", "", "quote \" back \\ \n tab\t \u{1} é 🌸", "a/b"]
        var random = SeededGenerator(seed: 7)
        var events: [ConsumableEvent] = []
        for (index, id) in ids.enumerated() {
            for kind in [ConsumableEvent.Kind.purchase, .consumption, .refund] {
                let milliseconds = Int64.random(in: 0..<4_102_444_800_000, using: &random)
                events.append(
                    ConsumableEvent(
                        date: Date(timeIntervalSince1970: Double(milliseconds) / 1000 + (index == 1 ? 0.0004 : 0)),
                        kind: kind, quantity: [1, 10, -3][index % 3], transactionID: id,
                        balanceAfter: [0, 7, -2, Int.max, Int.min][index]))
            }
        }
        for referenceSeconds in [false, true] {
            let encoder = StreamingJSONEncoder(datesAsReferenceSeconds: referenceSeconds)
            for event in events {
                let written = try encoder.encode(event)
                let reference = try encoder.encode(
                    Reference(
                        date: event.date, kind: event.kind, quantity: event.quantity,
                        transactionID: event.transactionID, balanceAfter: event.balanceAfter))
                #expect(written == reference, "\(String(decoding: written, as: UTF8.self))")
                if referenceSeconds {
                    #expect(try StreamingJSONDecoder().decode(ConsumableEvent.self, from: written) == event)
                }
            }
            // Inside other values (an array, a keyed member), too.
            let list = try encoder.encode(["events": events])
            let referenceList = try encoder.encode([
                "events": events.map {
                    Reference(
                        date: $0.date, kind: $0.kind, quantity: $0.quantity, transactionID: $0.transactionID,
                        balanceAfter: $0.balanceAfter)
                }
            ])
            #expect(list == referenceList)
        }
    }

    @Test func numbersThatJSONCannotHoldAreRefused() {
        #expect(throws: JSONStreamError.self) { try StreamingJSONEncoder().encode([Double.nan]) }
        #expect(throws: JSONStreamError.self) { try StreamingJSONEncoder().encode(["x": Double.infinity]) }
        #expect(
            (try? StreamingJSONEncoder().encode([0.5, 2, -1e-7])).map { String(decoding: $0, as: UTF8.self) }
                == "[0.5,2,-1e-07]")
    }
}
