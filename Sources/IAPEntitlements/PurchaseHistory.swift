public import Foundation
public import IAPReceipts
public import IAPSignedData

/// Everything known about one customer's purchases, gathered from verified artifacts, ready for the engine.
///
/// Add only what verified: a receipt whose verdict is valid, a signed document's `verifiedPayload`. The history
/// keeps duplicates; the engine counts each transaction once.
public struct PurchaseHistory: Hashable, Sendable, Codable {
    public var records: [PurchaseRecord]
    public var renewals: [RenewalRecord]
    public var consumptions: [ConsumptionRecord]
    /// The version the customer first obtained, from the first receipt or app transaction that names it.
    public var originalAppVersion: String?

    public init(
        records: [PurchaseRecord] = [], renewals: [RenewalRecord] = [], consumptions: [ConsumptionRecord] = [],
        originalAppVersion: String? = nil
    ) {
        self.records = records
        self.renewals = renewals
        self.consumptions = consumptions
        self.originalAppVersion = originalAppVersion
    }

    /// Adds a verified receipt's in-app entries and original app version; returns how many records it gave.
    @discardableResult
    public mutating func add(_ receipt: AppReceipt) -> Int {
        let added = PurchaseRecord.records(from: receipt)
        records += added
        originalAppVersion = originalAppVersion ?? receipt.originalAppVersion
        return added.count
    }

    /// Adds a verified signed document: a transaction, renewal info or app transaction. A notification adds the
    /// documents nested in it, which the caller passes as `nested` (their verdicts are part of the notification's).
    /// Returns how many records and renewal records it gave.
    @discardableResult
    public mutating func add(_ payload: SignedPayload, nested: [SignedPayload] = []) -> Int {
        switch payload {
        case .transaction(let transaction):
            guard let record = PurchaseRecord(transaction) else { return 0 }
            records.append(record)
            return 1
        case .renewalInfo(let renewal):
            guard let record = RenewalRecord(renewal) else { return 0 }
            renewals.append(record)
            return 1
        case .appTransaction(let app):
            originalAppVersion = originalAppVersion ?? app.originalApplicationVersion
            return 0
        case .notification:
            var count = 0
            for document in nested { count += add(document) }
            return count
        }
    }
}

extension PurchaseHistory {
    /// Adds what a signed document's verdict proves (its payload, and a notification's nested documents) when, and
    /// only when, it verified. Returns how many records it gave, or nil when the verdict is not valid.
    @discardableResult
    public mutating func add(verified verdict: SignedDataVerdict<SignedPayload>) -> Int? {
        guard let payload = verdict.verifiedPayload else { return nil }
        return add(payload, nested: verdict.nested.compactMap(\.verdict.payload))
    }

    /// Adds a receipt's in-app entries when, and only when, its verdict is valid. Returns how many records it gave, or
    /// nil when the verdict is not valid.
    @discardableResult
    public mutating func add(verified verdict: ReceiptVerdict) -> Int? {
        guard verdict.isValid else { return nil }
        return add(verdict.receipt)
    }
}

extension EntitlementEngine {
    /// The snapshot of a history at `moment`.
    public func snapshot(of history: PurchaseHistory, at moment: Date) -> EntitlementSnapshot {
        snapshot(
            records: history.records, renewals: history.renewals, consumptions: history.consumptions,
            originalAppVersion: history.originalAppVersion, at: moment)
    }
}
