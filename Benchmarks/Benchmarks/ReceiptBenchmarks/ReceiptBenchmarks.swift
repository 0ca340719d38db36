// Receipt verification speed against its floor, the bare RSA-2048 signature check, measured in the same run.
//
// Run from the Benchmarks folder, pinned to one core:
//   taskset -c 1 swift package --disable-sandbox benchmark --target ReceiptBenchmarks
// The receipts come from ../shared/testdata (the shared corpus); without it the benchmarks do not run.
import Benchmark
import Crypto
import Foundation
import IAPReceipts
import IAPTrust
import X509
import _CryptoExtras

/// A real 3-certificate App Store receipt (RevenueCat's sandbox sample: 8.4 KB, 9 in-app purchases, SHA-1 signed,
/// leaf <- WWDR <- Apple Root CA) and a large one (79 KB, 187 purchases).
struct Corpus {
    let receipt: [UInt8]
    let largeReceipt: [UInt8]
    let appleRoot: Certificate

    init?() {
        let base = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("shared/testdata")
        func read(_ path: String) -> [UInt8]? {
            (try? Data(contentsOf: base.appendingPathComponent(path))).map(Array.init)
        }
        guard let receipt = read("receipts/revenuecat-base64encodedreceiptsample1.der"),
            let large = read("receipts/tpinapp-receipt-sandbox-legacy.der"),
            let root = read("certs/apple-official/AppleIncRootCertificate.cer"),
            let certificate = try? Certificate(derEncoded: root)
        else { return nil }
        self.receipt = receipt
        self.largeReceipt = large
        self.appleRoot = certificate
    }
}

let benchmarks: @Sendable () -> Void = {
    guard let corpus = Corpus() else {
        print("The shared corpus (../shared/testdata) is absent: nothing to measure.")
        return
    }
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        timeUnits: .microseconds,
        warmupIterations: 100,
        maxDuration: .seconds(4),
        maxIterations: 1_000_000
    )

    // The floor: one RSA-2048 PKCS#1 v1.5 verification of the same receipt's signature, SHA-1 of its content included.
    let signed = try! SignedReceipt(bytes: corpus.receipt)
    let signer = signed.signedData.signerInfos[0]
    let leaf = try! signed.signedData.certificates.lazy.map { try Certificate(derEncoded: Array($0)) }
        .first { $0.subject.commonName?.contains("Receipt Signing") == true }!
    let key = _RSA.Signing.PublicKey(leaf.publicKey)!
    let signature = _RSA.Signing.RSASignature(rawRepresentation: signer.signature)
    let content = signed.signedData.content!
    Benchmark("RSA-2048 verify (bare, SHA-1 of the content included)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(
                key.isValidSignature(signature, for: Insecure.SHA1.hash(data: content), padding: .insecurePKCS1v1_5))
        }
    }

    // Our verifier at steady state: parse, chain from the cache, digest, signature, every policy check.
    let verifier = ReceiptVerifier(
        trustStore: TrustStore(roots: [corpus.appleRoot]),
        configuration: .init(bundleID: "com.revenuecat.sampleapp", appVersion: "4"))
    let now = Date(timeIntervalSince1970: 1_595_439_548)
    Benchmark("Receipt verify, steady state (8.4 KB, 3 certificates)") { benchmark in
        for _ in benchmark.scaledIterations {
            let verdict = try await verifier.verify(corpus.receipt, at: now)
            precondition(verdict.isValid)
            blackHole(verdict)
        }
    }

    Benchmark("Receipt parse (8.4 KB, 9 purchases)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try SignedReceipt(bytes: corpus.receipt))
        }
    }

    Benchmark("Receipt parse (79 KB, 187 purchases)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try SignedReceipt(bytes: corpus.largeReceipt))
        }
    }
}
