import SwiftASN1

/// A parsed App Store receipt: the PKCS#7 signed data as it came, and the receipt model read from its content.
///
/// Parsing checks structure only and throws ``ReceiptParsingError`` on bad bytes; whether the receipt is genuine is
/// for ``ReceiptVerifier`` to decide.
public struct SignedReceipt: Hashable, Sendable {
    /// The PKCS#7 structure, with the certificates and the signed content as they came.
    public let signedData: CMSSignedData
    /// The receipt the content holds.
    public let receipt: AppReceipt

    /// The largest input accepted by default: 16 MiB, far above any real receipt (a 187-purchase one is 79 KB).
    public static let defaultMaximumSize = 16 << 20

    /// Parses a receipt from its binary (DER or BER) bytes.
    public init(bytes: some Collection<UInt8>, maximumSize: Int = SignedReceipt.defaultMaximumSize)
        throws(ReceiptParsingError)
    {
        guard !bytes.isEmpty else { throw ReceiptParsingError(.emptyInput, "no receipt bytes") }
        guard bytes.count <= maximumSize else {
            throw ReceiptParsingError(.inputTooLarge, "\(bytes.count) bytes is more than the limit of \(maximumSize)")
        }
        // An array is read in place; any other collection is copied once.
        let input = (bytes as? [UInt8])?[...] ?? ArraySlice(bytes)
        let signedData: CMSSignedData
        do throws(DERReader.Failure) {
            if let fast = try CMSSignedData.readFastDER(input) {
                signedData = fast
            } else {
                signedData = try Self.readWithSwiftASN1(input)
            }
        } catch .malformed(let problem) {
            throw ReceiptParsingError(.malformedASN1, "not well-formed DER or BER (\(problem))")
        } catch .unexpected(let problem) {
            throw ReceiptParsingError(.notAReceipt, "not a PKCS#7 signed-data structure (\(problem))")
        } catch {
            throw ReceiptParsingError(.malformedASN1, "not well-formed DER or BER")
        }
        guard signedData.contentType == .CMS.data, let content = signedData.content else {
            throw ReceiptParsingError(.notAReceipt, "the signed data does not hold data content")
        }
        guard !signedData.signerInfos.isEmpty else {
            throw ReceiptParsingError(.notAReceipt, "the signed data has no signer")
        }
        self.signedData = signedData
        self.receipt = try AppReceipt(payload: content[...])
    }

    /// Reads BER (and anything the fast DER reader declined) through swift-asn1's node tree.
    private static func readWithSwiftASN1(_ input: ArraySlice<UInt8>) throws(DERReader.Failure) -> CMSSignedData {
        let root: ASN1Node
        do {
            root = try ASN1Parsing.parse(input)
        } catch {
            throw .malformed(DERReader.message(error))
        }
        do {
            return try CMSSignedData(contentInfo: root)
        } catch {
            throw .unexpected(DERReader.message(error))
        }
    }

    /// The DER encoding of the whole receipt.
    public func derBytes() throws -> [UInt8] {
        try signedData.contentInfoBytes()
    }
}
