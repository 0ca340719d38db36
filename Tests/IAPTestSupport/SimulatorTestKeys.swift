public import Crypto
public import IAPSimulator
import _CryptoExtras

/// Fixed keys, so every run mints the same authority.
public enum SimulatorTestKeys {
    public static func p384(_ label: String) -> P384.Signing.PrivateKey {
        try! P384.Signing.PrivateKey(rawRepresentation: Array(SHA384.hash(data: Array(label.utf8))))
    }

    public static let keys = SimulatorKeys(
        receiptRoot: try! _RSA.Signing.PrivateKey(pemRepresentation: TestKeys.rootPEM),
        receiptIntermediate: try! _RSA.Signing.PrivateKey(pemRepresentation: TestKeys.intermediatePEM),
        receiptLeaf: try! _RSA.Signing.PrivateKey(pemRepresentation: TestKeys.leafPEM),
        jwsRoot: p384("simulator-jws-root"), jwsIntermediate: p384("simulator-jws-intermediate"),
        jwsLeaf: TestJWS.leafKey)

    public static let pki = try! SimulatorPKI(keys: keys)

    public static let otherKeys = SimulatorKeys(
        receiptRoot: try! _RSA.Signing.PrivateKey(pemRepresentation: TestKeys.rogueRootPEM),
        receiptIntermediate: try! _RSA.Signing.PrivateKey(pemRepresentation: TestKeys.rogueIntermediatePEM),
        receiptLeaf: try! _RSA.Signing.PrivateKey(pemRepresentation: TestKeys.rogueLeafPEM),
        jwsRoot: p384("other-root"), jwsIntermediate: p384("other-intermediate"), jwsLeaf: TestJWS.rogueKey)
}
