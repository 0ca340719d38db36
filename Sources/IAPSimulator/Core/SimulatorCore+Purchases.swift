import Crypto
import Foundation
import IAPCatalog
import IAPCore
import IAPSignedData

extension SimulatorCore {
    // MARK: - Purchases

    mutating func purchase(
        _ productID: String, account accountID: String, device: UUID?, options: PurchaseOptions
    ) throws(SimulatorError) -> PurchaseOutcome {
        try checkInjectedFailure(.purchase)
        let account = try account(accountID)
        if let device, account.device(device) == nil {
            throw SimulatorError(.unknownDevice, "device \(device) does not belong to \(accountID)")
        }
        let (_, kind) = try product(productID)
        guard options.quantity >= 1, options.quantity <= (kind == .consumable ? 10 : 1) else {
            throw SimulatorError(.invalidQuantity, "quantity \(options.quantity) is not allowed for \(productID)")
        }
        if options.userCancels {
            log(.userCancelled, account: accountID, product: productID, "\(accountID) cancels buying \(productID)")
            return .userCancelled
        }
        _ = try resolveOffer(options.offer, productID: productID, account: accountID, options: options)
        if account.askToBuy || options.interrupted {
            ids.pendingCounter += 1
            let reason: PendingPurchase.Reason = account.askToBuy ? .askToBuy : .interrupted
            let pendingPurchase = PendingPurchase(
                id: "\(reason.rawValue)-\(ids.pendingCounter)", reason: reason, accountID: accountID,
                productID: productID, requestedAt: now)
            pending[pendingPurchase.id] = PendingRequest(pending: pendingPurchase, deviceID: device, options: options)
            pendingOrder.append(pendingPurchase.id)
            log(
                reason == .askToBuy ? .askToBuyRequested : .interrupted, account: accountID, product: productID,
                reason == .askToBuy
                    ? "\(accountID) asks to buy \(productID); the purchase waits for approval (\(pendingPurchase.id))"
                    : "buying \(productID) is interrupted; it waits for \(accountID) to act (\(pendingPurchase.id))")
            return .pending(pendingPurchase)
        }
        purchasingDevice = device
        defer { purchasingDevice = nil }
        return .purchased(try complete(productID, kind: kind, account: accountID, options: options))
    }

    /// Approves (or declines) an ask-to-buy request, or resolves (or abandons) an interrupted purchase.
    mutating func resolvePending(_ id: String, approve: Bool) throws(SimulatorError) -> PurchaseOutcome {
        guard let request = pending.removeValue(forKey: id) else {
            throw SimulatorError(.unknownRequest, "no pending purchase '\(id)'")
        }
        pendingOrder.removeAll { $0 == id }
        let p = request.pending
        guard approve else {
            log(
                p.reason == .askToBuy ? .askToBuyDeclined : .userCancelled, account: p.accountID,
                product: p.productID,
                p.reason == .askToBuy
                    ? "the parent declines \(p.productID) for \(p.accountID); no transaction"
                    : "\(p.accountID) abandons the interrupted purchase of \(p.productID)")
            return .userCancelled
        }
        log(
            p.reason == .askToBuy ? .askToBuyApproved : .interruptionResolved, account: p.accountID,
            product: p.productID,
            p.reason == .askToBuy
                ? "the parent approves \(p.productID) for \(p.accountID)"
                : "\(p.accountID) completes the interrupted purchase of \(p.productID)")
        let (_, kind) = try product(p.productID)
        return .purchased(try complete(p.productID, kind: kind, account: p.accountID, options: request.options))
    }

    /// Charges the customer and issues what they bought.
    mutating func complete(
        _ productID: String, kind: ProductKind, account: String, options: PurchaseOptions
    ) throws(SimulatorError) -> SimulatorTransaction {
        switch kind {
        case .autoRenewable:
            return try signedTransaction(try subscribe(productID, account: account, options: options))
        case .nonConsumable:
            if let owned = owns(account, productID), transactions[owned]?.ownership == .purchased {
                log(
                    .purchased, account: account, product: productID, transaction: owned,
                    "\(account) already owns \(productID); the store returns the existing transaction")
                return try signedTransaction(owned)
            }
            fallthrough
        case .consumable, .nonRenewable:
            let id = issue(
                account: account, productID: productID, kind: kind, quantity: options.quantity, purchaseDate: now,
                appAccountToken: options.appAccountToken)
            log(
                .purchased, account: account, product: productID, transaction: id,
                "\(account) buys \(options.quantity == 1 ? "" : "\(options.quantity) × ")\(productID)")
            notify(.oneTimeCharge, nil, transaction: id, line: nil)
            shareWithFamily(id)
            return try signedTransaction(id)
        }
    }

    // MARK: - Offers

    /// Checks the offer a purchase asks for and returns what it applies, or nil for none.
    func resolveOffer(
        _ choice: OfferChoice?, productID: String, account: String, options: PurchaseOptions
    ) throws(SimulatorError) -> AppliedOffer? {
        guard let choice else { return nil }
        guard let info = catalog.product(productID)?.subscription else {
            throw SimulatorError(.ineligibleForOffer, "\(productID) is not a subscription; it has no offers")
        }
        let hasSubscribed = hasSubscribed(account: account, group: info.groupID)
        switch choice {
        case .promotional(let signed):
            guard !signed.offerID.isEmpty, !signed.keyID.isEmpty, !signed.signature.isEmpty else {
                throw SimulatorError(.missingOfferParameters, "a promotional offer needs an id, key id and signature")
            }
            guard let offer = info.promotionalOffers.first(where: { $0.id == signed.offerID }) else {
                throw SimulatorError(
                    .invalidOfferIdentifier, "\(productID) has no promotional offer '\(signed.offerID)'")
            }
            guard let key = offerKey(signed.keyID), Data(base64Encoded: signed.signature) != nil else {
                throw SimulatorError(.invalidOfferSignature, "unknown key id or unreadable signature")
            }
            let token = options.appAccountToken ?? accounts[account]?.appAccountToken
            guard
                signed.isSigned(by: key, bundleID: configuration.bundleID, productID: productID, appAccountToken: token)
            else {
                throw SimulatorError(.invalidOfferSignature, "the promotional offer's signature does not verify")
            }
            let age = now.timeIntervalSince1970 * 1000 - Double(signed.timestamp)
            guard abs(age) <= 86_400_000 else {
                throw SimulatorError(
                    .invalidOfferSignature, "the promotional offer's timestamp is more than 24 hours away")
            }
            let nonce = signed.nonce.uuidString.lowercased()
            guard !spentOfferNonces.contains(nonce) else {
                throw SimulatorError(.invalidOfferSignature, "the promotional offer's nonce was used before")
            }
            guard hasSubscribed else {
                throw SimulatorError(.ineligibleForOffer, "promotional offers are for customers who subscribed before")
            }
            return AppliedOffer(type: .promotional, id: signed.offerID, offer: offer, nonce: nonce)
        case .promotionalV2(let jws):
            let (claims, nonce) = try verifiedOfferClaims(
                jws, audience: "promotional-offer", productID: productID, account: account)
            guard case .string(let offerID)? = claims["offerIdentifier"], !offerID.isEmpty else {
                throw SimulatorError(.missingOfferParameters, "the signature names no offerIdentifier")
            }
            guard let offer = info.promotionalOffers.first(where: { $0.id == offerID }) else {
                throw SimulatorError(.invalidOfferIdentifier, "\(productID) has no promotional offer '\(offerID)'")
            }
            guard hasSubscribed else {
                throw SimulatorError(.ineligibleForOffer, "promotional offers are for customers who subscribed before")
            }
            return AppliedOffer(type: .promotional, id: offerID, offer: offer, nonce: nonce)
        case .winBack(let offerID):
            guard let offer = info.winBackOffers.first(where: { $0.id == offerID }) else {
                throw SimulatorError(.invalidOfferIdentifier, "\(productID) has no win-back offer '\(offerID)'")
            }
            guard hasSubscribed, !hasRunningSubscription(account: account, group: info.groupID) else {
                throw SimulatorError(.ineligibleForOffer, "win-back offers are for customers whose subscription lapsed")
            }
            return AppliedOffer(type: .winBack, id: offerID, offer: offer)
        }
    }

    func hasSubscribed(account: String, group: String) -> Bool {
        (accounts[account]?.transactionIDs ?? []).contains {
            transactions[$0]?.groupID == group && transactions[$0]?.ownership == .purchased
        }
    }

    func hasRunningSubscription(account: String, group: String) -> Bool {
        guard let number = lineNumber(account: account, group: group) else { return false }
        return lines[number].isActive || lines[number].isInBillingRetry
    }

    /// Whether the account would get the product's introductory offer now: never subscribed in the group.
    func isEligibleForIntroductoryOffer(account: String, productID: String) -> Bool {
        guard let info = catalog.product(productID)?.subscription, info.introductoryOffer != nil else { return false }
        return !hasSubscribed(account: account, group: info.groupID)
    }

    mutating func redeemOfferCode(_ code: String, account accountID: String) throws(SimulatorError)
        -> SimulatorTransaction
    {
        try checkInjectedFailure(.offerCodeRedemption)
        _ = try account(accountID)
        guard let grant = configuration.offerCodes[code] else {
            throw SimulatorError(.invalidOfferIdentifier, "no offer code '\(code)'")
        }
        guard let info = catalog.product(grant.productID)?.subscription,
            let offer = info.offerCodes.first(where: { $0.id == grant.offerID })
        else {
            throw SimulatorError(.invalidOfferIdentifier, "\(grant.productID) has no offer code '\(grant.offerID)'")
        }
        let applied = AppliedOffer(type: .offerCode, id: grant.offerID, offer: offer)
        let id = try subscribe(grant.productID, account: accountID, options: PurchaseOptions(), offer: applied)
        return try signedTransaction(id)
    }

    // MARK: - Product requests

    mutating func products(_ requested: [String], account accountID: String) throws(SimulatorError)
        -> [SimulatorProduct]
    {
        try checkInjectedFailure(.loadProducts)
        let account = try account(accountID)
        let locale = account.storefront.locale.replacingOccurrences(of: "_", with: "-")
        return requested.compactMap { id -> SimulatorProduct? in
            guard let product = catalog.product(id), let kind = product.kind else { return nil }
            let localization = product.localization(for: locale)
            let price = prices[id] ?? product.price ?? 0
            return SimulatorProduct(
                id: id, kind: kind, displayName: localization?.displayName ?? product.referenceName,
                description: localization?.description ?? "", price: price,
                displayPrice: account.storefront.format(price), subscriptionGroupID: product.subscription?.groupID,
                subscriptionPeriod: product.subscription?.period, isFamilyShareable: product.familyShareable,
                isEligibleForIntroductoryOffer: isEligibleForIntroductoryOffer(account: accountID, productID: id))
        }
    }

    // MARK: - Finishing, syncing, deleting

    mutating func finish(_ id: String) throws(SimulatorError) {
        let t = try transaction(id)
        guard !t.finished else { return }
        transactions[t.id]!.finished = true
        accounts[t.accountID]!.revision += 1
        log(
            .finished, account: t.accountID, product: t.productID, transaction: t.id,
            "the app finishes transaction \(t.id) (\(t.productID))")
    }

    func unfinished(account: String) -> [UInt64] {
        (accounts[account]?.transactionIDs ?? []).filter { transactions[$0]?.finished == false }
    }

    /// What `AppStore.sync()` gives back: the latest transaction of every product the account has, unfinished
    /// consumables included.
    mutating func sync(account accountID: String) throws(SimulatorError) -> [SimulatorTransaction] {
        try checkInjectedFailure(.sync)
        let account = try account(accountID)
        var latest: [String: UInt64] = [:]
        var order: [String] = []
        var result: [UInt64] = []
        for id in account.transactionIDs {
            guard let t = transactions[id] else { continue }
            if t.kind == .consumable {
                if !t.finished { result.append(id) }
            } else {
                let key = t.kind == .autoRenewable ? "group:\(t.groupID ?? t.productID)" : "product:\(t.productID)"
                if latest[key] == nil { order.append(key) }
                latest[key] = id
            }
        }
        result += order.compactMap { latest[$0] }
        log(.synced, account: accountID, "\(accountID) restores purchases: \(result.count) transactions")
        var signed: [SimulatorTransaction] = []
        for id in result.sorted() { signed.append(try signedTransaction(id)) }
        return signed
    }

    /// Removes a transaction from history, as Xcode's "Delete Transaction" does: no notification, no trace.
    mutating func deleteTransaction(_ id: String) throws(SimulatorError) {
        let t = try transaction(id)
        transactions[t.id] = nil
        accounts[t.accountID]!.transactionIDs.removeAll { $0 == t.id }
        accounts[t.accountID]!.revision += 1
        if let group = t.groupID, let number = lineNumber(account: t.accountID, group: group),
            lines[number].latestTransactionID == t.id
        {
            let previous = accounts[t.accountID]!.transactionIDs.last {
                transactions[$0]?.groupID == group && transactions[$0]?.ownership == t.ownership
            }
            if let previous, let p = transactions[previous] {
                lines[number].latestTransactionID = previous
                lines[number].productID = p.productID
                lines[number].expiresDate = p.expiresDate ?? now
                lines[number].status = (p.expiresDate ?? now) > now ? .active : .expired(.other)
                reschedule(number)
            } else {
                lines[number].status = .expired(.other)
                lineIndex[t.accountID]![group] = nil
                reschedule(number)
            }
        }
        log(
            .transactionDeleted, account: t.accountID, product: t.productID, transaction: t.id,
            "transaction \(t.id) (\(t.productID)) is deleted from history")
    }

    /// Removes every transaction, subscription and pending purchase of one account, or of all.
    mutating func clearTransactions(account: String?) throws(SimulatorError) {
        var targets = accountOrder
        if let account { targets = [try self.account(account).id] }
        for id in targets {
            for t in accounts[id]!.transactionIDs { transactions[t] = nil }
            accounts[id]!.transactionIDs = []
            accounts[id]!.revision += 1
            for number in (lineIndex[id] ?? [:]).values {
                lines[number].status = .expired(.other)
                reschedule(number)
            }
            lineIndex[id] = nil
            for key in pendingOrder where pending[key]?.pending.accountID == id { pending[key] = nil }
            pendingOrder.removeAll { pending[$0] == nil }
        }
        log(.transactionsCleared, account: account, "every transaction\(account.map { " of \($0)" } ?? "") is cleared")
    }
}
