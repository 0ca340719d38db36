import Dispatch
import Foundation
import IAPCatalog
import IAPEntitlements
import IAPReceipts
import IAPScenarios
import IAPSignedData
import IAPSimulator
import IAPTrust

/// The parsers the coverage-guided fuzzers drive, one harness each.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// Receipt bytes (DER, BER or base64): parse, verify, then the entitlement engine over its purchases.
    case receipt
    /// Compact JWS text or a notification body: verify as any kind of signed document.
    case jws
    /// JSON bytes: the strict scanner, then every payload model, then the engine over a transaction.
    case json
    /// A `.storekit` file or a `Products.plist`.
    case catalog
    /// A scenario file (YAML or JSON).
    case scenario
}

/// Runs one input through a target's parser, verifier and what follows them, the way the fuzzers and the regression
/// tests do. Anything but returning (a trap, a hang, unbounded memory) is a finding.
public enum FuzzHarness {
    /// A fixed moment: harness runs never read the clock.
    static let moment = Date(timeIntervalSince1970: 1_767_225_600)

    /// The roots the verifiers trust: Apple's receipt and JWS roots from the shared corpus when it is there (so real
    /// documents reach the signature checks), none otherwise.
    static let trustStore: TrustStore = {
        let base = ProcessInfo.processInfo.environment["IAPKIT_TESTDATA"] ?? "../shared/testdata"
        let roots = ["AppleIncRootCertificate.cer", "AppleRootCA-G3.cer"].compactMap {
            try? TrustAnchorLoader.certificates(contentsOfFile: "\(base)/certs/apple-official/\($0)")
        }
        return TrustStore(roots: roots.flatMap { $0 })
    }()
    static let receiptVerifier = ReceiptVerifier(
        trustStore: trustStore, configuration: .init(environments: [.production, .sandbox]))
    static let signedDataVerifier = try! SignedDataVerifier(trustStore: trustStore)
    static let engine = EntitlementEngine()

    /// Runs `bytes` through `target`; returns a short description of the outcome.
    public static func run(_ target: FuzzTarget, _ bytes: [UInt8]) async -> String {
        switch target {
        case .receipt: await receipt(bytes)
        case .jws: await jws(bytes)
        case .json: json(bytes)
        case .catalog: catalog(bytes)
        case .scenario: scenario(bytes)
        }
    }

    /// ``run(_:_:)`` for a caller outside Swift concurrency (libFuzzer's thread, a command's main thread), which it
    /// blocks until the run is done. Never call it from a task: it would hold a thread of the cooperative pool.
    public static func runBlocking(_ target: FuzzTarget, _ bytes: [UInt8]) -> String {
        let box = ResultBox<String>()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            box.value = await run(target, bytes)
            done.signal()
        }
        done.wait()
        return box.value!
    }

    static func receipt(_ bytes: [UInt8]) async -> String {
        let signed: SignedReceipt
        do {
            signed = try SignedReceipt(bytes: ReceiptInput.receiptBytes(from: bytes))
        } catch {
            return "refused: \(error.code)"
        }
        let verdict = await receiptVerifier.verify(signed, at: moment)
        let records = PurchaseRecord.records(from: signed.receipt)
        let snapshot = engine.snapshot(records: records, at: moment)
        _ = signed.receipt.inAppPurchases.map { $0.webOrderLineItemID?.description }
        return "verdict: \(verdict.failures.map(\.code)), \(snapshot.entitledProductIDs.count) entitled"
    }

    static func jws(_ bytes: [UInt8]) async -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        do {
            let verdict = try await signedDataVerifier.verify(text)
            return "verdict: \(verdict.failures.map(\.code))"
        } catch {
            return "refused: \(error.code)"
        }
    }

    static func json(_ bytes: [UInt8]) -> String {
        let value = try? JSONValue(jsonBytes: bytes)
        _ = value.map { $0.jsonBytes() }
        let transaction = try? TransactionPayload(jsonBytes: bytes)
        _ = try? RenewalInfoPayload(jsonBytes: bytes)
        _ = try? AppTransactionPayload(jsonBytes: bytes)
        let notification = try? NotificationPayload(jsonBytes: bytes)
        _ = notification?.jsonBytes()
        if let transaction, let record = PurchaseRecord(transaction) {
            _ = engine.snapshot(records: [record], at: moment)
            _ = transaction.expiresDate?.wholeMilliseconds
        }
        return value == nil ? "refused" : "read"
    }

    static func catalog(_ bytes: [UInt8]) -> String {
        let data = Data(bytes)
        let storekit = try? Catalog.load(data, fileName: "Fuzz.storekit")
        let plist = try? Catalog.load(data, fileName: "Products.plist")
        return "storekit: \(storekit?.products.count ?? -1), plist: \(plist?.products.count ?? -1)"
    }

    static func scenario(_ bytes: [UInt8]) -> String {
        do {
            let scenario = try Scenario.parse(String(decoding: bytes, as: UTF8.self))
            return "read: \(scenario.steps.count) steps"
        } catch {
            return "refused: \(error.reason.prefix(60))"
        }
    }
}

/// Carries a result out of a detached task; written once before the semaphore is signalled, read after.
private final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}
