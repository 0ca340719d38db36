import Crypto
import Foundation
import IAPReceipts
import IAPSignedData
import IAPSimulator
import IAPTestSupport
import IAPTrust
import Testing
import X509
import _CryptoExtras

private let moment = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01

private func receipt() -> AppReceipt {
    AppReceipt(
        environment: .sandbox, bundleID: "com.example.florist", appVersion: "42", opaqueValue: [1, 2, 3, 4],
        sha1Hash: Array(repeating: 7, count: 20), creationDate: moment,
        inAppPurchases: [
            InAppPurchase(
                productID: "com.example.florist.flowers", transactionID: "1", originalTransactionID: "1",
                purchaseDate: moment, originalPurchaseDate: moment, productType: .nonConsumable)
        ], originalAppVersion: "1.0")
}

@Suite("Simulator PKI")
struct SimulatorPKITests {
    let pki = SimulatorTestKeys.pki

    @Test func chainsHaveApplesShape() throws {
        for chain in [pki.receiptChain, pki.jwsChain] {
            #expect(chain.leaf.issuer == chain.intermediate.subject)
            #expect(chain.intermediate.issuer == chain.root.subject)
            #expect(chain.leaf.extensions[oid: .AppleMarker.receiptSigningLeaf] != nil)
            #expect(chain.intermediate.extensions[oid: .AppleMarker.wwdrIntermediate] != nil)
            #expect(try chain.leaf.extensions.subjectKeyIdentifier != nil)
            #expect(try chain.leaf.extensions.authorityKeyIdentifier != nil)
        }
        #expect(P384.Signing.PublicKey(pki.jwsChain.root.publicKey) != nil)
        #expect(P384.Signing.PublicKey(pki.jwsChain.intermediate.publicKey) != nil)
        #expect(P256.Signing.PublicKey(pki.jwsChain.leaf.publicKey) != nil)
        #expect(_RSA.Signing.PublicKey(pki.receiptChain.root.publicKey) != nil)
    }

    @Test func artifactsVerifyWithItsRootsAndNoOthers() async throws {
        let signed = try pki.receiptSigner.sign(receipt()).derBytes()
        let verdict = try await ReceiptVerifier(
            trustStore: pki.trustStore, configuration: .init(bundleID: "com.example.florist")
        ).verify(
            signed, at: moment)
        #expect(verdict.isValid, "\(verdict.failures)")

        var transaction = TestJWS.transaction(signedAt: moment)
        transaction.environment = .sandbox
        let jws = try pki.jwsSigner().sign(transaction)
        let configuration = SignedDataVerifier.Configuration(bundleID: "com.example.florist", environments: [.sandbox])
        let jwsVerdict = try await SignedDataVerifier(trustStore: pki.trustStore, configuration: configuration)
            .verifyTransaction(jws)
        #expect(jwsVerdict.isValid, "\(jwsVerdict.failures)")

        // Another simulator instance (other keys) is another authority: nothing crosses over.
        let other = try SimulatorPKI(keys: SimulatorTestKeys.otherKeys)
        let foreignReceipt = try await ReceiptVerifier(trustStore: other.trustStore).verify(
            signed, at: moment)
        #expect(foreignReceipt.failed(.chainUntrusted))
        let foreignJWS = try await SignedDataVerifier(trustStore: other.trustStore, configuration: configuration)
            .verifyTransaction(jws)
        #expect(foreignJWS.failed(.chainUntrusted))
    }

    @Test func exportAndLoadRestoreTheSameAuthority() async throws {
        let directory = TestFiles.url("pki")
        defer { try? FileManager.default.removeItem(at: directory) }

        try pki.export(to: directory)
        let rootsOnly = try FileManager.default.subpathsOfDirectory(atPath: directory.path).sorted()
        #expect(rootsOnly == ["roots", "roots/jws-root.der", "roots/receipt-root.der"])
        let exportedRoot = try TrustAnchorLoader.certificates(
            contentsOfFile: directory.appendingPathComponent(SimulatorPKI.FileName.receiptRoot).path)
        #expect(exportedRoot == [pki.receiptChain.root])

        try pki.export(to: directory, includingKeys: true)
        let loaded = try SimulatorPKI.load(from: directory)
        #expect(loaded.receiptChain.certificates == pki.receiptChain.certificates)
        #expect(loaded.jwsChain.certificates == pki.jwsChain.certificates)
        let signed = try loaded.receiptSigner.sign(receipt()).derBytes()
        #expect(
            try await ReceiptVerifier(trustStore: pki.trustStore).verify(signed, at: moment).isValid)

        // A leaf key that does not belong to the leaf certificate is refused, not used.
        try TestKeys.rogueLeafPEM.write(
            to: directory.appendingPathComponent("pki/receipt-leaf-key.pem"), atomically: true, encoding: .utf8)
        #expect(throws: TrustError.self) { try SimulatorPKI.load(from: directory) }
    }

    @Test(.enabled(if: ExternalTool.hasOpenSSL, "openssl is not installed"))
    func opensslVerifiesTheReceiptAgainstTheExportedRoot() async throws {
        let directory = TestFiles.url("openssl")
        defer { try? FileManager.default.removeItem(at: directory) }
        try pki.export(to: directory)
        let receiptPath = directory.appendingPathComponent("receipt.der")
        try Data(try pki.receiptSigner.sign(receipt()).derBytes()).write(to: receiptPath)
        let rootPEM = directory.appendingPathComponent("receipt-root.pem")
        try await run([
            "x509", "-inform", "DER", "-in", directory.appendingPathComponent(SimulatorPKI.FileName.receiptRoot).path,
            "-out", rootPEM.path,
        ])
        let (status, output) = try await run([
            "cms", "-verify", "-inform", "DER", "-in", receiptPath.path, "-CAfile", rootPEM.path, "-purpose", "any",
            "-attime", "1767225600", "-binary", "-out", "/dev/null",
        ])
        #expect(status == 0, "\(output)")
        #expect(output.contains("Verification successful"), "\(output)")

        // And refuses it against another authority's root.
        let other = try SimulatorPKI(keys: SimulatorTestKeys.otherKeys)
        let otherDirectory = directory.appendingPathComponent("other")
        try other.export(to: otherDirectory)
        let otherPEM = directory.appendingPathComponent("other-root.pem")
        try await run([
            "x509", "-inform", "DER", "-in",
            otherDirectory.appendingPathComponent(SimulatorPKI.FileName.receiptRoot).path,
            "-out", otherPEM.path,
        ])
        let (refused, _) = try await run([
            "cms", "-verify", "-inform", "DER", "-in", receiptPath.path, "-CAfile", otherPEM.path, "-purpose", "any",
            "-binary", "-out", "/dev/null",
        ])
        #expect(refused != 0)
    }

    @discardableResult
    private func run(_ arguments: [String]) async throws -> (Int32, String) {
        try await ExternalTool.run("/usr/bin/openssl", arguments)
    }
}

/// Apple's Python library, in its default strict mode, configured with the simulator's exported root.
@Suite("Simulator PKI: Apple's library agrees")
struct AppleLibraryCrossCheck {
    static let script = ExternalTool.appleVerifyScript

    static func python(_ arguments: [String]) async throws -> (Int32, String) {
        try await ExternalTool.run("/usr/bin/env", ["python3"] + arguments)
    }

    @Test(.enabled(if: ExternalTool.hasAppleLibrary, "python3 with app-store-server-library is not installed"))
    func signedTransactionAndRenewalVerify() async throws {
        let pki = SimulatorTestKeys.pki
        let directory = TestFiles.url("apple")
        defer { try? FileManager.default.removeItem(at: directory) }
        try pki.export(to: directory)
        let signer = try pki.jwsSigner()
        let transaction = directory.appendingPathComponent("transaction.jws")
        try signer.sign(TestJWS.transaction(signedAt: moment)).write(to: transaction, atomically: true, encoding: .utf8)
        let renewal = directory.appendingPathComponent("renewal.jws")
        try signer.sign(TestJWS.renewalInfo(signedAt: moment)).write(to: renewal, atomically: true, encoding: .utf8)
        let forged = directory.appendingPathComponent("forged.jws")
        try TestJWS.signer().sign(TestJWS.transaction(signedAt: moment)).write(
            to: forged, atomically: true, encoding: .utf8)

        let root = directory.appendingPathComponent(SimulatorPKI.FileName.jwsRoot).path
        let (status, output) = try await Self.python([
            Self.script, "--root", root, "--bundle-id", "com.example.florist", "--environment", "Sandbox",
            "transaction=\(transaction.path)", "renewal=\(renewal.path)", "transaction=\(forged.path)",
        ])
        #expect(status == 1, "the forged one must fail: \(output)")
        #expect(output.contains("ok transaction \(transaction.path)"), "\(output)")
        #expect(output.contains("ok renewal \(renewal.path)"), "\(output)")
        #expect(output.contains("FAILED transaction \(forged.path)"), "\(output)")
    }
}
