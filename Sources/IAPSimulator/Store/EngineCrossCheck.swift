public import IAPEntitlements
import IAPSignedData

/// What the entitlement engine concludes from an account's signed data, each document verified with the
/// simulator's roots first.
public struct SignedDataReading: Sendable {
    /// The engine's snapshot at the simulator's now, from the documents that verified.
    public let snapshot: EntitlementSnapshot
    /// One sentence for each document that did not verify (none is expected).
    public let unverified: [String]
    /// The records the snapshot was made from.
    public let history: PurchaseHistory
}

extension AppStoreSimulator {
    /// Verifies the account's signed transactions and renewal infos as a server configured with this simulator's
    /// roots would, and gives what the entitlement engine makes of them.
    public func readSignedData(account: String) async throws -> SignedDataReading {
        let documents =
            try transactions(account: account).map {
                ($0.jws, SignedPayloadKind.transaction, "transaction \($0.transactionID)")
            }
            + (try renewalInfos(account: account)).map { ($0, SignedPayloadKind.renewalInfo, "a renewal info") }
        var history = PurchaseHistory()
        var unverified: [String] = []
        for (jws, kind, name) in documents {
            let verdict = try await signedDataVerifier.verify(jws, as: kind)
            if history.add(verified: verdict) == nil {
                unverified.append("\(name) does not verify: \(verdict.failures)")
            }
        }
        return SignedDataReading(
            snapshot: EntitlementEngine(catalog: catalog).snapshot(of: history, at: try now), unverified: unverified,
            history: history)
    }

    /// Where the engine, reading the account's signed data, disagrees with the simulator's own view (and every
    /// document that did not verify); empty when they agree.
    public func engineDisagreements(account: String) async throws -> [String] {
        let reading = try await readSignedData(account: account)
        let differences = try view(account: account).differences(from: reading.snapshot, catalog: catalog)
        return reading.unverified + differences.map { "the engine disagrees: \($0)" }
    }
}
