import Crypto
import Foundation
public import IAPEntitlements
import IAPReceipts
public import IAPSignedData
import IAPTrust

/// App receipts (StoreKit 1): `POST /v1/receipts` and Apple's `verifyReceipt` shape.
extension ValidationService {
    /// A receipt that parsed, for an app this server serves, with its verdict.
    struct CheckedReceipt {
        let app: ServedApp
        let verdict: ReceiptVerdict
    }

    /// Verifies an app receipt (base64, as `receipt-data`), records its in-app entries for the customer, and answers
    /// the customer's entitlements.
    ///
    /// The customer is the app account token given, else whoever already owns one of the receipt's purchases, else
    /// the original transaction id of its earliest purchase. A receipt without purchases and without a token names
    /// nobody: the answer has no customer and owns nothing.
    public func recordReceipt(_ base64: String, appAccountToken: String?, caller: Caller?) async throws(ServiceError)
        -> ReceiptAnswer
    {
        let checked = try await checkReceipt(base64, field: "receiptData") { (app) throws(ServiceError) in
            try Self.authorizePost(caller, app: app)
        }
        guard checked.verdict.isValid else {
            throw Self.refused("receiptData", checked.verdict.failures)
        }
        let token = try appAccountToken.map { (token) throws(ServiceError) in try Self.normalizedToken(token) }
        let transactions = Self.stored(checked.verdict.receipt, base64: base64, app: checked.app)
        guard let claimant = try await claimant(of: transactions, token: token, app: checked.app) else {
            return ReceiptAnswer(customer: nil, entitlements: checked.app.engine.snapshot(of: .init(), at: now))
        }
        let (customer, digest) = try await record(
            PurchaseBatch(claimant: claimant, transactions: transactions), app: checked.app)
        return ReceiptAnswer(
            customer: customer, entitlements: try await snapshot(of: customer, digest, app: checked.app))
    }

    /// What `POST /v1/receipts` answers: the customer (nil when the receipt names nobody) and what they own.
    public struct ReceiptAnswer: Sendable {
        public var customer: CustomerKey?
        public var entitlements: EntitlementSnapshot
    }

    /// Apple's `verifyReceipt`, computed here: the JSON answer for a request body sent to the `endpoint` environment's
    /// URL (`/verifyReceipt` is Production, `/sandbox/verifyReceipt` Sandbox).
    ///
    /// Like Apple's service it always answers, with a `status`: 0 valid, 21000 unreadable request, 21002 malformed
    /// receipt data, 21003 not authenticated (forged, another app, an environment the app does not accept), 21004
    /// wrong shared secret, 21005 storage unavailable (retryable), 21007 a sandbox receipt sent to Production, 21008
    /// a Production receipt sent to Sandbox. A valid receipt's purchases are recorded, so `latest_receipt_info` and
    /// `pending_renewal_info` come from everything the server knows of the customer (notifications included).
    ///
    /// For an app with keys (``AppConfiguration/accessKeys``) only a caller with one of them has the receipt's
    /// purchases recorded and hears the customer's whole history; a caller without a key (an Apple-shaped client that
    /// sends none) hears what the receipt itself proves, and nothing is recorded. Another app's key is 21003.
    public func verifyReceiptAnswer(body: [UInt8], endpoint: AppStoreEnvironment, caller: Caller? = nil) async
        -> [UInt8]
    {
        let endpointName = endpoint.rawValue
        func status(_ code: Int, _ name: String, _ message: String) -> [UInt8] {
            LegacyReceiptJSON.status(code, environment: endpointName, code: name, message: message)
        }
        guard case .object(let request)? = try? JSONValue(jsonBytes: body) else {
            return status(21000, "malformedJSON", "the request body is not a JSON object")
        }
        guard case .string(let base64)? = request["receipt-data"], !base64.isEmpty else {
            return status(21000, "missingField", "'receipt-data' (a base64 string) is required")
        }
        var password: String?
        switch request["password"] {
        case nil, .null?: password = nil
        case .string(let text)?: password = text
        default: return status(21000, "invalidField", "'password' must be a string")
        }
        var excludeOld = false
        switch request["exclude-old-transactions"] {
        case nil, .null?: break
        case .bool(let flag)?: excludeOld = flag
        case .string(let text)?: excludeOld = text == "true"
        default: return status(21000, "invalidField", "'exclude-old-transactions' must be true or false")
        }

        let checked: CheckedReceipt
        do {
            checked = try await checkReceipt(base64, field: "receipt-data") { (app) throws(ServiceError) in
                if let caller { try Self.authorize(caller, app: app, needs: .app) }
            }
        } catch {
            let unauthenticated = error.code == "unknownApp" || error.kind == .forbidden
            return status(unauthenticated ? 21003 : 21002, error.code, error.reason)
        }
        let verdict = checked.verdict
        let app = checked.app
        let others = verdict.failures.filter { $0.code != .environmentMismatch }
        if !others.isEmpty {
            return status(
                21003, "verificationFailed",
                "the receipt did not verify: \(others.map(\.code.rawValue).joined(separator: ", "))")
        }
        let environment = verdict.environment
        if endpoint == .production, environment?.isSandbox == true {
            return status(21007, "sandboxReceipt", "a sandbox receipt was sent to the Production endpoint")
        }
        if endpoint == .sandbox, environment == .production {
            return status(21008, "productionReceipt", "a Production receipt was sent to the Sandbox endpoint")
        }
        if let mismatch = verdict.failures.first(where: { $0.code == .environmentMismatch }) {
            return status(21003, "environmentMismatch", mismatch.reason)
        }
        if let secret = app.configuration.sharedSecret, !Self.sameSecret(password, secret) {
            return status(21004, "sharedSecretMismatch", "the password is not the app's shared secret")
        }

        let transactions = Self.stored(verdict.receipt, base64: base64, app: app)
        var latest: [PurchaseRecord] = transactions.map(\.record)
        var renewals: [RenewalRecord] = []
        let recordsForCaller = caller != nil || app.configuration.accessKeys.isEmpty
        do {
            if recordsForCaller, let claimant = try await claimant(of: transactions, token: nil, app: app) {
                // Apple's answer lists every purchase of the customer: the legacy endpoint reads them all.
                let (customer, _) = try await record(
                    PurchaseBatch(claimant: claimant, transactions: transactions), app: app)
                let records = try await records(of: customer)
                latest = records.transactions.map(\.record)
                renewals = records.renewals.map(\.record)
            }
        } catch  where error.code == "transactionClaimed" {
            // The receipt proves its own purchases; what others recorded stays theirs.
        } catch {
            return status(21005, error.code, error.reason)
        }
        var answer = JSONObject()
        answer["status"] = .number(JSONNumber(Int64(0)))
        answer["environment"] = .string(
            environment.map { $0 == .productionSandbox ? "Sandbox" : $0.normalized } ?? endpointName)
        answer["receipt"] = LegacyReceiptJSON.receipt(verdict.receipt, requestDate: now)
        if !latest.isEmpty {
            answer["latest_receipt_info"] = .array(
                Self.legacyOrder(latest, excludingOldRenewals: excludeOld).map {
                    LegacyReceiptJSON.Transaction($0).json
                })
        }
        answer["latest_receipt"] = .string(base64)
        if !renewals.isEmpty {
            answer["pending_renewal_info"] = .array(
                renewals.sorted { $0.originalTransactionID < $1.originalTransactionID }
                    .map(LegacyReceiptJSON.pendingRenewal))
        }
        return JSONValue.object(answer).jsonBytes()
    }

    // MARK: - Shared steps

    /// Decodes the base64, parses the receipt, picks its app, lets `authorize` refuse the caller for that app (before
    /// any signature is checked), and verifies it now.
    func checkReceipt(
        _ base64: String, field: String, authorize: (ServedApp) throws(ServiceError) -> Void = { _ in }
    ) async throws(ServiceError) -> CheckedReceipt {
        let compact = base64.filter { !$0.isWhitespace }
        guard let bytes = Data(base64Encoded: compact) else {
            ServerMetrics.verification("receipt", "malformed")
            throw .badRequest("invalidReceiptData", "'\(field)' is not base64")
        }
        let signed: SignedReceipt
        do { signed = try SignedReceipt(bytes: bytes) } catch {
            ServerMetrics.verification("receipt", "malformed")
            throw .badRequest(error.code.rawValue, "\(field): \(error.reason)")
        }
        let app: ServedApp
        if bundleIDs.count == 1 {
            app = try self.app(bundleID: nil)
        } else {
            guard let named = try? self.app(bundleID: signed.receipt.bundleID) else {
                throw .unprocessable(
                    "unknownApp", "the receipt is for \(signed.receipt.bundleID), which this server does not serve")
            }
            app = named
        }
        try authorize(app)
        let verdict = await app.receipts.verify(signed, at: now)
        ServerMetrics.verification("receipt", verdict.isValid ? "valid" : "refused")
        return CheckedReceipt(app: app, verdict: verdict)
    }

    /// Whom a receipt's purchases belong to: the token, else an existing owner of one of them, else the original
    /// transaction id of the earliest; nil when there is no token and nothing to own.
    private func claimant(of transactions: [StoredTransaction], token: String?, app: ServedApp)
        async throws(ServiceError)
        -> String?
    {
        if let token { return token }
        let earliestFirst = transactions.sorted {
            ($0.record.purchaseDate, $0.originalTransactionID) < ($1.record.purchaseDate, $1.originalTransactionID)
        }
        var seen: Set<String> = []
        for transaction in earliestFirst where seen.insert(transaction.originalTransactionID).inserted {
            let owner: CustomerKey?
            do {
                owner = try await storage.customer(
                    matching: transaction.originalTransactionID, bundleID: app.configuration.bundleID)
            } catch {
                throw .storage(error)
            }
            if let owner { return owner.id }
        }
        return earliestFirst.first?.originalTransactionID
    }

    /// The stored form of a receipt's in-app entries; each keeps a reference to the receipt (its SHA-256), not a copy.
    /// An entry whose ids are not ids (``isStorableID(_:)``: a receipt signed by a store that signs anything) is left
    /// out.
    static func stored(_ receipt: AppReceipt, base64: String, app: ServedApp) -> [StoredTransaction] {
        let reference =
            "receipt:sha256:" + SHA256.hash(data: Data(base64.utf8)).map { String(format: "%02x", $0) }.joined()
        let signedDate = receipt.creationDate ?? Date(timeIntervalSince1970: 0)
        let records = PurchaseRecord.records(from: receipt).filter {
            [$0.transactionID, $0.originalTransactionID, $0.productID].allSatisfy(isStorableID)
        }
        return records.map { record in
            StoredTransaction(
                transactionID: record.transactionID, originalTransactionID: record.originalTransactionID,
                bundleID: app.configuration.bundleID, productID: record.productID, signedDate: signedDate,
                document: reference, appAccountToken: nil, record: record)
        }
    }

    /// Apple's order (oldest purchase first); with `excludingOldRenewals`, only the latest period of each
    /// subscription.
    static func legacyOrder(_ records: [PurchaseRecord], excludingOldRenewals: Bool) -> [PurchaseRecord] {
        var chosen = records
        if excludingOldRenewals {
            var latestPeriod: [String: PurchaseRecord] = [:]
            var others: [PurchaseRecord] = []
            for record in records {
                guard record.expiresDate != nil else {
                    others.append(record)
                    continue
                }
                if let current = latestPeriod[record.originalTransactionID],
                    (current.purchaseDate, current.transactionID) >= (record.purchaseDate, record.transactionID)
                {
                    continue
                }
                latestPeriod[record.originalTransactionID] = record
            }
            chosen = others + latestPeriod.values
        }
        return chosen.sorted { ($0.purchaseDate, $0.transactionID) < ($1.purchaseDate, $1.transactionID) }
    }

    /// Compares a given password with the shared secret without stopping at the first differing byte.
    static func sameSecret(_ given: String?, _ secret: String) -> Bool {
        guard let given else { return false }
        return SHA256.hash(data: Data(given.utf8)) == SHA256.hash(data: Data(secret.utf8))
    }
}
