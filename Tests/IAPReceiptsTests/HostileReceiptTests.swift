import Crypto
import Foundation
import IAPCore
import IAPReceipts
import IAPTestSupport
import IAPTrust
import SwiftASN1
import Testing
import _CryptoExtras

/// Inputs built to break the process around the verifier (SECURITY 12, 15, 16): each is refused with a stable code,
/// or read correctly, in work that grows linearly with its size.
struct HostileReceiptTests {
    typealias F = ReceiptFixtures

    /// The DER of an INTEGER with exactly these content octets, however many.
    static func integer(_ content: [UInt8]) -> ArraySlice<UInt8> {
        var coder = DER.Serializer()
        coder.appendPrimitiveNode(identifier: .integer) { $0 += content }
        return coder.serializedBytes[...]
    }

    /// A receipt payload whose app item id (attribute 1) holds `content` as its INTEGER.
    static func payload(appItemID content: [UInt8]) -> [UInt8] {
        var receipt = F.receipt()
        receipt.appItemID = nil
        let attributes = receipt.attributes() + [ReceiptAttribute(type: 1, value: integer(content))]
        var coder = DER.Serializer()
        try! coder.appendConstructedNode(identifier: .set) { coder in
            for attribute in attributes { try coder.serialize(attribute) }
        }
        return coder.serializedBytes
    }

    // MARK: Traps

    @Test(arguments: [Int.min, Int.max, Int.min + 1, -1])
    func attributeTypesAtTheExtremesOfIntAreKeptNotTrapped(type: Int) async throws {
        var receipt = F.receipt()
        receipt.inAppPurchases[0].unknownAttributes.append(ReceiptAttribute(type: type, value: [0x05, 0x00]))
        receipt.unknownAttributes.append(ReceiptAttribute(type: type, value: [0x05, 0x00]))
        let signed = try SignedReceipt(bytes: F.signed(receipt))
        #expect(signed.receipt.inAppPurchases.contains { $0.unknownAttributes.contains { $0.type == type } })
        #expect(signed.receipt.unknownAttributes.contains { $0.type == type })
        let verdict = try await F.verifier().verify(try F.signed(receipt), policy: F.policy)
        #expect(verdict.isValid, "\(verdict.failures)")
    }

    @Test func aJunkSignedReceiptWithAnExtremeTypeIsRefusedNotTrapped() throws {
        // About 150 bytes: a signed-data skeleton with a junk signature around an in-app set whose attribute type is
        // the most negative Int. Parsing happens before any signature check, so it must not trap.
        var receipt = AppReceipt(bundleID: "x", appVersion: "1")
        receipt.inAppPurchases = [
            InAppPurchase(
                productID: "p", transactionID: "1", unknownAttributes: [ReceiptAttribute(type: Int.min, value: [])])
        ]
        let signed = try SignedReceipt(bytes: F.signed(receipt))
        var data = signed.signedData
        data.signerInfos[0].signature = [UInt8](repeating: 0x42, count: 8)
        let bytes = try data.contentInfoBytes()
        let reread = try SignedReceipt(bytes: bytes)
        #expect(reread.receipt.inAppPurchases[0].unknownAttributes.first?.type == Int.min)
    }

    // MARK: Integers

    @Test func leadingSignOctetsAreRemovedInLinearWork() throws {
        func steps(_ padding: Int, _ fill: UInt8, _ value: [UInt8]) throws -> (AppReceipt, Int) {
            let bytes = Self.payload(appItemID: [UInt8](repeating: fill, count: padding) + value)
            let (receipt, steps) = try WorkMeter.measure { try AppReceipt(payload: bytes[...]) }
            return (receipt, steps)
        }
        for (fill, value, expected) in [(UInt8(0x00), [UInt8(0x12), 0x34], "4660"), (0xff, [0x80, 0x01], "-32767")] {
            let (small, smallSteps) = try steps(10_000, fill, value)
            let (large, largeSteps) = try steps(40_000, fill, value)
            #expect(small.appItemID?.description == expected)
            #expect(large.appItemID?.description == expected)
            #expect(large.appItemID?.bytes == value)
            #expect(Double(largeSteps) <= 4.5 * Double(smallSteps), "\(smallSteps) -> \(largeSteps)")
        }
    }

    @Test func integersWiderThan32BytesAreRefused() throws {
        let widest = [UInt8](repeating: 0x7f, count: ReceiptInteger.maximumByteCount)
        let kept = try AppReceipt(payload: Self.payload(appItemID: widest)[...])
        #expect(kept.appItemID?.bytes == widest)
        #expect(kept.appItemID?.description.count == 77)
        #expect(throws: ReceiptParsingError(.malformedAttribute, "")) {
            try AppReceipt(payload: Self.payload(appItemID: [0x01] + widest)[...])
        }
        // Half a megabyte of significant octets would make the decimal conversion quadratic: refused at once.
        let (_, steps) = WorkMeter.measure {
            try? AppReceipt(payload: Self.payload(appItemID: [UInt8](repeating: 0x55, count: 500_000))[...])
        }
        #expect(steps < 600_000)
    }

    @Test func decimalIntegersAreBounded() {
        let longest = String(repeating: "9", count: ReceiptInteger.maximumDecimalDigits)
        #expect(ReceiptInteger(decimal: longest)?.description == longest)
        #expect(ReceiptInteger(decimal: longest + "9") == nil)
        #expect(ReceiptInteger(decimal: "-" + longest)?.isNegative == true)
        #expect(ReceiptInteger(decimal: "١٢") == nil, "digits other than ASCII")
    }

    // MARK: BER element counts

    /// A BER ContentInfo whose constructed OCTET STRING holds `chunks` empty chunks.
    static func emptyChunks(_ chunks: Int) -> [UInt8] {
        var bytes: [UInt8] = [0x30, 0x80, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02, 0xa0, 0x80]
        bytes += [0x24, 0x80]
        for _ in 0..<chunks { bytes += [0x04, 0x00] }
        bytes += [0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
        return bytes
    }

    @Test func millionsOfEmptyBERChunksAreRefusedBeforeANodeTreeIsBuilt() throws {
        let (error, steps) = WorkMeter.measure { () -> ReceiptParsingError? in
            do {
                _ = try SignedReceipt(bytes: Self.emptyChunks(2_000_000))
                return nil
            } catch let error as ReceiptParsingError {
                return error
            } catch {
                return nil
            }
        }
        #expect(error?.code == .malformedASN1)
        #expect(error?.reason.contains("elements") == true)
        #expect(steps <= 1 << 18 + 1, "the count stops at the limit")
        // A few chunks are not refused for their number (the structure is wrong for other reasons).
        #expect(throws: (any Error).self) { try SignedReceipt(bytes: Self.emptyChunks(1_000)) }
    }

    // MARK: Certificates

    @Test func aReceiptCarryingSixtyOneCertificatesIsRefusedWithoutAPathSearch() async throws {
        let extra = (0..<60).map { index in
            var options = MintedChain.Options()
            options.organization = "Ladder \(index)"
            return TestPKI.mint(rootKey: TestKeys.rogueRoot, options: options).root
        }
        let signer = ReceiptSigner(key: F.leafKey, certificates: [TestPKI.trusted.leaf] + extra, digest: .sha256)
        let signed = try signer.sign(F.receipt())
        let verifier = F.verifier()
        let (verdict, searches) = await WorkMeter.measure { await verifier.verify(signed, policy: F.policy) }
        #expect(verdict.failures.map(\.code) == [.tooManyCertificates])
        #expect(searches == 0)
    }

    // MARK: CMS content type

    /// The fixture receipt re-signed with these signed attributes.
    static func resigned(_ edit: ([CMSAttribute]) -> [CMSAttribute]) throws -> [UInt8] {
        var data = try SignedReceipt(bytes: F.signed(signingTime: F.created)).signedData
        let signer = data.signerInfos[0]
        let attributes = edit(signer.signedAttributes ?? [])
        let signature = try F.leafKey.signature(
            for: SHA256.hash(data: SignerInfo.encodeForSigning(attributes)), padding: .insecurePKCS1v1_5)
        data.signerInfos = [
            try SignerInfo(
                version: 1, issuerAndSerialNumber: signer.issuerAndSerialNumber,
                digestAlgorithm: signer.digestAlgorithm, signedAttributes: attributes,
                signatureAlgorithm: signer.signatureAlgorithm, signature: Array(signature.rawRepresentation))
        ]
        return try data.contentInfoBytes()
    }

    @Test func signedAttributesMustNameTheDataContentType() async throws {
        let withoutType = try Self.resigned { $0.filter { $0.type != .CMS.contentTypeAttribute } }
        let verdict = try await F.verifier().verify(withoutType, policy: F.policy)
        #expect(verdict.failures.map(\.code) == [.contentTypeMismatch])

        let otherType = try Self.resigned { attributes in
            attributes.map {
                $0.type == .CMS.contentTypeAttribute
                    ? CMSAttribute(type: $0.type, values: [try! ASN1Any(erasing: ASN1ObjectIdentifier.CMS.signedData)])
                    : $0
            }
        }
        #expect(
            try await F.verifier().verify(otherType, policy: F.policy).failures.map(\.code) == [.contentTypeMismatch])

        let unchanged = try Self.resigned { $0 }
        #expect(try await F.verifier().verify(unchanged, policy: F.policy).isValid)
    }
}
