import Crypto
import Foundation
import IAPCore
import IAPSignedData
import IAPTestSupport
import IAPTrust
import SwiftASN1
import Testing
import X509

/// Signed documents built to stall or trap the process around the verifier (SECURITY 15 and 16): each is refused,
/// or read, in work linear in its size, and never traps.
struct HostileSignedDataTests {
    let verifier = TestJWS.verifier()

    /// Transaction JSON with `extra` unknown members after the real ones (66,000 of them make a 790 KB JWS).
    static func transactionJSON(extra: Int, duplicateAt: Int? = nil) -> [UInt8] {
        var json = Array(TestJWS.transaction().jsonBytes().dropLast())
        for index in 0..<extra {
            let key = duplicateAt == index ? "u0" : "u\(index)"
            json += Array(",\"\(key)\":0".utf8)
        }
        return json + [UInt8(ascii: "}")]
    }

    static func signed(_ json: [UInt8]) -> String { try! TestJWS.signer().sign(payload: json) }

    @Test func unknownMembersAreReadInLinearWork() async throws {
        func steps(_ extra: Int) async throws -> (SignedDataVerdict<TransactionPayload>, Int) {
            let jws = Self.signed(Self.transactionJSON(extra: extra))
            return try await WorkMeter.measure { try await verifier.verifyTransaction(jws) }
        }
        let (small, smallSteps) = try await steps(16_500)
        let (large, largeSteps) = try await steps(66_000)
        #expect(small.isValid)
        #expect(large.isValid, "\(large.failures)")
        #expect(large.payload?.additionalFields.count == 66_000 + TestJWS.transaction().additionalFields.count)
        #expect(Double(largeSteps) <= 4.5 * Double(smallSteps), "\(smallSteps) -> \(largeSteps)")
        // The same in the generic JSON reader.
        let (_, jsonSmall) = WorkMeter.measure { try? JSONValue(jsonBytes: Self.transactionJSON(extra: 16_500)) }
        let (_, jsonLarge) = WorkMeter.measure { try? JSONValue(jsonBytes: Self.transactionJSON(extra: 66_000)) }
        #expect(Double(jsonLarge) <= 4.5 * Double(jsonSmall), "\(jsonSmall) -> \(jsonLarge)")
    }

    @Test func aDuplicateAmongThousandsOfMembersIsStillFound() async throws {
        let error = await #expect(throws: SignedDataParsingError.self) {
            try await verifier.verifyTransaction(Self.signed(Self.transactionJSON(extra: 5_000, duplicateAt: 4_999)))
        }
        #expect(error?.code == .malformedJSON)
        #expect(error?.reason.contains("\"u0\" appears twice") == true)
        #expect(throws: SignedDataParsingError.self) {
            try JSONValue(jsonBytes: Self.transactionJSON(extra: 5_000, duplicateAt: 4_999))
        }
    }

    @Test(arguments: ["1e300", "-1e300", "9007199254740994", "-9223372036854775808", "1.7976931348623157e308"])
    func datesFarOutsideAnyCalendarAreRefusedNotTrapped(value: String) async throws {
        var json = Array(TestJWS.transaction().jsonBytes().dropLast())
        json += Array(",\"revocationDate\":\(value)}".utf8)
        await #expect(throws: SignedDataParsingError.self) { try await verifier.verifyTransaction(Self.signed(json)) }
    }

    @Test func wholeMillisecondsNeverTrap() {
        #expect(EpochMilliseconds(millisecondsSince1970: 1e300).wholeMilliseconds == 9_007_199_254_740_992)
        #expect(EpochMilliseconds(millisecondsSince1970: -.infinity).wholeMilliseconds == -9_007_199_254_740_992)
        #expect(EpochMilliseconds(millisecondsSince1970: .nan).wholeMilliseconds == 0)
        #expect(EpochMilliseconds(millisecondsSince1970: 1_697_679_936_049.7297).wholeMilliseconds == 1_697_679_936_049)
    }

    @Test func aJunkThirdCertificateIsRefusedAndNeverCached() async throws {
        let trusted = TestJWS.trusted
        let verifier = TestJWS.verifier()
        for organization in ["A", "B", "C", "D"] {
            var options = MintedChain.Options()
            options.organization = organization
            let junk = TestJWS.mint(rootKey: TestJWS.rogueKey, options: options).root
            let jws = try TestJWS.signer(chain: [trusted.leaf, trusted.intermediate, junk]).sign(TestJWS.transaction())
            let verdict = try await verifier.verifyTransaction(jws)
            #expect(verdict.failures.map(\.code) == [.chainUntrusted])
        }
        #expect(verifier.cachedChainCount == 0)
        let genuine = try TestJWS.signer().sign(TestJWS.transaction())
        #expect(try await verifier.verifyTransaction(genuine).isValid)
        #expect(verifier.cachedChainCount == 1)
    }
}
