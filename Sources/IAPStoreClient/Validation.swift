import Foundation
import IAPCatalog
import IAPEntitlements
import IAPReceipts
import IAPSignedData
import IAPTrust

/// What the ``Store`` believes: verified records for the engine (device validation, and receipts checked by the
/// server), or the validation server's own snapshot (signed transactions checked by the server).
struct VerifiedState: Hashable, Sendable {
    var history = PurchaseHistory()
    var serverSnapshot: EntitlementSnapshot?
    var serverCustomerID: String?
    /// The ledger the device keeps whatever the mode, so consumable counts survive a change of validation mode: every
    /// consumable purchase it accepted, signed (a store forgets finished consumables; a validation server is told of
    /// them again), and the consumptions the validation server has recorded (the others are sent to it).
    var ledger = ConsumableLedger()

    /// The state rebuilt with `history`, keeping the device's ledger.
    func rebuilt(history: PurchaseHistory) -> VerifiedState {
        var next = VerifiedState(history: history)
        next.ledger = ledger
        return next
    }
}

/// What the device keeps of consumables across validation modes (see `VerifiedState.ledger`).
public struct ConsumableLedger: Hashable, Sendable, Codable {
    /// Signed transactions of consumable purchases, oldest first.
    public var signedPurchases: [String] = []
    /// Ids (idempotency keys) of the consumptions the validation server has recorded.
    public var consumptionsOnServer: Set<String> = []
    /// Ids of the transactions among ``signedPurchases`` the validation server has recorded (not sent again).
    public var purchasesOnServer: Set<String> = []

    public init() {}

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        signedPurchases = try container.decodeIfPresent([String].self, forKey: .signedPurchases) ?? []
        consumptionsOnServer = try container.decodeIfPresent(Set<String>.self, forKey: .consumptionsOnServer) ?? []
        purchasesOnServer = try container.decodeIfPresent(Set<String>.self, forKey: .purchasesOnServer) ?? []
    }

    /// The signed purchases the validation server has not recorded yet.
    var purchasesToSend: [String] {
        signedPurchases.filter { Self.transactionID(of: $0).map { !purchasesOnServer.contains($0) } ?? true }
    }

    /// Notes that the server recorded these signed purchases.
    mutating func sent(_ documents: [String]) {
        for jws in documents { if let id = Self.transactionID(of: jws) { purchasesOnServer.insert(id) } }
    }

    static func transactionID(of jws: String) -> String? {
        (try? CompactJWS(jws).decodePayload(as: TransactionPayload.self))?.transactionID
    }
}

/// A verified change to what the ``Store`` believes, applied to the state as it is when the Store accepts it.
///
/// Checking a document takes awaits (a signature, a renewal fetch, a server round trip), and the Store is an actor:
/// another purchase or update can be accepted during them. A change computed as "the state before, plus this" and
/// then assigned would lose that other acceptance; a change applied to the current state cannot.
struct StateChange: Sendable {
    private let body: @Sendable (inout VerifiedState) -> Void

    init(_ body: @escaping @Sendable (inout VerifiedState) -> Void) { self.body = body }

    func apply(to state: inout VerifiedState) { body(&state) }

    /// Records verified on the device, merged (a newer statement of a transaction replaces an older one); the renewal
    /// infos and the original app version replace the old ones when given.
    static func verified(
        _ records: [PurchaseRecord], renewals: [RenewalRecord]? = nil, originalAppVersion: String? = nil
    ) -> StateChange {
        StateChange { state in
            for record in records { state.history.records.merge(record) }
            if let renewals { state.history.renewals = renewals }
            if let originalAppVersion { state.history.originalAppVersion = originalAppVersion }
        }
    }

    /// What the validation server answered: its snapshot and customer, and (verifyReceipt, where the device keeps the
    /// records) the records it returned and the consumptions recorded on the device.
    static func server(_ answer: VerifiedState) -> StateChange {
        StateChange { state in
            state.serverSnapshot = answer.serverSnapshot ?? state.serverSnapshot
            state.serverCustomerID = answer.serverCustomerID ?? state.serverCustomerID
            for record in answer.history.records { state.history.records.merge(record) }
            let known = Set(state.history.consumptions.compactMap(\.id))
            state.history.consumptions += answer.history.consumptions.filter { $0.id.map(known.contains) != true }
        }
    }
}

/// One document from the store, checked: which transaction it names (as far as it could be read) and what it changes,
/// or why it is refused.
struct CheckedTransaction: Sendable {
    var transactionID: String?
    var productID: String?
    /// The transaction as the document states it (believed once `result` succeeded).
    var transaction: StoreTransaction?
    var result: Result<StateChange, StoreError>
}

/// The three validation modes behind one shape: check one transaction the store handed out, or rebuild the whole
/// verified state from the store.
struct Validation: Sendable {
    let mode: ValidationMode
    let backend: any StoreBackend
    let engine: EntitlementEngine

    // MARK: - One transaction

    func check(_ jws: String, appAccountToken: UUID?, state: VerifiedState) async -> CheckedTransaction {
        let claimed = try? CompactJWS(jws).decodePayload(as: TransactionPayload.self)
        var checked = CheckedTransaction(
            transactionID: claimed?.transactionID, productID: claimed?.productID,
            transaction: claimed.flatMap { StoreTransaction($0, signedTransaction: jws) },
            result: .success(.verified([])))
        do throws(StoreError) {
            switch mode {
            case .signedTransactions(let verifier):
                let record = try await verifiedRecord(jws, verifier)
                var renewals: [RenewalRecord]?
                if engine.kind(of: record) == .autoRenewable { renewals = try? await verifiedRenewals(verifier) }
                checked.result = .success(.verified([record], renewals: renewals))
            case .appReceipt(let verifier):
                let history = try await verifiedReceiptHistory(verifier, cached: state.history)
                guard let id = claimed?.transactionID, history.records.contains(where: { $0.transactionID == id })
                else {
                    throw StoreError(
                        .failedVerification,
                        "the verified receipt does not contain transaction \(claimed?.transactionID ?? "?")")
                }
                checked.result = .success(
                    .verified(history.records, originalAppVersion: history.originalAppVersion))
            case .server(let server):
                checked.result = .success(
                    .server(
                        try await server.check(jws, appAccountToken: appAccountToken, backend: backend, state: state)))
            }
        } catch {
            checked.result = .failure(error)
        }
        // A consumable the device accepted joins its ledger (and, when the server decided, its history too: the
        // server verified it), so its count survives a change of mode.
        if case .success(let change) = checked.result, let claimed, let record = PurchaseRecord(claimed),
            engine.kind(of: record) == .consumable
        {
            let server = if case .server = mode { true } else { false }
            checked.result = .success(
                StateChange { state in
                    change.apply(to: &state)
                    if !state.ledger.signedPurchases.contains(jws) { state.ledger.signedPurchases.append(jws) }
                    if server {
                        state.history.records.merge(record)
                        state.ledger.purchasesOnServer.insert(record.transactionID)
                    }
                })
        }
        return checked
    }

    // MARK: - Everything

    /// The verified state rebuilt from the store's answers. What the cache holds and the store does not confirm is
    /// dropped, except finished consumables (a store forgets them; their refunds still arrive as updates).
    func reconcile(state: VerifiedState, appAccountToken: UUID?)
        async throws(StoreError) -> (
            VerifiedState, failures: [StoreError]
        )
    {
        switch mode {
        case .signedTransactions(let verifier):
            var failures: [StoreError] = []
            var records: [PurchaseRecord] = []
            for jws in try await backend.allTransactions() {
                do throws(StoreError) { records.merge(try await verifiedRecord(jws, verifier)) } catch {
                    failures.append(error)
                }
            }
            let renewals = try await verifiedRenewals(verifier) { failures.append($0) }
            var history = PurchaseHistory(
                records: records + forgottenConsumables(of: state.history, missingFrom: records),
                renewals: renewals, consumptions: state.history.consumptions,
                originalAppVersion: state.history.originalAppVersion)
            if let app = try? await verifier.verifyAppTransaction(try await backend.appTransaction()),
                let payload = app.verifiedPayload
            {
                history.originalAppVersion = payload.originalApplicationVersion ?? history.originalAppVersion
            }
            return (state.rebuilt(history: history), failures)
        case .appReceipt(let verifier):
            let history = try await verifiedReceiptHistory(verifier, cached: state.history)
            return (state.rebuilt(history: history), [])
        case .server(let server):
            let answer = try await server.reconcile(backend: backend, appAccountToken: appAccountToken, state: state)
            return (answer, [])
        }
    }

    // MARK: - Pieces

    /// The renewal info of every subscription the customer sees, each verified; one that fails is left out (and
    /// reported to `failed`).
    func verifiedRenewals(_ verifier: SignedDataVerifier, failed: (StoreError) -> Void = { _ in })
        async throws(StoreError) -> [RenewalRecord]
    {
        var renewals: [RenewalRecord] = []
        for jws in try await backend.subscriptionRenewalInfos() {
            guard let verdict = try? await verifier.verifyRenewalInfo(jws),
                let payload = verdict.verifiedPayload, let renewal = RenewalRecord(payload)
            else {
                failed(StoreError(.failedVerification, "a renewal info did not verify"))
                continue
            }
            renewals.append(renewal)
        }
        return renewals
    }

    /// A signed transaction as a record, once it verified.
    func verifiedRecord(_ jws: String, _ verifier: SignedDataVerifier) async throws(StoreError) -> PurchaseRecord {
        let verdict: SignedDataVerdict<TransactionPayload>
        do { verdict = try await verifier.verifyTransaction(jws) } catch {
            throw StoreError(.failedVerification, "not a signed transaction: \(error)")
        }
        guard let payload = verdict.verifiedPayload else {
            let reasons = verdict.failures.map(\.description).joined(separator: "; ")
            throw StoreError(.failedVerification, "transaction \(verdict.payload?.transactionID ?? "?"): \(reasons)")
        }
        guard let record = PurchaseRecord(payload) else {
            throw StoreError(.failedVerification, "the transaction has no id, product or purchase date")
        }
        return record
    }

    /// The app receipt on disk, verified for this app, version and device (never asked of the App Store here: that is
    /// a sign-in prompt on a device, which only ``Store/restore()`` makes). Its records replace the cached ones, except
    /// finished consumables (they leave the receipt).
    func verifiedReceiptHistory(_ verifier: ReceiptVerifier, cached: PurchaseHistory) async throws(StoreError)
        -> PurchaseHistory
    {
        let now = try await backend.now()
        let device = ReceiptVerifier.deviceIdentifier(backend.deviceIdentifier)
        guard let bytes = try await backend.appReceipt() else {
            throw StoreError(
                .failedVerification, "the device has no receipt yet (restoring purchases asks the App Store for one)")
        }
        let verdict: ReceiptVerdict
        do { verdict = try await verifier.verify(bytes, at: now, deviceIdentifier: device) } catch {
            throw StoreError(.failedVerification, "the app receipt cannot be read: \(error)")
        }
        guard verdict.isValid else {
            let problem = verdict.failures.map(\.description).joined(separator: "; ")
            throw StoreError(.failedVerification, "the app receipt did not verify: \(problem)")
        }
        var history = PurchaseHistory(consumptions: cached.consumptions, originalAppVersion: cached.originalAppVersion)
        history.add(verdict.receipt)
        history.records += forgottenConsumables(of: cached, missingFrom: history.records)
        return history
    }

    /// Consumable records of `cached` that `records` no longer list.
    func forgottenConsumables(of cached: PurchaseHistory, missingFrom records: [PurchaseRecord]) -> [PurchaseRecord] {
        let present = Set(records.map(\.transactionID))
        return cached.records.filter { engine.kind(of: $0) == .consumable && !present.contains($0.transactionID) }
    }
}

extension [PurchaseRecord] {
    /// Adds a record, replacing an older statement of the same transaction.
    mutating func merge(_ record: PurchaseRecord) {
        if let index = firstIndex(where: { $0.transactionID == record.transactionID }) {
            if (self[index].signedDate ?? .distantPast) <= (record.signedDate ?? .distantPast) { self[index] = record }
        } else {
            append(record)
        }
    }
}
