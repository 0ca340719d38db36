import Crypto
import Foundation
import IAPCatalog
import IAPCore
import IAPEntitlements
import IAPReceipts
import IAPSignedData

/// Everything a simulator knows and does, as one value guarded by ``AppStoreSimulator``'s lock. Every operation runs
/// at `now`; the clock moves only through ``advance(to:)``, which runs the due renewals, retries and expiries in order.
struct SimulatorCore {
    let catalog: Catalog
    let configuration: SimulatorConfiguration
    let pki: SimulatorPKI
    let jwsSigner: JWSSigner
    let graceEnabled: Bool
    /// Whether issued artifacts, events and notifications are kept (off for long benchmarks).
    let keepsRecords: Bool
    /// Whether sent notifications are kept (for ``AppStoreSimulator/notifications`` and the notification history)
    /// even when events and artifacts are not.
    let keepsNotifications: Bool

    var now: Date
    var ids: IdentifierSource
    var accounts = AccountTable()
    var accountOrder: [String] = []
    var families: [String: [String]] = [:]
    var transactions = TransactionTable()
    var lines: [SubscriptionLine] = []
    var lineIndex: [String: [String: Int]] = [:]
    var queue = EventQueue()
    var pending: [String: PendingRequest] = [:]
    var pendingOrder: [String] = []
    var failures: [SimulatorOperation: SimulatorError.Code] = [:]
    var prices: [String: Decimal] = [:]
    var refundRequests: [UInt64: RefundRequest] = [:]
    /// The nonces of offer signatures already used (promotional V1 and V2, introductory offer eligibility).
    var spentOfferNonces: Set<String> = []
    /// What the App Store Server API was asked and keeps: renewal extensions by request, mass extensions, test
    /// notifications and every notification's send attempts.
    var serverAPI = ServerAPIRecords()
    /// Retention Messaging: images, messages, default messages, the realtime URL and performance tests.
    var messaging = RetentionMessagingRecords()

    var events: [SimulatorEvent] = []
    var artifacts: [SimulatorArtifact] = []
    var notifications: [SimulatorNotification] = []
    /// Each kept notification's place in the order the store sent them (parallel to ``notifications``).
    var notificationOrders: [Int64] = []
    /// The UUIDs of kept notifications added or sent again since the last save (see ``takeChangedRows()``).
    var changedNotifications: Set<String> = []
    /// The UUIDs of kept notifications let go since the last save (older than the history Apple keeps).
    var removedNotifications: Set<String> = []
    var statistics = SimulatorStatistics()
    var notificationSinks: [Outbox.Sink] = []
    var updateStreams: [String: [UUID: UpdateStream]] = [:]
    var updateStreamsOpened: UInt64 = 0
    /// The device a direct purchase is being made on: what it issues goes back to that device as the purchase's
    /// answer, not through its update streams (StoreKit's `Transaction.updates` leaves out what `purchase()` returned).
    var purchasingDevice: UUID?
    /// What the last transitions made for sinks and update streams, delivered once the lock is released.
    var outbox = Outbox()

    init(
        catalog: Catalog, configuration: SimulatorConfiguration, pki: SimulatorPKI, keepsRecords: Bool,
        keepsNotifications: Bool
    ) throws {
        self.keepsNotifications = keepsNotifications
        self.catalog = catalog
        self.configuration = configuration
        self.pki = pki
        self.jwsSigner = try pki.jwsSigner()
        self.graceEnabled = configuration.billingGracePeriodEnabled ?? catalog.settings.billingGracePeriodEnabled
        self.keepsRecords = keepsRecords
        self.now = configuration.start
        self.ids = IdentifierSource(
            seed: configuration.seed, nextTransactionID: configuration.firstTransactionID,
            nextWebOrderLineItemID: configuration.firstTransactionID / 1000)
        for product in catalog.products { prices[product.id] = product.price ?? 0 }
    }

    // MARK: - Look-ups

    func account(_ id: String) throws(SimulatorError) -> Account {
        guard let account = accounts[id] else { throw SimulatorError(.unknownAccount, "no account '\(id)'") }
        return account
    }

    func product(_ id: String) throws(SimulatorError) -> (CatalogProduct, ProductKind) {
        guard let product = catalog.product(id), let kind = product.kind else {
            throw SimulatorError(.productUnavailable, "the catalog has no product '\(id)'")
        }
        return (product, kind)
    }

    func transaction(_ id: String) throws(SimulatorError) -> TransactionState {
        guard let number = UInt64(id), let transaction = transactions[number] else {
            throw SimulatorError(.unknownTransaction, "no transaction '\(id)'")
        }
        return transaction
    }

    func lineNumber(account: String, group: String) -> Int? { lineIndex[account]?[group] }

    func checkInjectedFailure(_ operation: SimulatorOperation) throws(SimulatorError) {
        if let code = failures[operation] {
            throw SimulatorError(code, "injected failure for \(operation.rawValue)")
        }
    }

    func period(of productID: String) -> SubscriptionPeriod {
        catalog.product(productID)?.subscription?.period ?? SubscriptionPeriod(value: 1, unit: .month)
    }

    func level(of productID: String) -> Int { catalog.product(productID)?.subscription?.level ?? Int.max }

    // MARK: - Records

    mutating func log(
        _ kind: SimulatorEvent.Kind, account: String?, product: String? = nil, transaction: UInt64? = nil,
        _ summary: @autoclosure () -> String
    ) {
        statistics.events += 1
        guard keepsRecords else { return }  // the sentence is only written when it is kept
        events.append(
            SimulatorEvent(
                sequence: events.count, date: now, kind: kind, accountID: account, productID: product,
                transactionID: transaction.map(String.init), summary: summary()))
    }

    mutating func keep(_ kind: SimulatorArtifact.Kind, id: String, account: String?, bytes: [UInt8]) {
        guard keepsRecords else { return }
        let name = "\(kind.rawValue)-\(String(format: "%05d", artifacts.count + 1))-\(id)"
        artifacts.append(SimulatorArtifact(kind: kind, name: name, date: now, accountID: account, bytes: bytes))
    }

    // MARK: - Accounts, devices and families

    mutating func createAccount(
        _ id: String, storefront: String, appAccountToken: UUID?, askToBuy: Bool
    ) throws(SimulatorError) {
        guard !id.isEmpty, accounts[id] == nil else {
            throw SimulatorError(.invalidArgument, id.isEmpty ? "an account needs an id" : "account '\(id)' exists")
        }
        guard let front = Storefront.named(storefront) else {
            throw SimulatorError(.invalidArgument, "unknown storefront '\(storefront)'")
        }
        accounts[id] = Account(
            id: id, storefront: front, appAccountToken: appAccountToken, askToBuy: askToBuy, createdAt: now,
            appTransactionID: String(ids.transactionID()))
        accountOrder.append(id)
        serverAPI.appTransactionAccounts[accounts[id]!.appTransactionID] = id
        log(.accountCreated, account: id, "\(id) opens an account in the \(front.countryCode) storefront")
    }

    mutating func addDevice(account id: String, deviceID: UUID?) throws(SimulatorError) -> UUID {
        var account = try account(id)
        let deviceID = deviceID ?? ids.uuid()
        guard account.device(deviceID) == nil else {
            throw SimulatorError(.invalidArgument, "device \(deviceID) already belongs to \(id)")
        }
        let opaque = withUnsafeBytes(of: ids.uuid().uuid) { Array($0) }
        account.devices.append(Device(id: deviceID, opaqueValue: opaque))
        accounts[id] = account
        log(.deviceAdded, account: id, "\(id) signs in on device \(deviceID.uuidString.prefix(8))")
        return deviceID
    }

    mutating func setAccount(_ id: String, askToBuy: Bool? = nil, storefront: String? = nil) throws(SimulatorError) {
        var account = try account(id)
        if let askToBuy { account.askToBuy = askToBuy }
        if let storefront {
            guard let front = Storefront.named(storefront) else {
                throw SimulatorError(.invalidArgument, "unknown storefront '\(storefront)'")
            }
            account.storefront = front
        }
        accounts[id] = account
    }

    /// Puts an account in a family; the family's shareable purchases reach it at once.
    mutating func join(family: String, account id: String) throws(SimulatorError) {
        var account = try account(id)
        guard account.familyID == nil else {
            throw SimulatorError(.invalidState, "\(id) already belongs to family '\(account.familyID!)'")
        }
        account.familyID = family
        accounts[id] = account
        families[family, default: []].append(id)
        log(.familyJoined, account: id, "\(id) joins the \(family) family")
        for organizer in families[family]! where organizer != id {
            shareExistingPurchases(of: organizer, with: id)
            shareExistingPurchases(of: id, with: organizer)
        }
    }

    /// Takes an account out of its family: what was shared with it, and what it shared, is revoked.
    mutating func leaveFamily(account id: String) throws(SimulatorError) {
        var account = try account(id)
        guard let family = account.familyID else { throw SimulatorError(.invalidState, "\(id) is in no family") }
        account.familyID = nil
        accounts[id] = account
        families[family]?.removeAll { $0 == id }
        log(.familyLeft, account: id, "\(id) leaves the \(family) family")
        for other in families[family] ?? [] {
            revokeSharedCopies(from: id, to: other)
            revokeSharedCopies(from: other, to: id)
        }
    }

    func familyMembers(of id: String) -> [String] {
        guard let family = accounts[id]?.familyID else { return [] }
        return (families[family] ?? []).filter { $0 != id }
    }

    // MARK: - Transactions

    /// Issues a transaction, delivers it to the account's devices and shares it with the family when the product
    /// allows; returns its id.
    @discardableResult
    mutating func issue(
        account: String, productID: String, kind: ProductKind, quantity: Int = 1, purchaseDate: Date,
        originalID: UInt64? = nil, originalPurchaseDate: Date? = nil, expiresDate: Date? = nil,
        reason: TransactionReason = .purchase, offer: AppliedOffer? = nil, appAccountToken: UUID? = nil,
        ownership: OwnershipType = .purchased, sharedFrom: UInt64? = nil
    ) -> UInt64 {
        let id = ids.transactionID()
        let product = catalog.product(productID)
        let holder = accounts[account]!
        let transaction = TransactionState(
            id: id, originalID: originalID ?? id, accountID: account, productID: productID, kind: kind,
            groupID: product?.subscription?.groupID, quantity: quantity, purchaseDate: purchaseDate,
            originalPurchaseDate: originalPurchaseDate ?? purchaseDate, expiresDate: expiresDate,
            webOrderLineItemID: kind == .autoRenewable ? ids.webOrderLineItemID() : nil, reason: reason,
            offer: offer, appAccountToken: appAccountToken ?? holder.appAccountToken, ownership: ownership,
            sharedFrom: sharedFrom, price: ownership == .familyShared ? 0 : (prices[productID] ?? 0),
            storefront: holder.storefront)
        transactions[id] = transaction
        accounts[account]!.transactionIDs.append(id)
        accounts[account]!.revision += 1
        statistics.transactions += 1
        deliverUpdate(id, skipping: purchasingDevice)
        return id
    }

    /// Changes a transaction (revocation, upgrade flag) and delivers the new signed form.
    mutating func change(_ id: UInt64, _ body: (inout TransactionState) -> Void) {
        guard var transaction = transactions[id] else { return }
        body(&transaction)
        transaction.signed = nil
        transaction.finished = false
        transactions[id] = transaction
        accounts[transaction.accountID]?.revision += 1
        deliverUpdate(id)
    }

    /// Queues a transaction for every update stream of its account (but those of `skipping`, the device that
    /// receives it as a purchase's answer).
    mutating func deliverUpdate(_ id: UInt64, skipping device: UUID? = nil) {
        guard let account = transactions[id]?.accountID else { return }
        let streams = (updateStreams[account] ?? [:]).values.filter { device == nil || $0.device != device }
        guard !streams.isEmpty, let signed = try? signedTransaction(id) else { return }
        outbox.post(.transaction(signed, streams: streams.map(\.continuation)))
    }

    /// The signed transaction, signing it if it changed since last time.
    mutating func signedTransaction(_ id: UInt64) throws(SimulatorError) -> SimulatorTransaction {
        guard let transaction = transactions[id] else {
            throw SimulatorError(.unknownTransaction, "no transaction \(id)")
        }
        if let signed = transaction.signed { return signed }
        let payload = transactionPayload(transaction)
        let jws: String
        do { jws = try jwsSigner.sign(payload) } catch {
            throw SimulatorError(.signingFailed, "could not sign transaction \(id): \(error)")
        }
        statistics.jwsSignatures += 1
        let signed = SimulatorTransaction(
            transactionID: String(id), jws: jws, payload: payload, orderID: Self.orderID(of: transaction))
        transactions[id]!.signed = signed
        keep(.transaction, id: String(id), account: transaction.accountID, bytes: Array(jws.utf8))
        return signed
    }

    /// Whether an account owns a product now (own or shared copy, not revoked).
    func owns(_ account: String, _ productID: String) -> UInt64? {
        accounts[account]?.transactionIDs.last { id in
            guard let t = transactions[id] else { return false }
            return t.productID == productID && t.revocation == nil
        }
    }

    // MARK: - Family sharing

    mutating func shareWithFamily(_ id: UInt64, upgrade: Bool = false) {
        guard let transaction = transactions[id], transaction.ownership == .purchased,
            catalog.product(transaction.productID)?.familyShareable == true,
            transaction.kind == .nonConsumable || transaction.kind == .autoRenewable
        else { return }
        for member in familyMembers(of: transaction.accountID) { share(id, with: member, upgrade: upgrade) }
    }

    /// Gives `member` a family-shared copy of a purchaser's transaction, with the notification the member's server
    /// would get: ONE_TIME_CHARGE, SUBSCRIBED (initial or resubscribe), DID_RENEW, or an upgrade.
    mutating func share(_ id: UInt64, with member: String, upgrade: Bool = false) {
        guard let original = transactions[id] else { return }
        var originalID: UInt64?
        var line: Int?
        if original.kind == .autoRenewable, let group = original.groupID,
            let number = lineNumber(account: original.accountID, group: group)
        {
            line = number
            originalID = lines[number].sharedOriginals[member]
        } else if original.kind == .nonConsumable, owns(member, original.productID) != nil {
            return
        }
        let copy = issue(
            account: member, productID: original.productID, kind: original.kind, purchaseDate: original.purchaseDate,
            originalID: originalID, originalPurchaseDate: originalID.flatMap { transactions[$0]?.purchaseDate },
            expiresDate: original.expiresDate, reason: original.reason, offer: original.offer,
            appAccountToken: accounts[member]?.appAccountToken, ownership: .familyShared, sharedFrom: id)
        if let line, originalID == nil { lines[line].sharedOriginals[member] = copy }
        switch (original.kind, original.reason) {
        case (.autoRenewable, .renewal): notify(.didRenew, nil, transaction: copy, line: line)
        case (.autoRenewable, _) where upgrade: notify(.didChangeRenewalPref, .upgrade, transaction: copy, line: line)
        case (.autoRenewable, _):
            notify(.subscribed, originalID == nil ? .initialBuy : .resubscribe, transaction: copy, line: line)
        default: notify(.oneTimeCharge, nil, transaction: copy, line: line)
        }
    }

    /// Family members get what an organizer already had: their non-consumables, and running subscriptions' current
    /// period.
    mutating func shareExistingPurchases(of owner: String, with member: String) {
        for id in accounts[owner]?.transactionIDs ?? [] {
            guard let t = transactions[id], t.ownership == .purchased, t.revocation == nil else { continue }
            if t.kind == .nonConsumable {
                share(id, with: member)
            } else if t.kind == .autoRenewable, let group = t.groupID,
                let number = lineNumber(account: owner, group: group), lines[number].latestTransactionID == id,
                lines[number].isActive
            {
                share(id, with: member)
            }
        }
    }

    mutating func revokeSharedCopies(from owner: String, to member: String) {
        for id in accounts[member]?.transactionIDs ?? [] {
            guard let t = transactions[id], let source = t.sharedFrom, transactions[source]?.accountID == owner,
                t.revocation == nil
            else { continue }
            revokeCopy(id, reason: .other)
        }
        for index in lines.indices where lines[index].accountID == owner {
            lines[index].sharedOriginals[member] = nil
        }
    }

    mutating func revokeCopy(_ id: UInt64, reason: RevocationReason) {
        let revocation = TransactionRevocation(date: now, reason: reason, type: .familyRevoke)
        change(id) { $0.revocation = revocation }
        let t = transactions[id]!
        log(
            .revoked, account: t.accountID, product: t.productID, transaction: id,
            "the family-shared \(t.productID) is revoked for \(t.accountID)")
        notify(.revoke, nil, transaction: id, line: nil)
    }

    /// The family copies of a purchaser's transaction.
    func sharedCopies(of id: UInt64) -> [UInt64] {
        guard let owner = transactions[id]?.accountID else { return [] }
        return familyMembers(of: owner).flatMap { member in
            (accounts[member]?.transactionIDs ?? []).filter { transactions[$0]?.sharedFrom == id }
        }
    }
}

/// One `Transaction.updates` listener: the device it listens on (nil: the account as a whole), where to send, and
/// when it opened (the oldest of an account is ended first).
struct UpdateStream {
    var device: UUID?
    var continuation: AsyncStream<SimulatorTransaction>.Continuation
    var opened: UInt64 = 0
}
