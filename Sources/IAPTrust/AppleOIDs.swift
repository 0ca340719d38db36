public import SwiftASN1

extension ASN1ObjectIdentifier {
    /// Apple's marker extensions: the evidence that a certificate was issued for App Store signing.
    ///
    /// A verifier that only checks names can be fooled by any certificate chain that copies Apple's names; a verifier
    /// that checks these markers (and the trusted root's key) cannot.
    public enum AppleMarker {
        /// Present on the leaf that signs receipts and StoreKit signed data
        /// ("Mac App Store and iTunes Store Receipt Signing").
        public static let receiptSigningLeaf: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
        /// Present on Apple's Worldwide Developer Relations intermediate CA.
        public static let wwdrIntermediate: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]
    }
}
