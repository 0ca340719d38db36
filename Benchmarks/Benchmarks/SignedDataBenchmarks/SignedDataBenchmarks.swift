// Signed-data (JWS) verification speed against its floor, measured in the same run: one bare P-256 signature
// verification of the same signing input, plus one decode of the same payload.
//
// Run from the Benchmarks folder, pinned to one core:
//   taskset -c 1 swift package --disable-sandbox benchmark --target SignedDataBenchmarks
import Benchmark
import Crypto
import Foundation
import IAPSignedData
import IAPTrust
import X509

/// A realistic StoreKit 2 renewal transaction: the fields Apple sends for a subscription renewal with a promotional
/// offer, device verification and a commitment plan, 1.5 KB of JSON.
let transactionJSON = #"""
    {"transactionId":"2000000823485912","originalTransactionId":"2000000612345678","webOrderLineItemId":"2000000098765432",\#
    "bundleId":"com.example.florist","productId":"com.example.florist.vip.gold.monthly",\#
    "subscriptionGroupIdentifier":"21345678","purchaseDate":1767139200000,"originalPurchaseDate":1759449600000,\#
    "expiresDate":1769731200000,"quantity":1,"type":"Auto-Renewable Subscription",\#
    "appAccountToken":"7e3fb20b-4cdb-47cc-936d-99d65f608138","inAppOwnershipType":"PURCHASED",\#
    "signedDate":1767225600000,"offerType":2,"offerIdentifier":"com.example.florist.vip.winter-promo",\#
    "environment":"Production","storefront":"GBR","storefrontId":"143444","transactionReason":"RENEWAL",\#
    "currency":"GBP","price":4990,"offerDiscountType":"PAY_AS_YOU_GO","offerPeriod":"P3M",\#
    "appTransactionId":"704289572311573297","isUpgraded":false,\#
    "deviceVerification":"sGDnpg+ozb8uwDSuCDZ2oVZo1CKrbB8ujR8VxCxhykRwyBIK6x6XCyERm8yWrzE8",\#
    "deviceVerificationNonce":"3439919e-87c9-47b6-aeee-2823f7a9d3c3","billingPlanType":"MONTHLY",\#
    "commitmentInfo":{"billingPeriodNumber":3,"commitmentExpiresDate":1798761600000,"commitmentPrice":59880,\#
    "totalBillingPeriods":12},"advancedCommerceInfo":{"descriptors":{"description":"Gold membership: weekly bouquet",\#
    "displayName":"VIP Gold"},"estimatedTax":832,"items":[{"SKU":"com.example.florist.sku.gold",\#
    "description":"Weekly bouquet delivery and priority booking","displayName":"VIP Gold","price":4990}],\#
    "period":"P1M","requestReferenceId":"c0ffee00-1234-4321-abcd-0123456789ab","taxCode":"C003-00-2",\#
    "taxExclusivePrice":4158,"taxRate":"0.20"}}
    """#

/// A chain shaped like Apple's production one: P-384 root and intermediate, P-256 leaf, Apple's markers.
func mintAppleShapedChain() throws -> (chain: MintedChain, leafKey: P256.Signing.PrivateKey) {
    func p384(_ label: String) throws -> P384.Signing.PrivateKey {
        try P384.Signing.PrivateKey(rawRepresentation: Array(SHA384.hash(data: Array(label.utf8))))
    }
    let leafKey = try P256.Signing.PrivateKey(rawRepresentation: Array(SHA256.hash(data: Array("bench-leaf".utf8))))
    let chain = try MintedChain.mint(
        rootKey: Certificate.PrivateKey(try p384("bench-root")),
        intermediateKey: Certificate.PrivateKey(try p384("bench-intermediate")),
        leafKey: Certificate.PrivateKey(leafKey),
        notValidBefore: Date(timeIntervalSince1970: 1_577_836_800),
        notValidAfter: Date(timeIntervalSince1970: 2_524_608_000))
    return (chain, leafKey)
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        timeUnits: .microseconds,
        warmupIterations: 200,
        maxDuration: .seconds(4),
        maxIterations: 1_000_000
    )

    let (chain, leafKey) = try! mintAppleShapedChain()
    let payload = Array(transactionJSON.utf8)
    precondition((1_400...1_700).contains(payload.count), "payload is \(payload.count) bytes")
    let jws = try! JWSSigner(privateKey: leafKey, certificateChain: chain.certificates).sign(payload: payload)
    let parsed = try! CompactJWS(jws)
    let configuration = SignedDataVerifier.Configuration(
        bundleID: "com.example.florist", appAppleID: 1_234_567, environments: [.production])
    let store = TrustStore(roots: [chain.root])

    // The floor, part 1: one bare P-256 ECDSA verification of the same signing input (SHA-256 of it included).
    let signature = try! P256.Signing.ECDSASignature(rawRepresentation: parsed.signature)
    let publicKey = leafKey.publicKey
    Benchmark("P-256 verify (bare, SHA-256 of the signing input included)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(publicKey.isValidSignature(signature, for: parsed.signingInput))
        }
    }

    // The floor, part 2: decoding the same payload into the typed model.
    Benchmark("Transaction payload decode (1.5 KB JSON to TransactionPayload)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try TransactionPayload(jsonBytes: payload))
        }
    }

    // For scale: Foundation's untyped JSON parse of the same payload.
    let payloadData = Data(payload)
    Benchmark("Foundation JSONSerialization of the same payload (untyped, reference)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try JSONSerialization.jsonObject(with: payloadData))
        }
    }

    // Ours at steady state: parse, alg and header checks, chain from the cache, signature, decode, claim checks.
    let verifier = try! SignedDataVerifier(trustStore: store, configuration: configuration)
    Benchmark("JWS transaction verify, steady state (Apple-shaped P-384/P-256 chain)") { benchmark in
        for _ in benchmark.scaledIterations {
            let verdict = try await verifier.verifyTransaction(jws)
            precondition(verdict.isValid)
            blackHole(verdict)
        }
    }

    // What Apple's library does on every call: validate the whole chain (two P-384 signatures) again.
    Benchmark("JWS transaction verify, chain validated every time (Apple's library's way)") { benchmark in
        for _ in benchmark.scaledIterations {
            let fresh = try SignedDataVerifier(trustStore: store, configuration: configuration)
            let verdict = try await fresh.verifyTransaction(jws)
            precondition(verdict.isValid)
            blackHole(verdict)
        }
    }

    // Real Apple-signed data: the TEST notification from the shared corpus, chained to Apple Root CA - G3.
    let base = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("shared/testdata")
    if let notification = try? String(
        contentsOf: base.appendingPathComponent("jws/aporat-test-notification-signedPayload.jws"), encoding: .utf8),
        let rootBytes = try? Data(contentsOf: base.appendingPathComponent("certs/apple-official/AppleRootCA-G3.cer")),
        let root = try? Certificate(derEncoded: Array(rootBytes))
    {
        let real = try! SignedDataVerifier(
            trustStore: TrustStore(roots: [root]),
            configuration: .init(bundleID: "com.Abilities", environments: [.sandbox]))
        Benchmark("JWS notification verify, steady state (real Apple data, Apple Root CA - G3)") { benchmark in
            for _ in benchmark.scaledIterations {
                let verdict = try await real.verifyNotification(notification)
                precondition(verdict.isValid)
                blackHole(verdict)
            }
        }
    } else {
        print("The shared corpus (../shared/testdata) is absent: the real Apple notification is not measured.")
    }
}
