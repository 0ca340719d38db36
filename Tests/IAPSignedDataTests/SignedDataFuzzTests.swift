import Foundation
import IAPCore
import IAPSignedData
import IAPTestSupport
import Testing

/// Seeded generative fuzzing of the JWS parser, the payload decoders and the verifier: mutated genuine documents and
/// random text must give a verdict or a coded error, never a crash or a hang, and never a valid verdict.
struct SignedDataFuzzTests {
    static let iterations = Int(ProcessInfo.processInfo.environment["IAPKIT_FUZZ_ITERATIONS"] ?? "") ?? 3000

    static func mutate(_ input: [UInt8], using generator: inout SeededGenerator) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...4, using: &generator) {
            guard !bytes.isEmpty else { break }
            let index = Int.random(in: 0..<bytes.count, using: &generator)
            switch Int.random(in: 0..<6, using: &generator) {
            case 0: bytes[index] ^= UInt8(1) << UInt8.random(in: 0...7, using: &generator)
            case 1: bytes.remove(at: index)
            case 2: bytes.insert(UInt8.random(in: 0...255, using: &generator), at: index)
            case 3: bytes = Array(bytes.prefix(index))
            case 4:
                bytes[index] =
                    [UInt8(ascii: "."), UInt8(ascii: "{"), UInt8(ascii: "\""), 0][
                        Int.random(in: 0..<4, using: &generator)]
            default:
                let end = min(bytes.count, index + Int.random(in: 1...64, using: &generator))
                bytes.insert(contentsOf: bytes[index..<end], at: index)
            }
        }
        return bytes
    }

    @Test func mutatedSignedDocumentsNeverVerify() async throws {
        let verifier = TestJWS.verifier()
        let signer = TestJWS.signer()
        let genuine = Array(try signer.sign(TestJWS.transaction()).utf8)
        var generator = SeededGenerator(seed: 0x4A57_5331)
        var refused = 0
        for _ in 0..<Self.iterations {
            let mutated = Self.mutate(genuine, using: &generator)
            guard mutated != genuine else { continue }
            // Not a document any more (it throws), or one that does not verify.
            let verdict = try? await verifier.verifyTransaction(String(decoding: mutated, as: UTF8.self))
            // Changing a character of the signature's last group can leave the decoded bytes unchanged only if
            // base64 were lenient; ours is not, so every real change is refused.
            if String(decoding: mutated, as: UTF8.self) != String(decoding: genuine, as: UTF8.self) {
                #expect(verdict?.isValid != true)
                refused += 1
            }
        }
        #expect(refused > Self.iterations / 2)
    }

    @Test func mutatedPayloadJSONDecodesOrThrowsACodedError() {
        let payloads = [
            TestJWS.transaction().jsonBytes(), TestJWS.renewalInfo().jsonBytes(),
            TestJWS.notification(signedTransaction: "a.b.c", signedRenewalInfo: nil).jsonBytes(),
        ]
        var generator = SeededGenerator(seed: 0x4A53_4F4F)
        for iteration in 0..<Self.iterations {
            let mutated = Self.mutate(payloads[iteration % payloads.count], using: &generator)
            do {
                _ = try TransactionPayload(jsonBytes: mutated)
                _ = try NotificationPayload(jsonBytes: mutated)
            } catch {
                #expect([.malformedJSON, .malformedField].contains(error.code))
            }
        }
    }

    @Test func randomTextGetsACodedError() {
        var generator = SeededGenerator(seed: 0x5241_4E44)
        let alphabet = Array("eyJhbGciOiJFUzI1NiJ9.-_=+/{}\"[]:,0123456789 ".utf8)
        for _ in 0..<Self.iterations {
            let count = Int.random(in: 0..<400, using: &generator)
            let bytes = (0..<count).map { _ in
                Bool.random(using: &generator)
                    ? alphabet.randomElement(using: &generator)! : UInt8.random(in: 0...255, using: &generator)
            }
            do {
                let jws = try CompactJWS(bytes: bytes)
                _ = try? jws.decodePayload(as: NotificationPayload.self)
            } catch {
                #expect(!error.code.rawValue.isEmpty)
            }
            _ = try? JSONValue(jsonBytes: bytes)
        }
    }
}
