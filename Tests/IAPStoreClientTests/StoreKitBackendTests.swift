import Foundation
import IAPSimulator
import IAPStoreClient
import IAPStoreKit
import IAPStoreKitBackend
import IAPTestSupport
import Testing

/// What the StoreKit backend adds to the Store beyond the seeds' scenarios: products reloaded when the storefront
/// changes, and purchases the customer started on the App Store completed, both through StoreKit's API (the stand-in
/// on a session over the local App Store).
@Suite struct StoreKitBackendTests {
    typealias F = FloristCatalog

    @Test(arguments: ModeKind.allCases)
    func aStorefrontChangeReloadsProductsAndAnAppStorePurchaseCompletes(_ mode: ModeKind) async throws {
        try await StoreHarness.run(mode, .storeKit) { world in
            try world.customer("ana")
            let backend = try #require(try await world.backend("ana") as? StoreKitBackend)
            let (store, log) = try await world.store(backend)
            #expect(await store.products.first?.displayPrice == "$2.99")

            try backend.session.setStorefront("FRA")
            await log.wait(for: .storefrontChanged)
            await log.wait(for: .productsLoaded, count: 2)
            #expect(await store.products.first?.displayPrice.contains("€") == true)

            try await backend.session.customerStartsPurchaseOnAppStore(F.flowers)
            await log.wait(for: .purchaseIntentReceived, product: F.flowers)
            await log.wait(for: .purchaseSucceeded, product: F.flowers)
            #expect(await store.isPurchased(F.flowers))
            #expect(try world.simulator.unfinishedTransactions(account: "ana").isEmpty)
        }
    }

    @Test func aRefundRequestGoesThroughStoreKitsSheet() async throws {
        try await StoreHarness.run(.signedTransactions, .storeKit) { world in
            try world.customer("ana")
            let backend = try #require(try await world.backend("ana") as? StoreKitBackend)
            let (store, _) = try await world.store(backend)
            try await store.purchase(F.flowers)
            let id = try #require(await store.purchaseInfo(F.flowers)?.transactionID)
            backend.session.cancelNextSheet()
            #expect(try await store.requestRefund(transactionID: id) == .userCancelled)
            #expect(try await store.requestRefund(transactionID: id) == .success)
            await #expect(throws: StoreError(.duplicateRefundRequest, "")) {
                try await store.requestRefund(transactionID: id)
            }
            #expect(
                try await store.manageSubscriptions().absoluteString == "https://apps.apple.com/account/subscriptions")
        }
    }
}
