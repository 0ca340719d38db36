import Foundation
import IAPTestSupport
import Testing

@testable import IAPReceipts

struct ReceiptRoundTripTests {
    typealias F = ReceiptFixtures

    @Test(
        "a receipt built and signed in process parses back to the same model and the same bytes",
        arguments: [ReceiptSigner.Digest.sha1, .sha256])
    func roundTrip(digest: ReceiptSigner.Digest) throws {
        let original = F.receipt(expiration: F.created.addingTimeInterval(86_400 * 365))
        let bytes = try F.signed(original, digest: digest)
        let parsed = try SignedReceipt(bytes: bytes)

        // DER sorts the set of attributes, so compare the in-app records as a collection without order.
        var expected = original
        expected.inAppPurchases = parsed.receipt.inAppPurchases
        #expect(parsed.receipt == expected)
        #expect(Set(parsed.receipt.inAppPurchases) == Set(original.inAppPurchases))

        #expect(try parsed.derBytes() == bytes)
        #expect(try parsed.receipt.payload() == parsed.signedData.content)
        let again = try SignedReceipt(bytes: try parsed.derBytes())
        #expect(again == parsed)
    }

    @Test func largeWebOrderLineItemIDIsKeptExactly() throws {
        let parsed = try SignedReceipt(bytes: try F.signed())
        let gold = try #require(parsed.receipt.inAppPurchases.first { $0.productID.hasSuffix("gold") })
        #expect(gold.webOrderLineItemID?.description == "123456789012345678901234567890")
        #expect(gold.webOrderLineItemID?.uint64Value == nil)
    }

    @Test func unknownAttributesAreKept() throws {
        let receipt = try SignedReceipt(bytes: try F.signed()).receipt
        #expect(receipt.unknownAttributes == [ReceiptAttribute(type: 25, version: 2, value: [0x02, 0x01, 0x07])])
        let roses = try #require(receipt.inAppPurchases.first { $0.productID.hasSuffix("roses") })
        #expect(roses.unknownAttributes.map(\.type) == [1722])
    }

    @Test(arguments: [
        "2015-09-22T08:55:28Z", "2021-04-03T22:38:45+0300", "2021-04-03T22:38:45+03:00",
        "2020-07-22T18:33:15-0100", "2020-07-22T17:33:15.250Z",
    ])
    func dates(text: String) throws {
        let date = try #require(try ReceiptDate.parse(Array(text.utf8)))
        let reference: [String: TimeInterval] = [
            "2015-09-22T08:55:28Z": 1_442_912_128, "2021-04-03T22:38:45+0300": 1_617_478_725,
            "2021-04-03T22:38:45+03:00": 1_617_478_725, "2020-07-22T18:33:15-0100": 1_595_446_395,
            "2020-07-22T17:33:15.250Z": 1_595_439_195.25,
        ]
        #expect(date.timeIntervalSince1970 == reference[text])
    }

    @Test func emptyDateIsNoDate() throws {
        #expect(try ReceiptDate.parse([UInt8]()) == nil)
    }

    @Test(arguments: [
        "0000-00-00T00:00:00Z", "2021-02-29T00:00:00Z", "2021-13-01T00:00:00Z", "2021-01-01",
        "2021-01-01T24:00:00Z", "2021-01-01T00:00:00", "2021-01-01T00:00:00Zjunk", "yesterday",
    ])
    func invalidDates(text: String) {
        #expect(throws: ReceiptParsingError(.invalidDate, "")) { try ReceiptDate.parse(Array(text.utf8)) }
    }

    @Test func formatIsTheInverseOfParse() throws {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<1000 {
            let seconds = TimeInterval(Int64.random(in: -2_000_000_000...64_000_000_000, using: &generator))
            let date = Date(timeIntervalSince1970: seconds)
            #expect(try ReceiptDate.parse(Array(ReceiptDate.format(date).utf8)) == date)
        }
        #expect(ReceiptDate.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(ReceiptDate.format(Date(timeIntervalSince1970: 1_700_000_000.9)) == "2023-11-14T22:13:20Z")
        #expect(ReceiptDate.format(Date(timeIntervalSince1970: 253_402_300_800)) == "10000-01-01T00:00:00Z")
    }

    @Test func receiptIntegers() {
        #expect(ReceiptInteger(bytes: [0x03, 0x8d, 0x7e, 0xa6, 0x94, 0x72, 0xc9]).description == "1000000030274249")
        #expect(ReceiptInteger(bytes: [0x00]).description == "0")
        #expect(ReceiptInteger(bytes: [0xff]).description == "-1")
        #expect(ReceiptInteger(decimal: "-129")?.bytes == [0xff, 0x7f])
        #expect(ReceiptInteger(decimal: "18446744073709551616")?.bytes == [0x01, 0, 0, 0, 0, 0, 0, 0, 0])
        #expect(ReceiptInteger(decimal: "12a") == nil)
    }
}

struct BERPayloadTests {
    /// Re-encodes a DER element with an indefinite length (BER), as Xcode does for its envelopes.
    static func indefinite(_ der: [UInt8]) -> [UInt8] {
        var reader = 1
        let first = der[reader]
        reader += first < 0x80 ? 1 : 1 + Int(first & 0x7f)
        return [der[0], 0x80] + der[reader...] + [0x00, 0x00]
    }

    @Test func berPayloadReadsLikeItsDER() throws {
        let receipt = ReceiptFixtures.receipt()
        let der = try receipt.payload()
        let fromDER = try AppReceipt(payload: der[...])
        let fromBER = try AppReceipt(payload: Self.indefinite(der)[...])
        #expect(fromBER == fromDER)
        #expect(fromDER.bundleID == receipt.bundleID)
    }

    @Test func berInAppSetIsNormalised() throws {
        var attributes = ReceiptFixtures.receipt().attributes()
        let index = try #require(attributes.firstIndex { $0.type == ReceiptAttributeType.inAppPurchase })
        let original = try AppReceipt(payload: ReceiptAttribute.serializeSetInOrder(attributes)[...])
        attributes[index].value = Self.indefinite(Array(attributes[index].value))[...]
        let normalised = try AppReceipt(payload: ReceiptAttribute.serializeSetInOrder(attributes)[...])
        #expect(normalised == original)
    }
}
