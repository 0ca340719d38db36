import Foundation

/// Turns what users hand over (a binary receipt, its base64 text as apps send it, possibly with line breaks) into
/// receipt bytes, and recognises the iOS 6 `transactionReceipt` plists that are not app receipts at all.
public enum ReceiptInput {
    /// The binary receipt held by `input`, decoding base64 text when that is what it is.
    public static func receiptBytes(from input: [UInt8], maximumSize: Int = SignedReceipt.defaultMaximumSize)
        throws(ReceiptParsingError) -> [UInt8]
    {
        guard !input.isEmpty else { throw ReceiptParsingError(.emptyInput, "no receipt bytes") }
        // Base64 is 4/3 the size of what it holds.
        guard input.count <= maximumSize / 3 * 4 + 4096 else {
            throw ReceiptParsingError(.inputTooLarge, "\(input.count) bytes is more than the limit of \(maximumSize)")
        }
        if input[0] == 0x30 {
            return input  // A DER or BER SEQUENCE: binary already.
        }
        if isLegacyPlist(input) {
            throw legacy()
        }
        let text = input.filter { !$0.isASCIIWhitespace }
        guard !text.isEmpty, text.allSatisfy(\.isBase64Character), let data = Data(base64Encoded: Data(text)) else {
            throw ReceiptParsingError(
                .unrecognizedEncoding, "neither a binary PKCS#7 receipt nor its base64 text (\(input.count) bytes)")
        }
        let decoded = Array(data)
        if isLegacyPlist(decoded) {
            throw legacy()
        }
        guard decoded.first == 0x30 else {
            throw ReceiptParsingError(.unrecognizedEncoding, "the base64 text does not hold a PKCS#7 receipt")
        }
        return decoded
    }

    /// Old-style plists begin with `{` (after optional whitespace) and name `purchase-info` or `signature`.
    private static func isLegacyPlist(_ bytes: [UInt8]) -> Bool {
        guard let first = bytes.first(where: { !$0.isASCIIWhitespace }), first == UInt8(ascii: "{") else {
            return false
        }
        let head = String(decoding: bytes.prefix(4096), as: UTF8.self)
        return head.contains("purchase-info") || head.contains("signature")
    }

    private static func legacy() -> ReceiptParsingError {
        ReceiptParsingError(
            .legacyTransactionReceipt,
            "an iOS 6 style transactionReceipt (old-style plist), not a PKCS#7 app receipt; "
                + "it cannot be verified offline")
    }
}

extension UInt8 {
    fileprivate var isASCIIWhitespace: Bool { self == 0x20 || self == 0x0a || self == 0x0d || self == 0x09 }
    fileprivate var isBase64Character: Bool {
        (0x41...0x5a).contains(self) || (0x61...0x7a).contains(self) || (0x30...0x39).contains(self)
            || self == UInt8(ascii: "+") || self == UInt8(ascii: "/") || self == UInt8(ascii: "=")
    }
}
