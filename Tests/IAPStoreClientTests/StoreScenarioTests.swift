import Foundation
import IAPCatalog
import IAPCore
import IAPEntitlements
import IAPSignedData
import IAPSimulator
import IAPStoreClient
import IAPStoreClientTesting
import IAPStoreKit
import IAPStoreKitBackend
import IAPTestSupport
import Testing

/// The seeds' scenarios, played by the StoreClient against the simulator in process and over HTTP (a real server on
/// a loopback socket, updates as server-sent events), in each validation mode: signed transactions and the app receipt
/// verified on the device, and the validation server's verdict (the server's application on a loopback socket). A few
/// expectations hold only where the answer carries the fact (a receipt says nothing of renewal intent or ownership).
@Suite struct StoreScenarioTests {
    typealias F = FloristCatalog

    @Test(arguments: ModeKind.allCases, Transport.allCases)
    func firstLaunchWithNoPurchases(_ mode: ModeKind, _ transport: Transport) async throws {
        try await StoreHarness.run(mode, transport) { world in
            try world.customer("ana")
            let (store, log) = try await world.store(try await world.backend("ana"))
            #expect(await store.products.map(\.id) == F.catalog.products.map(\.id))
            #expect(await store.products.first?.displayPrice == "$2.99")
            #expect(await store.purchasedProductIDs.isEmpty)
            #expect(await store.origin == .verified)
            #expect(
                await store.subscriptions(inGroup: F.vipGroup).map(\.id) == [F.gold, F.goldYearly, F.silver, F.bronze])
            #expect(await store.products(of: .consumable).map(\.id) == [F.installation])
            #expect(await store.isEligibleForIntroductoryOffer(group: F.vipGroup))
            await log.wait(for: .reconciled)
            #expect(log.kinds.starts(with: [.productsLoaded, .reconciled]))
        }
    }

    @Test(arguments: ModeKind.allCases, Transport.allCases)
    func buyNonConsumable(_ mode: ModeKind, _ transport: Transport) async throws {
        try await StoreHarness.run(mode, transport) { world in
            try world.customer("ana")
            let (store, log) = try await world.store(try await world.backend("ana"))
            let state = try await store.purchase(F.flowers)
            #expect(state == .purchased)
            #expect(state.transaction?.productID == F.flowers && state.transaction?.purchaseDate == StoreHarness.start)
            #expect(state.transaction?.signedTransaction.split(separator: ".").count == 3)
            #expect(await store.isPurchased(F.flowers))
            #expect(await !store.isPurchased(F.chocolates))
            #expect(try world.simulator.unfinishedTransactions(account: "ana").isEmpty, "finished after unlock")
            let info = try #require(await store.purchaseInfo(F.flowers))
            #expect(info.purchaseDate == StoreHarness.start)
            #expect(info.revocationDate == nil && info.isActive)
            await log.wait(for: .transactionFinished, product: F.flowers)
            await log.wait(for: .purchaseSucceeded, product: F.flowers)
            #expect(log.count(.purchaseSucceeded, product: F.flowers) == 1)
        }
    }

    @Test(arguments: ModeKind.allCases, Transport.allCases)
    func buyConsumableThreeTimesAndConsumeOne(_ mode: ModeKind, _ transport: Transport) async throws {
        try await StoreHarness.run(mode, transport) { world in
            try world.customer("ana")
            let cache = MemoryStorePersistence()
            let (store, _) = try await world.store(try await world.backend("ana"), persistence: cache)
            for _ in 0..<3 { try await store.purchase(F.installation) }
            #expect(await store.consumableCount(F.installation) == 3)
            try await store.consume(F.installation)
            #expect(await store.consumableCount(F.installation) == 2)
            await #expect(throws: StoreError(.insufficientBalance, "")) {
                try await store.consume(F.installation, quantity: 3)
            }
            await #expect(throws: StoreError(.notConsumable, "")) { try await store.consume(F.flowers) }
            // The next launch counts the same, though finished consumables left the receipt.
            let (relaunched, _) = try await world.store(try await world.backend("ana"), persistence: cache)
            #expect(await relaunched.consumableCount(F.installation) == 2)
        }
    }

    @Test(arguments: ModeKind.allCases, Transport.allCases)
    func askToBuyApprovedAndDeclined(_ mode: ModeKind, _ transport: Transport) async throws {
        try await StoreHarness.run(mode, transport) { world in
            try world.customer("kid", askToBuy: true)
            let (store, log) = try await world.store(try await world.backend("kid"))
            #expect(try await store.purchase(F.flowers) == .pending)
            #expect(try await store.purchase(F.chocolates) == .pending)
            #expect(await !store.isPurchased(F.flowers))
            let pending = world.simulator.pendingPurchases
            #expect(pending.map(\.productID) == [F.flowers, F.chocolates])
            _ = try world.simulator.approve(pending[0].id)
            try world.simulator.decline(pending[1].id)
            await log.wait(for: .purchaseSucceeded, product: F.flowers)
            #expect(await store.isPurchased(F.flowers))
            #expect(await store.purchaseState(F.flowers) == .purchased)
            #expect(await !store.isPurchased(F.chocolates))
            #expect(await store.purchaseState(F.chocolates) == .pending, "StoreKit never tells the app of a decline")
            #expect(try world.simulator.unfinishedTransactions(account: "kid").isEmpty)
        }
    }

    @Test(arguments: ModeKind.allCases, Transport.allCases)
    func interruptedPurchaseCompletesThroughUpdates(_ mode: ModeKind, _ transport: Transport) async throws {
        try await StoreHarness.run(mode, transport) { world in
            try world.customer("ana")
            let backend = try await world.backend("ana")
            let (store, log) = try await world.store(backend)
            backend.customer.willAct(.interrupt)
            #expect(try await store.purchase(F.gold) == .pending)
            _ = try world.simulator.approve(try #require(world.simulator.pendingPurchases.first).id)
            await log.wait(for: .purchaseSucceeded, product: F.gold)
            #expect(await store.isPurchased(F.gold))
        }
    }

    @Test(arguments: ModeKind.allCases, Transport.allCases)
    func oneAtATimeAndCancel(_ mode: ModeKind, _ transport: Transport) async throws {
        try await StoreHarness.run(mode, transport) { world in
            try world.customer("ana")
            let backend = try await world.backend("ana")
            let (store, log) = try await world.store(backend)
            backend.customer.holdNextPurchase()
            let first = Task { try await store.purchase(F.flowers) }
            await log.wait(for: .purchaseStarted, product: F.flowers)
            #expect(await store.purchaseState(F.flowers) == .inProgress)
            await #expect(throws: StoreError(.purchaseInProgress, "")) { try await store.purchase(F.chocolates) }
            backend.customer.release()
            #expect(try await first.value == .purchased)

            backend.customer.willAct(.cancel)
            #expect(try await store.purchase(F.chocolates) == .cancelled)
            #expect(await store.purchaseState(F.chocolates) == .cancelled)
            #expect(await !store.isPurchased(F.chocolates))
            await log.wait(for: .purchaseCancelled, product: F.chocolates)
            await #expect(throws: StoreError(.unknownProduct, "")) { try await store.purchase("com.example.nothing") }
        }
    }

    @Test(arguments: ModeKind.allCases, Transport.allCases)
    func everyStoreFailureIsReportedWithItsCode(_ mode: ModeKind, _ transport: Transport) async throws {
        try await StoreHarness.run(mode, transport) { world in
            try world.customer("ana")
            let (store, log) = try await world.store(try await world.backend("ana"))
            for code in SimulatorError.Code.injectable {
                world.simulator.injectFailure(.purchase, code)
                do throws(StoreError) {
                    try await store.purchase(F.flowers)
                    Issue.record("\(code): the purchase went through")
                } catch {
                    #expect(error.code.rawValue == code.rawValue)
                    #expect(await store.purchaseState(F.flowers) == .failed(error))
                }
            }
            world.simulator.injectFailure(.purchase, nil)
            await log.wait(for: .purchaseFailed, product: F.flowers, count: SimulatorError.Code.injectable.count)
            #expect(await !store.isPurchased(F.flowers))
            #expect(try await store.purchase(F.flowers) == .purchased)
        }
    }

    @Test(arguments: ModeKind.allCases, Transport.allCases)
    func failedVerificationUnlocksNothingAndFinishesNothing(_ mode: ModeKind, _ transport: Transport) async throws {
        try await StoreHarness.run(mode, transport) { world in
            try world.customer("ana")
            // Signed data (on the device or on the server): the same app signed with a foreign key. Receipts: a genuine
            // receipt for another bundle.
            let forgerWorld =
                mode == .appReceipt
                ? try StoreHarness(mode, bundleID: "com.example.other")
                : try StoreHarness(mode, pki: SimulatorPKI(keys: SimulatorTestKeys.otherKeys))
            try forgerWorld.customer("ana")
            let forged = AlteredBackend(
                base: try await world.backend("ana"), forger: try await forgerWorld.backend("ana"))
            let store = Store(catalog: F.catalog, backend: forged, validation: try world.validation())
            let log = EventLog(await store.events())
            await store.start()
            await #expect(throws: StoreError(.failedVerification, "")) { try await store.purchase(F.flowers) }
            guard case .failedVerification = await store.purchaseState(F.flowers) else {
                Issue.record("state \(await store.purchaseState(F.flowers))")
                return
            }
            #expect(await !store.isPurchased(F.flowers))
            await log.wait(for: .verificationFailed, product: F.flowers)
            #expect(try forgerWorld.simulator.unfinishedTransactions(account: "ana").count == 1, "never finished")
        }
    }

    @Test(arguments: ModeKind.allCases, Transport.allCases)
    func aFinishTheStoreCouldNotTakeIsTriedAgainAndNeverUndoesThePurchase(_ mode: ModeKind, _ transport: Transport)
        async throws
    {
        try await StoreHarness.run(mode, transport) { world in
            try world.customer("ana")
            // The first two finishes cannot reach the store: the third try does.
            let backend = AlteredBackend(base: try await world.backend("ana"), unreachableFinishes: 2)
            let (store, log) = try await world.store(backend)
            #expect(try await store.purchase(F.flowers) == .purchased)
            await log.wait(for: .transactionFinished, product: F.flowers)
            #expect(try world.simulator.unfinishedTransactions(account: "ana").isEmpty)
            // Three in a row: the purchase stays made and says so; the transaction stays unfinished, to come back.
            backend.unreachableFinishes.reset(to: 3)
            #expect(try await store.purchase(F.silver) == .purchased)
            #expect(await store.isPurchased(F.silver))
            #expect(await store.purchaseState(F.silver) == .purchased)
            await log.wait(for: .finishFailed, product: F.silver)
            #expect(log.count(.purchaseFailed) == 0)
            #expect(log.count(.transactionFinished, product: F.silver) == 0)
            #expect(try world.simulator.unfinishedTransactions(account: "ana").count == 1)
        }
    }

    @Test(arguments: ModeKind.allCases, Transport.allCases)
    func subscribeSilverUpgradeToGoldThenDowngradeToBronzeAtRenewal(_ mode: ModeKind, _ transport: Transport)
        async throws
    {
        try await StoreHarness.run(mode, transport) { world in
            try world.customer("ana")
            let (store, log) = try await world.store(try await world.backend("ana"))
            try await store.purchase(F.silver)
            #expect(await store.subscriptionInfo(group: F.vipGroup)?.currentProductID == F.silver)
            #expect(await !store.isEligibleForIntroductoryOffer(group: F.vipGroup))
            try world.simulator.advance(by: 3 * 86_400)
            try await store.purchase(F.gold)
            var info = try #require(await store.subscriptionInfo(group: F.vipGroup))
            #expect(info.currentProductID == F.gold)
            #expect(info.state == .subscribed)
            #expect(await store.isPurchased(F.gold))
            #expect(await !store.isPurchased(F.silver))

            try await store.purchase(F.bronze)
            await store.refresh()
            info = try #require(await store.subscriptionInfo(group: F.vipGroup))
            #expect(info.currentProductID == F.gold, "a downgrade waits for the renewal")
            if mode == .signedTransactions {
                #expect(info.renewsToProductID == F.bronze)
                #expect(info.pendingChange == .downgrade)
            }
            try world.simulator.advance(by: SubscriptionPeriod(value: 1, unit: .month))
            // The renewal brings a bronze transaction (gold's may come first, or not at all).
            await log.wait(for: .transactionUpdated, product: F.bronze)
            await store.refresh()
            info = try #require(await store.subscriptionInfo(group: F.vipGroup))
            #expect(info.currentProductID == F.bronze)
            #expect(await store.isPurchased(F.bronze))
            #expect(await !store.isPurchased(F.gold))
        }
    }

    @Test(arguments: ModeKind.allCases, Transport.allCases)
    func billingRetryThenRecovery(_ mode: ModeKind, _ transport: Transport) async throws {
        try await StoreHarness.run(mode, transport) { world in
            try world.customer("ana")
            let (store, log) = try await world.store(try await world.backend("ana"))
            try await store.purchase(F.gold)
            try world.simulator.setBillingIssue(account: "ana", failing: true)
            try world.simulator.advance(by: SubscriptionPeriod(value: 1, unit: .month))
            try world.simulator.advance(by: 86_400)
            await store.reconcile()
            #expect(await !store.isPurchased(F.gold), "no access while Apple retries billing (no grace period)")
            if mode == .signedTransactions {
                #expect(await store.subscriptionInfo(group: F.vipGroup)?.state == .inBillingRetry)
            }
            let updates = log.count(.transactionUpdated)
            try world.simulator.setBillingIssue(account: "ana", failing: false)
            try world.simulator.advance(by: 86_400)
            await log.wait(for: .transactionUpdated, count: updates + 1)
            await store.refresh()
            #expect(await store.isPurchased(F.gold), "the recovered renewal restores access")
            #expect(await store.subscriptionInfo(group: F.vipGroup)?.state == .subscribed)
        }
    }

    @Test(arguments: ModeKind.allCases, Transport.allCases)
    func refundOfANonConsumableTakesAccessAway(_ mode: ModeKind, _ transport: Transport) async throws {
        try await StoreHarness.run(mode, transport) { world in
            try world.customer("ana")
            let (store, log) = try await world.store(try await world.backend("ana"))
            try await store.purchase(F.flowers)
            let transactionID = try #require(await store.purchaseInfo(F.flowers)?.transactionID)
            try world.simulator.advance(by: 86_400)
            _ = try world.simulator.refund(transactionID)
            await log.wait(for: .refunded, product: F.flowers)
            #expect(await !store.isPurchased(F.flowers))
            let info = try #require(await store.purchaseInfo(F.flowers))
            #expect(info.revocationDate == StoreHarness.start.addingTimeInterval(86_400))
            #expect(!info.isActive)
        }
    }

    @Test(arguments: ModeKind.allCases, Transport.allCases)
    func familySharedPurchaseReachesTheOtherMember(_ mode: ModeKind, _ transport: Transport) async throws {
        try await StoreHarness.run(mode, transport) { world in
            try world.customer("parent")
            try world.customer("child")
            try world.simulator.joinFamily("family", account: "parent")
            try world.simulator.joinFamily("family", account: "child")
            let (parentStore, _) = try await world.store(try await world.backend("parent"))
            let (childStore, childLog) = try await world.store(try await world.backend("child"))
            try await parentStore.purchase(F.flowers)
            try await parentStore.purchase(F.chocolates)  // not family-shareable
            await childLog.wait(for: .transactionUpdated, product: F.flowers)
            #expect(await childStore.isPurchased(F.flowers))
            if mode == .signedTransactions {  // a receipt does not say who owns a purchase
                #expect(await childStore.purchaseInfo(F.flowers)?.ownership == .familyShared)
            }
            #expect(await !childStore.isPurchased(F.chocolates))
        }
    }

    @Test(arguments: ModeKind.allCases, Transport.allCases)
    func restoreOnASecondDevice(_ mode: ModeKind, _ transport: Transport) async throws {
        try await StoreHarness.run(mode, transport) { world in
            try world.customer("ana")
            let (phone, _) = try await world.store(try await world.backend("ana"))
            try await phone.purchase(F.flowers)
            try await phone.purchase(F.gold)
            let tablet = try world.simulator.addDevice(account: "ana")
            let (tabletStore, log) = try await world.store(try await world.backend("ana", device: tablet))
            try await tabletStore.restore()
            await log.wait(for: .restored)
            #expect(await tabletStore.purchasedProductIDs == [F.flowers, F.gold])
        }
    }

    @Test(arguments: ModeKind.allCases, Transport.allCases)
    func offlineStartAnswersFromTheCacheThenReconciles(_ mode: ModeKind, _ transport: Transport) async throws {
        try await StoreHarness.run(mode, transport) { world in
            try world.customer("ana")
            let cache = MemoryStorePersistence()
            let backend = try await world.backend("ana")
            let (first, _) = try await world.store(backend, persistence: cache)
            try await first.purchase(F.flowers)
            try await first.purchase(F.chocolates)
            let chocolates = try #require(await first.purchaseInfo(F.chocolates)?.transactionID)

            // Offline relaunch: the cached list and entitlements answer.
            backend.customer.isOffline = true
            let (second, log) = try await world.store(backend, persistence: cache)
            await log.wait(for: .cacheLoaded)
            await log.wait(for: .productsUnavailable)
            if mode == .signedTransactions {
                // StoreKit answers the transaction lists from the device while offline: the signed documents verify
                // again. The other stores cannot be reached at all.
                await log.wait(for: transport.isStoreKit ? .reconciled : .reconcileFailed)
            }
            #expect(await second.products.count == F.catalog.products.count)
            #expect(await second.products.first?.displayPrice == "$2.99")
            #expect(await second.isPurchased(F.flowers))
            #expect(await second.isPurchased(F.chocolates))

            // Refunded while the app was not running: the verified answer removes it as soon as the store answers.
            _ = try world.simulator.refund(chocolates)
            backend.customer.isOffline = false
            await second.reconcile()
            #expect(await second.origin == .verified)
            #expect(await second.isPurchased(F.flowers))
            #expect(await !second.isPurchased(F.chocolates))
            await #expect(throws: Never.self) { try await second.restore() }
        }
    }

    @Test(arguments: ModeKind.allCases, Transport.allCases)
    func aTransactionWaitingAtLaunchIsHandledBeforeAnyPurchase(_ mode: ModeKind, _ transport: Transport) async throws {
        try await StoreHarness.run(mode, transport) { world in
            try world.customer("kid", askToBuy: true)
            let backend = try await world.backend("kid")
            do {
                let (store, _) = try await world.store(backend)
                #expect(try await store.purchase(F.flowers) == .pending)
            }
            // The parent approves while the app is closed.
            _ = try world.simulator.approve(try #require(world.simulator.pendingPurchases.first).id)
            #expect(try world.simulator.unfinishedTransactions(account: "kid").count == 1)
            let store = Store(catalog: F.catalog, backend: backend, validation: try world.validation())
            let log = EventLog(await store.events())
            await store.start()
            await log.wait(for: .transactionFinished, product: F.flowers)
            #expect(await store.isPurchased(F.flowers))
            #expect(try world.simulator.unfinishedTransactions(account: "kid").isEmpty)
        }
    }

    @Test(arguments: ModeKind.allCases, Transport.allCases)
    func anOfferCodeIsRedeemedThroughUpdates(_ mode: ModeKind, _ transport: Transport) async throws {
        try await StoreHarness.run(mode, transport) { world in
            try world.customer("ana")
            let backend = try await world.backend("ana")
            let (store, log) = try await world.store(backend)
            if let storeKit = backend as? StoreKitBackend {
                // StoreKit's sheet shows a refused code to the customer and tells the app nothing.
                try await store.redeemOfferCode("NOPE")
                #expect(storeKit.session.offerCodeRefusals.map(\.reason) == ["invalidOfferIdentifier"])
            } else {
                await #expect(throws: StoreError(.invalidOfferIdentifier, "")) {
                    try await store.redeemOfferCode("NOPE")
                }
            }
            try await store.redeemOfferCode(StoreHarness.offerCode)
            await log.wait(for: .offerCodeRedeemed, product: F.gold)
            #expect(await store.isPurchased(F.gold))
            #expect(try world.simulator.unfinishedTransactions(account: "ana").isEmpty)
            // Redeemed is said of the transaction the code granted, never of a sheet closed on a refused code.
            let refusalsSeen = world.throughStoreKit ? 0 : 1
            #expect(log.count(.offerCodeRedeemed) == 1)
            #expect(log.count(.offerCodeSheetShown) == 2 - refusalsSeen && log.count(.offerCodeFailed) == refusalsSeen)

            // The customer closes the sheet without a code: nothing is redeemed.
            try await store.redeemOfferCode()
            await log.wait(for: .offerCodeSheetShown, count: 3 - refusalsSeen)
            #expect(log.count(.offerCodeRedeemed) == 1)
            let latest = try #require(try world.simulator.transactions(account: "ana").last)
            #expect(latest.payload.offerType == .offerCode)

            // Its refund re-signs the same transaction: announced as a refund, not as a second redemption.
            try world.simulator.refund(try #require(latest.payload.transactionID))
            await log.wait(for: .refunded, product: F.gold)
            #expect(log.count(.offerCodeRedeemed) == 1)
        }
    }

    @Test(arguments: ModeKind.allCases, Transport.allCases)
    func currentEntitlementsAndLatestTransactionsAgreeWithTheStore(_ mode: ModeKind, _ transport: Transport)
        async throws
    {
        try await StoreHarness.run(mode, transport) { world in
            try world.customer("ana")
            let backend = try await world.backend("ana")
            let (store, _) = try await world.store(backend)
            try await store.purchase(F.flowers)
            try await store.purchase(F.silver)
            try await store.purchase(F.gold)
            try await store.purchase(F.installation)
            let verifier = try world.signedDataVerifier()
            var current: Set<String> = []
            for jws in try await backend.currentEntitlements() {
                let verdict = try await verifier.verifyTransaction(jws)
                #expect(verdict.isValid)
                current.insert(try #require(verdict.payload?.productID))
            }
            #expect(current == [F.flowers, F.gold], "silver was upgraded away; a consumable is no entitlement")
            #expect(await store.purchasedProductIDs == current)
            let latestGold = try #require(try await backend.latestTransaction(for: F.gold))
            #expect(try await verifier.verifyTransaction(latestGold).payload?.productID == F.gold)
            #expect(try await backend.latestTransaction(for: F.chocolates) == nil)
        }
    }
}
