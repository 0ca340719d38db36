import Crypto
public import Foundation
public import IAPReceipts
public import IAPSignedData
public import IAPTrust
import SwiftASN1
import X509
import _CryptoExtras

/// A local App Store's certificate authority: an Apple-shaped receipt chain and an Apple-shaped signed-data chain
/// (Apple's marker OIDs on leaf and intermediate, key identifiers), the signers that use them, and the trust store
/// that accepts them, and nothing else.
public struct SimulatorPKI: Sendable {
    public let keys: SimulatorKeys
    public let receiptChain: MintedChain
    public let jwsChain: MintedChain

    /// The default validity: wide, because a simulation may be set in any year and chains are checked at the
    /// artifacts' dates.
    public static let defaultValidity =
        Date(timeIntervalSince1970: 946_684_800)...Date(timeIntervalSince1970: 4_102_444_799)  // 2000-2099

    /// Mints both chains from `keys`, valid over `validity`; `organization` names them (it shows in every subject).
    public init(
        keys: SimulatorKeys, validity: ClosedRange<Date> = SimulatorPKI.defaultValidity,
        organization: String = "IAPKit Local App Store"
    ) throws(TrustError) {
        self.keys = keys
        var options = MintedChain.Options()
        options.organization = organization
        receiptChain = try MintedChain.mint(
            rootKey: Certificate.PrivateKey(keys.receiptRoot),
            intermediateKey: Certificate.PrivateKey(keys.receiptIntermediate),
            leafKey: Certificate.PrivateKey(keys.receiptLeaf),
            notValidBefore: validity.lowerBound, notValidAfter: validity.upperBound, options: options)
        options.organization = organization + " (signed data)"
        jwsChain = try MintedChain.mint(
            rootKey: Certificate.PrivateKey(keys.jwsRoot),
            intermediateKey: Certificate.PrivateKey(keys.jwsIntermediate),
            leafKey: Certificate.PrivateKey(keys.jwsLeaf),
            notValidBefore: validity.lowerBound, notValidAfter: validity.upperBound, options: options)
    }

    /// Signs receipts as the App Store does today (SHA-256, leaf, intermediate and root embedded).
    public var receiptSigner: ReceiptSigner {
        ReceiptSigner(key: keys.receiptLeaf, certificates: receiptChain.certificates, digest: .sha256)
    }

    /// Signs transactions, renewal infos, app transactions and notifications with the x5c chain.
    public func jwsSigner() throws -> JWSSigner {
        try JWSSigner(privateKey: keys.jwsLeaf, certificateChain: jwsChain.certificates)
    }

    /// A trust store holding the two roots: what a verifier of this simulator's artifacts is configured with.
    public var trustStore: TrustStore { TrustStore(roots: [receiptChain.root, jwsChain.root]) }

    /// The two roots, DER-encoded (receipts', then signed data's): what a device or server trusts.
    public func rootCertificates() throws -> [[UInt8]] {
        [try Self.der(receiptChain.root), try Self.der(jwsChain.root)]
    }

    // MARK: - Files

    /// File names inside an export folder.
    public enum FileName {
        public static let receiptRoot = "roots/receipt-root.der"
        public static let jwsRoot = "roots/jws-root.der"
        static let receiptIntermediate = "pki/receipt-intermediate.der"
        static let receiptLeaf = "pki/receipt-leaf.der"
        static let jwsIntermediate = "pki/jws-intermediate.der"
        static let jwsLeaf = "pki/jws-leaf.der"
        static let keys = [
            "pki/receipt-root-key.pem", "pki/receipt-intermediate-key.pem", "pki/receipt-leaf-key.pem",
            "pki/jws-root-key.pem", "pki/jws-intermediate-key.pem", "pki/jws-leaf-key.pem",
        ]
    }

    /// Writes the two roots (`roots/receipt-root.der`, `roots/jws-root.der`) into `directory`; with `includingKeys`,
    /// also the other certificates and the private keys (PEM) under `pki/`, so ``load(from:)`` can restore this
    /// authority. Keep the keys out of anything shared: whoever holds them can sign what this simulator's verifiers
    /// accept.
    public func export(to directory: URL, includingKeys: Bool = false) throws {
        var files: [(String, [UInt8])] = [
            (FileName.receiptRoot, try Self.der(receiptChain.root)), (FileName.jwsRoot, try Self.der(jwsChain.root)),
        ]
        if includingKeys {
            files += [
                (FileName.receiptIntermediate, try Self.der(receiptChain.intermediate)),
                (FileName.receiptLeaf, try Self.der(receiptChain.leaf)),
                (FileName.jwsIntermediate, try Self.der(jwsChain.intermediate)),
                (FileName.jwsLeaf, try Self.der(jwsChain.leaf)),
            ]
            let pems = [
                keys.receiptRoot.pemRepresentation, keys.receiptIntermediate.pemRepresentation,
                keys.receiptLeaf.pemRepresentation, keys.jwsRoot.pemRepresentation,
                keys.jwsIntermediate.pemRepresentation, keys.jwsLeaf.pemRepresentation,
            ]
            files += zip(FileName.keys, pems).map { ($0, Array($1.utf8)) }
        }
        for (name, bytes) in files {
            let url = directory.appendingPathComponent(name)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
        }
    }

    /// Restores an authority written by ``export(to:includingKeys:)`` with keys.
    public static func load(from directory: URL) throws -> SimulatorPKI {
        func text(_ name: String) throws -> String {
            try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        }
        func certificate(_ name: String) throws -> Certificate {
            try Certificate(derEncoded: Array(Data(contentsOf: directory.appendingPathComponent(name))))
        }
        let names = FileName.keys
        let keys = SimulatorKeys(
            receiptRoot: try _RSA.Signing.PrivateKey(pemRepresentation: try text(names[0])),
            receiptIntermediate: try _RSA.Signing.PrivateKey(pemRepresentation: try text(names[1])),
            receiptLeaf: try _RSA.Signing.PrivateKey(pemRepresentation: try text(names[2])),
            jwsRoot: try P384.Signing.PrivateKey(pemRepresentation: try text(names[3])),
            jwsIntermediate: try P384.Signing.PrivateKey(pemRepresentation: try text(names[4])),
            jwsLeaf: try P256.Signing.PrivateKey(pemRepresentation: try text(names[5])))
        let receiptChain = MintedChain(
            root: try certificate(FileName.receiptRoot), intermediate: try certificate(FileName.receiptIntermediate),
            leaf: try certificate(FileName.receiptLeaf), leafKey: Certificate.PrivateKey(keys.receiptLeaf))
        let jwsChain = MintedChain(
            root: try certificate(FileName.jwsRoot), intermediate: try certificate(FileName.jwsIntermediate),
            leaf: try certificate(FileName.jwsLeaf), leafKey: Certificate.PrivateKey(keys.jwsLeaf))
        guard receiptChain.leaf.publicKey == Certificate.PrivateKey(keys.receiptLeaf).publicKey,
            jwsChain.leaf.publicKey == Certificate.PrivateKey(keys.jwsLeaf).publicKey
        else {
            throw TrustError(.mintingFailed, "the leaf certificates in \(directory.path) do not match the leaf keys")
        }
        return SimulatorPKI(keys: keys, receiptChain: receiptChain, jwsChain: jwsChain)
    }

    private init(keys: SimulatorKeys, receiptChain: MintedChain, jwsChain: MintedChain) {
        self.keys = keys
        self.receiptChain = receiptChain
        self.jwsChain = jwsChain
    }

    /// The SHA-256 of the signed-data root's certificate, in hex: two authorities sign alike when these agree.
    public var fingerprint: String {
        let der = (try? Self.der(jwsChain.root)) ?? []
        return SHA256.hash(data: der).map { String(format: "%02x", $0) }.joined()
    }

    static func der(_ certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }
}
