import Crypto
import Foundation
import IAPReceipts
import IAPSignedData
import IAPTrust
import SwiftASN1
import X509
public import _CryptoExtras

/// The keys of a local App Store: RSA for receipts, elliptic curves for signed data (P-384 root and intermediate,
/// a P-256 leaf, as Apple's production chain).
///
/// Keys are inputs: pass fixed ones for reproducible artifacts, or ``generate()`` fresh ones.
public struct SimulatorKeys: Sendable {
    public var receiptRoot: _RSA.Signing.PrivateKey
    public var receiptIntermediate: _RSA.Signing.PrivateKey
    public var receiptLeaf: _RSA.Signing.PrivateKey
    public var jwsRoot: P384.Signing.PrivateKey
    public var jwsIntermediate: P384.Signing.PrivateKey
    public var jwsLeaf: P256.Signing.PrivateKey

    public init(
        receiptRoot: _RSA.Signing.PrivateKey, receiptIntermediate: _RSA.Signing.PrivateKey,
        receiptLeaf: _RSA.Signing.PrivateKey, jwsRoot: P384.Signing.PrivateKey,
        jwsIntermediate: P384.Signing.PrivateKey, jwsLeaf: P256.Signing.PrivateKey
    ) {
        self.receiptRoot = receiptRoot
        self.receiptIntermediate = receiptIntermediate
        self.receiptLeaf = receiptLeaf
        self.jwsRoot = jwsRoot
        self.jwsIntermediate = jwsIntermediate
        self.jwsLeaf = jwsLeaf
    }

    /// Fresh random keys (RSA-2048; generating the three RSA keys takes a few hundred milliseconds).
    public static func generate() throws -> SimulatorKeys {
        SimulatorKeys(
            receiptRoot: try _RSA.Signing.PrivateKey(keySize: .bits2048),
            receiptIntermediate: try _RSA.Signing.PrivateKey(keySize: .bits2048),
            receiptLeaf: try _RSA.Signing.PrivateKey(keySize: .bits2048),
            jwsRoot: P384.Signing.PrivateKey(), jwsIntermediate: P384.Signing.PrivateKey(),
            jwsLeaf: P256.Signing.PrivateKey())
    }
}
