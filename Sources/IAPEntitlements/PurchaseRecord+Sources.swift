import Foundation
public import IAPCatalog
public import IAPReceipts
public import IAPSignedData

// MARK: - Receipts (StoreKit 1)

extension PurchaseRecord {
    /// The records of a verified app receipt, one per in-app entry that has a purchase date.
    ///
    /// A receipt cannot say "upgraded": Apple sets the cancellation date of the upgraded period to the moment of the
    /// upgrade. A cancelled subscription period is therefore read as upgraded (not refunded) when another product of
    /// the same subscription (same original transaction id) was bought within a minute of that cancellation.
    /// Consumables leave a receipt once the app finishes them, so a receipt gives only unfinished consumables.
    public static func records(from receipt: AppReceipt) -> [PurchaseRecord] {
        let environment = receipt.environment?.normalized
        let entries = receipt.inAppPurchases
        var records: [PurchaseRecord] = []
        records.reserveCapacity(entries.count)
        for entry in entries {
            guard var record = PurchaseRecord(receiptEntry: entry, environment: environment) else { continue }
            record.signedDate = receipt.creationDate
            if let cancellation = entry.cancellationDate, entry.expiresDate != nil,
                entries.contains(where: {
                    $0.productID != entry.productID
                        && ($0.originalTransactionID ?? $0.transactionID) == record.originalTransactionID
                        && $0.purchaseDate.map { abs($0.timeIntervalSince(cancellation)) <= 60 } == true
                })
            {
                record.revocation = nil
                record.isUpgraded = true
            }
            records.append(record)
        }
        return records
    }

    /// One in-app entry of a receipt; `nil` when it has no purchase date (it cannot be placed in time).
    public init?(receiptEntry entry: InAppPurchase, environment: String? = nil) {
        guard let purchaseDate = entry.purchaseDate ?? entry.originalPurchaseDate else { return nil }
        let offer: OfferUse? =
            if entry.isTrialPeriod || entry.isInIntroOfferPeriod {
                OfferUse(kind: .introductory, isFreeTrial: entry.isTrialPeriod)
            } else if let id = entry.promotionalOfferID {
                OfferUse(kind: .promotional, identifier: id)
            } else {
                nil
            }
        self.init(
            transactionID: entry.transactionID,
            originalTransactionID: entry.originalTransactionID,
            productID: entry.productID,
            kind: entry.productType.flatMap(ProductKind.init(receiptType:)),
            quantity: entry.quantity,
            purchaseDate: purchaseDate,
            originalPurchaseDate: entry.originalPurchaseDate,
            expiresDate: entry.expiresDate,
            revocation: entry.cancellationDate.map { Revocation(date: $0, kind: .unspecified) },
            offer: offer,
            webOrderLineItemID: entry.webOrderLineItemID?.description,
            environment: environment,
            source: .receipt
        )
    }
}

extension ProductKind {
    /// The kind a receipt's attribute 1707 states; `nil` for a value this version does not know.
    public init?(receiptType: InAppPurchase.ProductType) {
        switch receiptType {
        case .nonConsumable: self = .nonConsumable
        case .consumable: self = .consumable
        case .nonRenewingSubscription: self = .nonRenewable
        case .autoRenewableSubscription: self = .autoRenewable
        default: return nil
        }
    }

    /// The kind a signed transaction's `type` states; `nil` for a value this version does not know.
    public init?(transactionType: IAPSignedData.ProductType) {
        switch transactionType {
        case .nonConsumable: self = .nonConsumable
        case .consumable: self = .consumable
        case .nonRenewing: self = .nonRenewable
        case .autoRenewable: self = .autoRenewable
        default: return nil
        }
    }
}

// MARK: - Signed data (StoreKit 2, App Store Server)

extension PurchaseRecord {
    /// A verified signed transaction; `nil` when it lacks a transaction id, product id or purchase date.
    public init?(_ transaction: TransactionPayload, source: PurchaseSource = .signedTransaction) {
        guard let transactionID = transaction.transactionID, let productID = transaction.productID,
            let purchaseDate = transaction.purchaseDate?.date
        else { return nil }
        let ownership: Ownership = transaction.inAppOwnershipType == .familyShared ? .familyShared : .purchased
        let revocation = transaction.revocationDate.map { date in
            Revocation(
                date: date.date,
                kind: Revocation.Kind(transaction.revocationType, ownership: ownership),
                reason: transaction.revocationReason.map {
                    $0 == .appIssue ? "appIssue" : $0 == .other ? "other" : $0.description
                },
                percentage: transaction.revocationPercentage)
        }
        self.init(
            transactionID: transactionID,
            originalTransactionID: transaction.originalTransactionID,
            productID: productID,
            kind: transaction.type.flatMap(ProductKind.init(transactionType:)),
            subscriptionGroupID: transaction.subscriptionGroupIdentifier,
            quantity: transaction.quantity ?? 1,
            purchaseDate: purchaseDate,
            originalPurchaseDate: transaction.originalPurchaseDate?.date,
            expiresDate: transaction.expiresDate?.date,
            ownership: ownership,
            revocation: revocation,
            isUpgraded: transaction.isUpgraded ?? false,
            offer: transaction.offerType.map {
                OfferUse(
                    kind: OfferUse.Kind($0), identifier: transaction.offerIdentifier,
                    isFreeTrial: transaction.offerDiscountType == .freeTrial)
            },
            appAccountToken: transaction.appAccountToken,
            webOrderLineItemID: transaction.webOrderLineItemID,
            environment: transaction.environment?.rawValue,
            source: source,
            signedDate: transaction.signedDate?.date,
            price: transaction.price,
            currency: transaction.currency,
            storefront: transaction.storefront
        )
    }
}

extension Revocation.Kind {
    init(_ type: RevocationType?, ownership: Ownership) {
        switch type {
        case .refundFull?: self = .refund
        case .refundProrated?: self = .proratedRefund
        case .familyRevoke?: self = .familyRevoke
        case nil where ownership == .familyShared: self = .familyRevoke
        default: self = .unspecified
        }
    }
}

extension OfferUse.Kind {
    init(_ type: OfferType) {
        switch type {
        case .introductory: self = .introductory
        case .promotional: self = .promotional
        case .offerCode: self = .offerCode
        case .winBack: self = .winBack
        default: self = .other
        }
    }
}

extension RenewalRecord {
    /// A verified signed renewal info; `nil` when it lacks the original transaction id.
    public init?(_ renewal: RenewalInfoPayload, source: PurchaseSource = .signedTransaction) {
        guard let originalTransactionID = renewal.originalTransactionID else { return nil }
        self.init(
            originalTransactionID: originalTransactionID,
            productID: renewal.productID,
            autoRenewProductID: renewal.autoRenewProductID,
            willAutoRenew: renewal.autoRenewStatus.map { $0 == .on },
            expirationReason: renewal.expirationIntent.map(ExpirationReason.init(intent:)),
            isInBillingRetry: renewal.isInBillingRetryPeriod ?? false,
            gracePeriodExpiresDate: renewal.gracePeriodExpiresDate?.date,
            renewalDate: renewal.renewalDate?.date,
            priceIncreasePending: renewal.priceIncreaseStatus.map { $0 == .notResponded },
            signedDate: renewal.signedDate?.date,
            source: source
        )
    }
}

extension ExpirationReason {
    /// The reason an `expirationIntent` number gives.
    public init(intent: ExpirationIntent) {
        switch intent {
        case .customerCancelled: self = .voluntary
        case .billingError: self = .billingError
        case .priceIncreaseDeclined: self = .priceIncreaseDeclined
        case .productUnavailable: self = .productUnavailable
        default: self = .other
        }
    }
}
