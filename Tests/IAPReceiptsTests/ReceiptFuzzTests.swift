import Foundation
import IAPReceipts
import IAPTestSupport
import Testing

/// Seeded generative fuzzing of the receipt parser: mutated real and minted receipts must parse or throw a
/// ``ReceiptParsingError``, never crash or hang. `IAPKIT_FUZZ_ITERATIONS` runs longer (default 3,000 per seed).
struct ReceiptFuzzTests {
    static let iterations = ProcessInfo.processInfo.environment["IAPKIT_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 3_000

    static func seeds() throws -> [[UInt8]] {
        var seeds = [try ReceiptFixtures.signed(), try ReceiptFixtures.signed(signingTime: ReceiptFixtures.created)]
        if SharedTestData.isAvailable {
            seeds.append(try SharedTestData.bytes("receipts/kvitto-sandboxReceipt.der"))
            seeds.append(try SharedTestData.bytes("receipts/apple-xcode-app-receipt-with-transaction.der"))
        }
        return seeds
    }

    static func mutate(_ input: [UInt8], using generator: inout SeededGenerator) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...4, using: &generator) where !bytes.isEmpty {
            let index = Int.random(in: 0..<bytes.count, using: &generator)
            switch Int.random(in: 0..<7, using: &generator) {
            case 0: bytes[index] ^= UInt8(1 << Int.random(in: 0..<8, using: &generator))
            case 1: bytes[index] = UInt8.random(in: 0...255, using: &generator)
            case 2: bytes[index] = [0x00, 0x80, 0x81, 0x84, 0x88, 0xff][Int.random(in: 0..<6, using: &generator)]
            case 3: bytes.removeSubrange(index..<min(bytes.count, index + Int.random(in: 1...64, using: &generator)))
            case 4: bytes.insert(contentsOf: bytes[index..<min(bytes.count, index + 32)], at: index)
            case 5: bytes = Array(bytes.prefix(index))
            default: bytes.insert(UInt8.random(in: 0...255, using: &generator), at: index)
            }
        }
        return bytes
    }

    @Test("mutated receipts parse or throw a ReceiptParsingError", arguments: [1, 2, 3] as [UInt64])
    func mutations(seed: UInt64) async throws {
        var generator = SeededGenerator(seed: seed)
        let seeds = try Self.seeds()
        let verifier = ReceiptFixtures.verifier()
        var parsed = 0
        for iteration in 0..<Self.iterations {
            let input = Self.mutate(seeds[iteration % seeds.count], using: &generator)
            do {
                let receipt = try SignedReceipt(bytes: input)
                parsed += 1
                if iteration % 64 == 0 {
                    _ = await verifier.verify(receipt, policy: ReceiptFixtures.policy)
                }
            } catch {
                #expect(!error.code.rawValue.isEmpty)
            }
        }
        #expect(parsed < Self.iterations)
    }

    @Test("random bytes behind a SEQUENCE header throw", arguments: [11, 12] as [UInt64])
    func randomStructures(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        for _ in 0..<Self.iterations {
            let length = Int.random(in: 0...300, using: &generator)
            let body = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let header: [UInt8] =
                length < 128 ? [0x30, UInt8(length)] : [0x30, 0x82, UInt8(length >> 8), UInt8(length & 0xff)]
            #expect(throws: ReceiptParsingError.self) { try SignedReceipt(bytes: header + body) }
        }
    }
}
