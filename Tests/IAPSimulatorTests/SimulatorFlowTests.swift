import Crypto
import Foundation
import IAPCatalog
import IAPCore
import IAPEntitlements
import IAPReceipts
import IAPSignedData
import IAPSimulator
import IAPTestSupport
import Testing

private typealias F = FloristCatalog

@Suite("Simulator: one-time purchases")
struct OneTimePurchaseTests {
    @Test func buyKeepConsumeFinishAndRestore() async throws {
        let h = try SimulatorHarness()
        let device = try h.customer("ana")
        let flowers = try #require(try h.store.purchase(F.flowers, account: "ana").transaction)
        #expect(flowers.payload.productID == F.flowers)
        #expect(flowers.payload.type == .nonConsumable)
        #expect(flowers.payload.inAppOwnershipType == .purchased)
        #expect(flowers.payload.environment == .sandbox)
        #expect(flowers.payload.price == 2990)
        #expect(flowers.payload.storefront == "USA")
        try await h.expectAgreement("ana")

        // Buying it again gives the same transaction back, as StoreKit does.
        let again = try #require(try h.store.purchase(F.flowers, account: "ana").transaction)
        #expect(again.transactionID == flowers.transactionID)

        let installs = try #require(
            try h.store.purchase(F.installation, account: "ana", options: PurchaseOptions(quantity: 3)).transaction)
        #expect(installs.payload.quantity == 3)
        #expect(try h.store.view(account: "ana").consumablePurchased[F.installation] == 3)
        try await h.expectAgreement("ana")

        // The receipt lists the consumable until it is finished, then drops it; the non-consumable stays.
        var receipt = try h.store.receipt(account: "ana", device: device).receipt.receipt
        #expect(Set(receipt.inAppPurchases.map(\.productID)) == [F.flowers, F.installation])
        #expect(try h.store.unfinishedTransactions(account: "ana").count == 2)
        try h.store.finish(installs.transactionID)
        try h.store.finish(flowers.transactionID)
        receipt = try h.store.receipt(account: "ana", device: device).receipt.receipt
        #expect(receipt.inAppPurchases.map(\.productID) == [F.flowers])
        #expect(try h.store.unfinishedTransactions(account: "ana").isEmpty)
        let fromReceipt = try await h.snapshotFromReceipt("ana", device: device)
        #expect(fromReceipt.entitledProductIDs == [F.flowers])

        // Restore gives the non-consumable back (finished consumables are gone, as on a real device).
        #expect(try h.store.sync(account: "ana").map(\.transactionID) == [flowers.transactionID])
        #expect(h.notificationNames() == ["ONE_TIME_CHARGE", "ONE_TIME_CHARGE"])
        #expect(Set(h.store.notifications.map(\.uuid)).count == 2)
    }

    @Test func quantitiesAndUnknownProductsAreRefused() throws {
        let h = try SimulatorHarness()
        try h.customer("ana")
        let single = #expect(throws: SimulatorError.self) {
            try h.store.purchase(F.flowers, account: "ana", options: PurchaseOptions(quantity: 2))
        }
        #expect(single?.code == .invalidQuantity)
        for quantity in [0, -1, 11, Int.max] {
            let error = #expect(throws: SimulatorError.self) {
                try h.store.purchase(F.installation, account: "ana", options: PurchaseOptions(quantity: quantity))
            }
            #expect(error?.code == .invalidQuantity)
        }
        #expect(
            (#expect(throws: SimulatorError.self) { try h.store.purchase("nope", account: "ana") })?.code
                == .productUnavailable)
        #expect(
            (#expect(throws: SimulatorError.self) { try h.store.purchase(F.flowers, account: "bob") })?.code
                == .unknownAccount)
        #expect(try h.store.transactions(account: "ana").isEmpty)
    }

    @Test func cancelAndInjectedFailuresLeaveNoTrace() throws {
        let h = try SimulatorHarness()
        try h.customer("ana")
        #expect(
            try h.store.purchase(F.flowers, account: "ana", options: PurchaseOptions(userCancels: true))
                == .userCancelled)
        h.store.injectFailure(.purchase, .networkError)
        #expect(
            (#expect(throws: SimulatorError.self) { try h.store.purchase(F.flowers, account: "ana") })?.code
                == .networkError)
        h.store.injectFailure(.loadProducts, .systemError)
        #expect(
            (#expect(throws: SimulatorError.self) { try h.store.products([F.flowers], account: "ana") })?.code
                == .systemError)
        h.store.injectFailure(.purchase, nil)
        h.store.injectFailure(.loadProducts, nil)
        #expect(try h.store.transactions(account: "ana").isEmpty)
        #expect(try h.store.purchase(F.flowers, account: "ana").transaction != nil)
    }

    @Test func productsAreLocalizedForTheStorefront() throws {
        var catalog = FloristCatalog.catalog
        let index = catalog.products.firstIndex { $0.id == F.flowers }!
        catalog.products[index].localizations = [
            ProductLocalization(locale: "en-US", displayName: "Flowers", description: "A bunch"),
            ProductLocalization(locale: "fr-FR", displayName: "Fleurs", description: "Un bouquet"),
        ]
        let h = try SimulatorHarness(catalog: catalog)
        try h.customer("ana")
        try h.customer("zoé", storefront: "FRA")
        let us = try h.store.products([F.flowers, F.gold, "missing"], account: "ana")
        #expect(us.map(\.id) == [F.flowers, F.gold])
        #expect(us[0].displayName == "Flowers")
        #expect(us[0].displayPrice == "$2.99")
        #expect(us[1].isEligibleForIntroductoryOffer)
        let fr = try h.store.products([F.flowers], account: "zoé")
        #expect(fr[0].displayName == "Fleurs")
        #expect(fr[0].displayPrice.contains("€"))
    }

    @Test(arguments: [AppStoreEnvironment.production, .xcode])
    func theEnvironmentIsConfigurable(_ environment: AppStoreEnvironment) async throws {
        let h = try SimulatorHarness { $0.environment = environment }
        let device = try h.customer("ana")
        let token = UUID(uuidString: "6B1D2A55-9C1F-4E2B-8D3A-2F6E0C9B7A10")!
        let bought = try #require(
            try h.store.purchase(
                F.gold, account: "ana", device: device, options: PurchaseOptions(appAccountToken: token)
            )
            .transaction)
        #expect(bought.payload.environment == environment)
        #expect(bought.payload.appAccountToken == token.uuidString.lowercased())
        let verdict = try await h.jwsVerifier.verifyTransaction(bought.jws)
        #expect(verdict.isValid, "\(verdict.failures)")
        let sandbox = try SignedDataVerifier(
            trustStore: SimulatorTestKeys.pki.trustStore,
            configuration: .init(bundleID: SimulatorHarness.bundleID, environments: [.sandbox]))
        #expect(try await !sandbox.verifyTransaction(bought.jws).isValid, "a Sandbox verifier refuses it")
        let receipt = try h.store.receipt(account: "ana", device: device).receipt.receipt
        #expect(receipt.environment == (environment == .production ? .production : .xcode))
        #expect((receipt.appItemID != nil) == (environment == .production))
        let app = try await h.jwsVerifier.verifyAppTransaction(
            try h.store.appTransaction(account: "ana", device: device))
        #expect(app.isValid, "\(app.failures)")
        #expect(app.verifiedPayload?.receiptType == environment)
        try await h.expectAgreement("ana")
        let error = #expect(throws: SimulatorError.self) {
            try h.store.transactionUpdates(account: "ana", device: UUID())
        }
        #expect(error?.code == .unknownDevice)
    }

    @Test func instancesShareNothing() throws {
        let a = try SimulatorHarness()
        let b = try SimulatorHarness()
        try a.customer("ana")
        #expect(
            (#expect(throws: SimulatorError.self) { try b.store.purchase(F.flowers, account: "ana") })?.code
                == .unknownAccount)
        try b.customer("ana")
        try a.store.advance(by: 3600)
        let first = try #require(try a.store.purchase(F.flowers, account: "ana").transaction)
        let second = try #require(try b.store.purchase(F.flowers, account: "ana").transaction)
        #expect(first.transactionID == second.transactionID, "same seed, same numbering")
        #expect(first.payload.purchaseDate != second.payload.purchaseDate, "separate clocks")
    }
}

@Suite("Simulator: ask to buy and interrupted purchases")
struct PendingPurchaseTests {
    @Test func askToBuyDeclinedLeavesNothingApprovedBuys() async throws {
        let h = try SimulatorHarness()
        try h.customer("kid", askToBuy: true)
        let outcome = try h.store.purchase(F.chocolates, account: "kid")
        guard case .pending(let request) = outcome else { Issue.record("expected pending, got \(outcome)"); return }
        #expect(request.reason == .askToBuy)
        #expect(h.store.pendingPurchases == [request])
        try h.store.decline(request.id)
        #expect(h.store.pendingPurchases.isEmpty)
        #expect(try h.store.transactions(account: "kid").isEmpty)
        #expect(h.store.notifications.isEmpty)
        try await h.expectAgreement("kid")

        guard case .pending(let second) = try h.store.purchase(F.chocolates, account: "kid") else {
            Issue.record("expected pending"); return
        }
        try h.store.advance(by: 2 * 3600)
        let approved = try #require(try h.store.approve(second.id).transaction)
        #expect(approved.payload.purchaseDate?.date == SimulatorHarness.start + 2 * 3600, "bought when approved")
        #expect(try h.store.view(account: "kid").entitledProductIDs == [F.chocolates])
        try await h.expectAgreement("kid")
        #expect((#expect(throws: SimulatorError.self) { try h.store.approve(second.id) })?.code == .unknownRequest)
    }

    @Test func interruptedPurchaseResolves() async throws {
        let h = try SimulatorHarness()
        try h.customer("ana")
        let updates = try h.store.transactionUpdates(account: "ana")
        guard
            case .pending(let request) = try h.store.purchase(
                F.gold, account: "ana", options: PurchaseOptions(interrupted: true))
        else { Issue.record("expected pending"); return }
        #expect(request.reason == .interrupted)
        #expect(try h.store.view(account: "ana").subscriptions.isEmpty)
        let bought = try #require(try h.store.approve(request.id).transaction)
        #expect(try h.store.view(account: "ana").entitledProductIDs == [F.gold])
        var iterator = updates.makeAsyncIterator()
        #expect(await iterator.next()?.transactionID == bought.transactionID, "the update stream delivers it")
        try await h.expectAgreement("ana")
    }

    @Test func unfinishedTransactionsAreRedeliveredUntilFinished() async throws {
        let h = try SimulatorHarness()
        try h.customer("ana")
        let flowers = try #require(try h.store.purchase(F.flowers, account: "ana").transaction)
        let chocolates = try #require(try h.store.purchase(F.chocolates, account: "ana").transaction)
        try h.store.finish(chocolates.transactionID)
        for _ in 0..<2 {  // two launches of the app
            var iterator = try h.store.transactionUpdates(account: "ana").makeAsyncIterator()
            #expect(await iterator.next()?.transactionID == flowers.transactionID)
        }
        try h.store.finish(flowers.transactionID)
        #expect(try h.store.unfinishedTransactions(account: "ana").isEmpty)
    }

    /// StoreKit's `Transaction.updates` leaves out what `purchase()` returned on that device; other devices of the
    /// account, and a listener on the account as a whole, get it.
    @Test func aPurchaseReachesTheOtherDevicesUpdatesNotItsOwn() async throws {
        let h = try SimulatorHarness()
        try h.customer("ana")
        let phone = try h.store.addDevice(account: "ana")
        let tablet = try h.store.addDevice(account: "ana")
        var onPhone = try h.store.transactionUpdates(account: "ana", device: phone).makeAsyncIterator()
        var onTablet = try h.store.transactionUpdates(account: "ana", device: tablet).makeAsyncIterator()
        var anywhere = try h.store.transactionUpdates(account: "ana").makeAsyncIterator()
        let flowers = try #require(
            try h.store.purchase(F.flowers, account: "ana", device: phone, options: PurchaseOptions()).transaction)
        let chocolates = try #require(try h.store.purchase(F.chocolates, account: "ana").transaction)
        #expect(await onTablet.next()?.transactionID == flowers.transactionID)
        #expect(await anywhere.next()?.transactionID == flowers.transactionID)
        #expect(await onPhone.next()?.transactionID == chocolates.transactionID, "the phone's own purchase is skipped")
    }
}
