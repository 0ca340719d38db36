import Foundation
import IAPTestSupport
import SwiftASN1
import Testing

@testable import IAPReceipts

/// The fast DER reader and swift-asn1 must read the same bytes the same way: on every corpus and minted receipt, and
/// on fuzzed ones whenever both accept.
struct ParserAgreementTests {
    static func swiftASN1SignedData(_ bytes: [UInt8]) -> CMSSignedData? {
        guard let node = try? BER.parse(bytes[...]) else { return nil }
        return try? CMSSignedData(contentInfo: node)
    }

    static func swiftASN1Attributes(_ bytes: ArraySlice<UInt8>) -> [ReceiptAttribute]? {
        guard let node = try? BER.parse(bytes) else { return nil }
        return try? BER.set(of: ReceiptAttribute.self, identifier: .set, rootNode: node)
    }

    static func inputs() throws -> [[UInt8]] {
        var inputs = [try ReceiptFixtures.signed(), try ReceiptFixtures.signed(signingTime: ReceiptFixtures.created)]
        if SharedTestData.isAvailable {
            for file in [
                "kvitto-receipt.der", "kvitto-sandboxReceipt.der", "revenuecat-base64encodedreceiptsample1.der",
                "tamtamchik-validReceipt.der", "tamtamchik-validReceipt2.der", "tpinapp-receipt-sandbox-legacy.der",
                "tpinapp-hist-receipt-crash-macos-sandbox.der",
            ] {
                inputs.append(try SharedTestData.bytes("receipts/\(file)"))
            }
        }
        return inputs
    }

    @Test func sameResultOnEveryReceipt() throws {
        for bytes in try Self.inputs() {
            let fast = try #require(try CMSSignedData.readFastDER(bytes[...]))
            #expect(fast == Self.swiftASN1SignedData(bytes))
            let content = try #require(fast.content)
            #expect(try ReceiptAttribute.parseSet(content[...]) == Self.swiftASN1Attributes(content[...]))
        }
    }

    @Test func sameResultOnFuzzedReceipts() throws {
        var generator = SeededGenerator(seed: 99)
        let inputs = try Self.inputs()
        for iteration in 0..<ReceiptFuzzTests.iterations {
            let input = ReceiptFuzzTests.mutate(inputs[iteration % inputs.count], using: &generator)
            if let fast = try? CMSSignedData.readFastDER(input[...]), let slow = Self.swiftASN1SignedData(input) {
                #expect(fast == slow)
            }
            if let fast = try? ReceiptAttribute.parseSet(input[...]), let slow = Self.swiftASN1Attributes(input[...]) {
                #expect(fast == slow)
            }
        }
    }

    @Test func berIsLeftToSwiftASN1() throws {
        guard SharedTestData.isAvailable else { return }
        let xcode = try SharedTestData.bytes("receipts/apple-xcode-app-receipt-with-transaction.der")
        #expect(try CMSSignedData.readFastDER(xcode[...]) == nil)
    }
}
