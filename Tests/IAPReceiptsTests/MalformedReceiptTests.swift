import Foundation
import IAPReceipts
import IAPTestSupport
import IAPTrust
import SwiftASN1
import Testing
import X509

/// Bad input gets a clear error code: never a crash, a hang or unbounded allocation.
struct MalformedReceiptTests {
    typealias F = ReceiptFixtures

    func code(_ bytes: [UInt8]) -> ReceiptParsingError.Code? {
        do {
            _ = try SignedReceipt(bytes: bytes)
            return nil
        } catch {
            return error.code
        }
    }

    @Test func emptyInput() {
        #expect(code([]) == .emptyInput)
        #expect(throws: ReceiptParsingError(.emptyInput, "")) { try ReceiptInput.receiptBytes(from: []) }
    }

    @Test func inputTooLarge() {
        #expect(throws: ReceiptParsingError(.inputTooLarge, "")) {
            try SignedReceipt(bytes: [UInt8](repeating: 0x30, count: 1025), maximumSize: 1024)
        }
    }

    @Test func truncatedAtEveryLength() throws {
        let bytes = try F.signed()
        for length in stride(from: 1, to: bytes.count, by: 7) {
            #expect(code(Array(bytes.prefix(length))) == .malformedASN1, "prefix \(length)")
        }
    }

    @Test func trailingGarbage() throws {
        #expect(code(try F.signed() + [0x00]) == .malformedASN1)
    }

    @Test func lengthsPastTheEnd() {
        #expect(code([0x30, 0x82, 0xff, 0xff, 0x02, 0x01, 0x00]) == .malformedASN1)
        // A 2^63 length.
        #expect(code([0x30, 0x88, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00]) == .malformedASN1)
        #expect(code([0x30, 0x89, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]) == .malformedASN1)
    }

    @Test func nestingDeeperThanAnyReceipt() {
        // A thousand nested indefinite-length sequences, then their terminators.
        let deep: [UInt8] =
            Array(repeating: [UInt8]([0x30, 0x80]), count: 1000).flatMap { $0 } + Array(repeating: 0, count: 2000)
        #expect(code(deep) == .malformedASN1)
        // The reason says what is wrong, not where in swift-asn1 it was found.
        let reason: String
        do {
            _ = try SignedReceipt(bytes: deep)
            reason = "parsed"
        } catch {
            reason = error.reason
        }
        #expect(reason.contains("depth") && !reason.contains(".swift"), "\(reason)")
        // Sixty nested definite-length sequences: the DER reader walks only the receipt's fixed skeleton, so it never
        // descends that far; it refuses the structure at the second level.
        var nested: [UInt8] = [0x05, 0x00]
        for _ in 0..<60 { nested = [0x30, UInt8(nested.count)] + nested }
        #expect(code(nested) == .notAReceipt)
    }

    @Test func nonReceiptPKCS7() throws {
        // SignedData whose content type is not data.
        var bytes = try F.signed()
        let dataOID: [UInt8] = [0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x01]
        let range = try #require(bytes.firstRange(of: dataOID))
        bytes[range.upperBound - 1] = 0x03  // envelopedData
        #expect(code(bytes) == .notAReceipt)
        // A ContentInfo of another type altogether.
        var other = try F.signed()
        let signedOID: [UInt8] = [0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02]
        let outer = try #require(other.firstRange(of: signedOID))
        other[outer.upperBound - 1] = 0x01
        #expect(code(other) == .notAReceipt)
        // A certificate is well-formed DER but not a receipt.
        #expect(code(Array(TestPKI.trusted.root.derBytes)) == .notAReceipt)
    }

    @Test func payloadThatIsNotAttributes() throws {
        let signer = ReceiptSigner(key: F.leafKey, certificates: TestPKI.trusted.certificates)
        // Sign a receipt, then swap the content for an octet string of the same length holding an INTEGER.
        var bytes = try signer.sign(F.receipt()).derBytes()
        let content = try #require(try SignedReceipt(bytes: bytes).signedData.content)
        let range = try #require(bytes.firstRange(of: content))
        bytes.replaceSubrange(range, with: [0x02, 0x01, 0x05] + [UInt8](repeating: 0, count: content.count - 3))
        #expect(code(bytes) == .notAReceipt)
    }

    @Test func attributeOfTheWrongType() throws {
        var receipt = F.receipt()
        receipt.unknownAttributes = []
        receipt.bundleIDData = [0x02, 0x01, 0x05]  // an INTEGER where a string belongs
        let bytes = ReceiptSigner(key: F.leafKey, certificates: TestPKI.trusted.certificates)
        #expect(throws: ReceiptParsingError(.malformedAttribute, "")) { try bytes.sign(receipt) }
    }

    @Test func invalidUTF8InAString() throws {
        var receipt = F.receipt()
        receipt.bundleIDData = [0x0c, 0x02, 0xc3, 0x28]
        let signer = ReceiptSigner(key: F.leafKey, certificates: TestPKI.trusted.certificates)
        #expect(throws: ReceiptParsingError(.malformedAttribute, "")) { try signer.sign(receipt) }
    }

    @Test func duplicateKnownAttribute() throws {
        var receipt = F.receipt()
        receipt.unknownAttributes = []
        let payload = try ReceiptAttribute.serializeSet(
            receipt.attributes() + [ReceiptAttribute(type: 2, value: [0x0c, 0x03, 0x61, 0x62, 0x63])])
        #expect(throws: ReceiptParsingError(.malformedAttribute, "")) { try AppReceipt(payload: payload[...]) }
    }

    @Test func legacyIOS6Receipts() throws {
        #expect(throws: ReceiptParsingError(.legacyTransactionReceipt, "")) {
            try ReceiptInput.receiptBytes(
                from: Array("{\n\t\"signature\" = \"AAAA\";\n\t\"purchase-info\" = \"e30=\";\n}".utf8))
        }
        let base64OfPlist = Array(Data("{ \"purchase-info\" = \"e30=\"; }".utf8).base64EncodedString().utf8)
        #expect(throws: ReceiptParsingError(.legacyTransactionReceipt, "")) {
            try ReceiptInput.receiptBytes(from: base64OfPlist)
        }
    }

    @Test(
        .enabled(if: SharedTestData.isAvailable, "\(SharedTestData.skipMessage)"),
        arguments: ["voltrue2-legacy-ios6-transactionReceipt.b64", "applelib-mock-legacyTransaction-ios6-style.b64"])
    func legacyCorpusReceipts(file: String) throws {
        let text = try SharedTestData.bytes("receipts/\(file)")
        #expect(throws: ReceiptParsingError(.legacyTransactionReceipt, "")) {
            try ReceiptInput.receiptBytes(from: text)
        }
    }

    @Test(.enabled(if: SharedTestData.isAvailable, "\(SharedTestData.skipMessage)"))
    func truncatedCorpusReceipt() throws {
        #expect(code(try SharedTestData.bytes("receipts/tamtamchik-invalidReceipt.der")) == .malformedASN1)
    }

    @Test func base64AndBinaryInput() throws {
        let bytes = try F.signed()
        #expect(try ReceiptInput.receiptBytes(from: bytes) == bytes)
        var wrapped = Array(Data(bytes).base64EncodedString(options: .lineLength64Characters).utf8)
        wrapped.append(0x0a)
        #expect(try ReceiptInput.receiptBytes(from: wrapped) == bytes)
        #expect(throws: ReceiptParsingError(.unrecognizedEncoding, "")) {
            try ReceiptInput.receiptBytes(from: Array("not base64 at all!".utf8))
        }
        #expect(throws: ReceiptParsingError(.unrecognizedEncoding, "")) {
            try ReceiptInput.receiptBytes(from: Array(Data("hello".utf8).base64EncodedString().utf8))
        }
    }

    @Test func randomBytes() {
        var generator = SeededGenerator(seed: 42)
        for length in [1, 2, 16, 100, 4096] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(code(bytes) != nil)
        }
    }
}

extension X509.Certificate {
    var derBytes: [UInt8] {
        var coder = DER.Serializer()
        try! coder.serialize(self)
        return coder.serializedBytes
    }
}
