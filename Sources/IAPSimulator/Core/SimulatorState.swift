import Foundation
import IAPCatalog
import IAPReceipts
import IAPSignedData

/// A customer of the simulated store.
struct Account: Codable {
    let id: String
    var storefront: Storefront
    var appAccountToken: UUID?
    var askToBuy: Bool
    /// While set, renewals fail (an expired card); clearing it recovers subscriptions in billing retry.
    var billingFails = false
    var familyID: String?
    var devices: [Device] = []
    /// Every transaction of the account (own and family-shared), in issue order.
    var transactionIDs: [UInt64] = []
    let createdAt: Date
    let appTransactionID: String
    /// Bumped on every change that a receipt shows, so cached receipts know they are stale.
    var revision = 0

    func device(_ id: UUID) -> Int? { devices.firstIndex { $0.id == id } }
}

/// A device of an account: its identifier feeds the receipt hash.
struct Device: Codable {
    let id: UUID
    let opaqueValue: [UInt8]
    var cachedReceipt: (revision: Int, receipt: SimulatorReceipt)?

    private enum CodingKeys: String, CodingKey { case id, opaqueValue }
}

/// A revocation as the store records it.
struct TransactionRevocation: Codable {
    var date: Date
    var reason: RevocationReason
    var type: RevocationType
    /// Milli-percent (100000 is everything), prorated refunds only.
    var percentage: Int?
}

/// An offer applied to a transaction.
struct AppliedOffer: Codable {
    var type: OfferType
    var id: String?
    var offer: SubscriptionOffer
    /// The signature's nonce, spent once the purchase goes through (a signature cannot be used twice).
    var nonce: String? = nil
}

/// A transaction the store issued.
struct TransactionState: Codable {
    let id: UInt64
    let originalID: UInt64
    let accountID: String
    let productID: String
    let kind: ProductKind
    let groupID: String?
    let quantity: Int
    let purchaseDate: Date
    let originalPurchaseDate: Date
    var expiresDate: Date?
    let webOrderLineItemID: UInt64?
    let reason: TransactionReason
    let offer: AppliedOffer?
    var appAccountToken: UUID?
    let ownership: OwnershipType
    /// The purchaser's transaction this family-shared copy mirrors.
    let sharedFrom: UInt64?
    let price: Decimal
    let storefront: Storefront
    var revocation: TransactionRevocation?
    var isUpgraded = false
    var finished = false
    /// The signed form, dropped whenever the transaction changes.
    var signed: SimulatorTransaction?

    private enum CodingKeys: String, CodingKey {
        case id, originalID, accountID, productID, kind, groupID, quantity, purchaseDate, originalPurchaseDate
        case expiresDate, webOrderLineItemID, reason, offer, appAccountToken, ownership, sharedFrom, price
        case storefront, revocation, isUpgraded, finished
    }
}

/// One customer's subscription in one group: the chain of periods sharing an original transaction.
struct SubscriptionLine: Codable {
    enum Status: Codable {
        case active
        case billingRetry(graceEnd: Date?, retryEnd: Date, graceExpiredNotified: Bool)
        case expired(ExpirationIntent)
        case revoked
    }

    let accountID: String
    let groupID: String
    let originalID: UInt64
    var productID: String
    var autoRenewProductID: String
    var autoRenew = true
    var latestTransactionID: UInt64
    var expiresDate: Date
    var recentStart: Date
    var status: Status = .active
    var priceIncrease: PriceIncreaseStatus?
    /// The offer the coming renewals keep, and how many more periods it lasts.
    var offer: AppliedOffer?
    var offerPeriodsRemaining = 0
    /// For each family member: the original id of their shared copies.
    var sharedOriginals: [String: UInt64] = [:]
    /// When the developer extended the renewal date (Apple allows two extensions a year).
    var extensionDates: [Date] = []
    /// Bumped whenever the next due date changes, so stale entries in the event queue are skipped.
    var version = 0

    var isActive: Bool { if case .active = status { true } else { false } }
    var isInBillingRetry: Bool { if case .billingRetry = status { true } else { false } }

    /// A period starts on `productID` with auto-renew on: a purchase, a resubscription or an upgrade.
    mutating func begin(
        _ productID: String, transaction: UInt64, at start: Date, expires: Date, offer: AppliedOffer?, remaining: Int
    ) {
        self.productID = productID
        autoRenewProductID = productID
        autoRenew = true
        latestTransactionID = transaction
        expiresDate = expires
        recentStart = start
        status = .active
        priceIncrease = nil
        self.offer = remaining > 0 ? offer : nil
        offerPeriodsRemaining = remaining
    }

    /// When the store must next look at this line, if ever.
    var nextDueDate: Date? {
        switch status {
        case .active: expiresDate
        case .billingRetry(let graceEnd, let retryEnd, let notified):
            if let graceEnd, !notified { graceEnd } else { retryEnd }
        case .expired, .revoked: nil
        }
    }
}

/// A purchase waiting for approval or for the customer.
struct PendingRequest: Codable {
    let pending: PendingPurchase
    let deviceID: UUID?
    let options: PurchaseOptions
}

/// A customer's refund request waiting for the developer's consumption information and Apple's decision.
struct RefundRequest: Codable {
    let transactionID: UInt64
    let reason: ConsumptionRequestReason
    var report: ConsumptionReport?
}

/// The line events the clock runs, earliest first; equal dates in the order they were scheduled.
struct EventQueue {
    struct Entry {
        let date: Date
        let order: UInt64
        let line: Int
        let version: Int
    }

    private var heap: [Entry] = []
    private var counter: UInt64 = 0

    var isEmpty: Bool { heap.isEmpty }
    var first: Entry? { heap.first }

    mutating func push(date: Date, line: Int, version: Int) {
        counter += 1
        heap.append(Entry(date: date, order: counter, line: line, version: version))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.precedes(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> Entry? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let top = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var best = parent
            if left < heap.count, Self.precedes(heap[left], heap[best]) { best = left }
            if right < heap.count, Self.precedes(heap[right], heap[best]) { best = right }
            if best == parent { break }
            heap.swapAt(parent, best)
            parent = best
        }
        return top
    }

    mutating func removeAll() { heap.removeAll() }

    private static func precedes(_ a: Entry, _ b: Entry) -> Bool {
        a.date != b.date ? a.date < b.date : a.order < b.order
    }
}

/// Deterministic identifiers: numbered transactions, seeded UUIDs.
struct IdentifierSource: Codable {
    let seed: UInt64
    var nextTransactionID: UInt64
    var nextWebOrderLineItemID: UInt64
    var uuidCounter: UInt64 = 0
    var pendingCounter = 0

    mutating func transactionID() -> UInt64 {
        defer { nextTransactionID += 1 }
        return nextTransactionID
    }

    mutating func webOrderLineItemID() -> UInt64 {
        defer { nextWebOrderLineItemID += 1 }
        return nextWebOrderLineItemID
    }

    /// A version-4-shaped UUID drawn from the seed and a counter (SplitMix64), unique within a simulator.
    mutating func uuid() -> UUID {
        uuidCounter += 1
        var state = seed &+ uuidCounter &* 0x9E37_79B9_7F4A_7C15
        var bytes: [UInt8] = []
        for _ in 0..<2 {
            state = state &+ 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: z >> UInt64(shift)))
            }
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}

/// Values by key that remember which keys were written since they were last asked, so a save writes only those.
/// Every write goes through the subscript, so none is missed.
struct ChangeTrackedTable<Key: Hashable, Value> {
    private var byKey: [Key: Value] = [:]
    private var changed: Set<Key> = []

    init(_ values: [Value] = [], key: (Value) -> Key) {
        for value in values { byKey[key(value)] = value }
    }

    subscript(key: Key) -> Value? {
        get { byKey[key] }
        set {
            changed.insert(key)
            byKey[key] = newValue
        }
        _modify {
            changed.insert(key)
            yield &byKey[key]
        }
    }

    var count: Int { byKey.count }

    /// The keys changed since the last call, and forgets them.
    mutating func takeChanged() -> Set<Key> {
        defer { changed = [] }
        return changed
    }

    /// Every key, as if each had just changed (for a first save).
    mutating func markAllChanged() { changed = Set(byKey.keys) }
}

/// The store's transactions by id.
typealias TransactionTable = ChangeTrackedTable<UInt64, TransactionState>

extension ChangeTrackedTable where Key == UInt64, Value == TransactionState {
    init(_ transactions: [TransactionState] = []) { self.init(transactions, key: \.id) }
}

/// The store's accounts by id.
typealias AccountTable = ChangeTrackedTable<String, Account>

extension ChangeTrackedTable where Key == String, Value == Account {
    init(_ accounts: [Account] = []) { self.init(accounts, key: \.id) }
}
