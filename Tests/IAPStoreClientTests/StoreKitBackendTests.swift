import Foundation
import IAPCatalog
import IAPEntitlements
import IAPSimulator
import IAPStoreClient
import IAPStoreClientTesting
import IAPStoreKit
import IAPStoreKitBackend
import IAPTestSupport
import Testing

/// What the StoreKit backend adds to the Store beyond the seeds' scenarios: products reloaded when the storefront
/// changes, and purchases the customer started on the App Store completed, both through StoreKit's API (the stand-in
/// on a session over the local App Store).
@Suite struct StoreKitBackendTests {
    typealias F = FloristCatalog

    @Test(arguments: ModeKind.allCases, [Transport.storeKit, .storeKitOverHTTP])
    func aStorefrontChangeReloadsProductsAndAnAppStorePurchaseCompletes(_ mode: ModeKind, _ transport: Transport)
        async throws
    {
        try await StoreHarness.run(mode, transport) { world in
            try world.customer("ana")
            let backend = try #require(try await world.backend("ana") as? StoreKitBackend)
            let (store, log) = try await world.store(backend)
            #expect(await store.products.first?.displayPrice == "$2.99")

            try await backend.session.setStorefront("FRA")
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

    @Test(arguments: [Transport.storeKit, .storeKitOverHTTP])
    func aRefundRequestGoesThroughStoreKitsSheet(_ transport: Transport) async throws {
        try await StoreHarness.run(.signedTransactions, transport) { world in
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

/// A flat `Products.plist` (ids only, as StoreHelper ships one) works as well as a full configuration: the Store
/// takes each product's kind, price, group, level and period from the store.
@Suite struct FlatProductListTests {
    typealias F = FloristCatalog

    static let plist = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0"><array>
        \(F.catalog.products.map { "<string>\($0.id)</string>" }.joined(separator: "\n"))
        </array></plist>
        """

    @Test(arguments: ModeKind.allCases, [Transport.inProcess, .storeKit])
    func typesGroupsAndPricesComeFromTheStore(_ mode: ModeKind, _ transport: Transport) async throws {
        let flat = try Catalog.load(Data(Self.plist.utf8), fileName: "Products.plist")
        #expect(flat.products.allSatisfy { $0.kind == nil } && flat.subscriptionGroups.isEmpty)
        try await StoreHarness.run(mode, transport) { world in
            try world.customer("ana")
            let store = Store(
                catalog: flat, backend: try await world.backend("ana"), validation: try world.validation())
            await store.start()
            let catalog = await store.catalog
            #expect(catalog.products.map(\.kind) == F.catalog.products.map(\.kind))
            #expect(catalog.products.map(\.price) == F.catalog.products.map(\.price))
            #expect(catalog.subscriptionGroups.map(\.name) == ["VIP"])
            #expect(
                catalog.products.compactMap { $0.subscription.map { "\($0.groupID):\($0.level)" } }
                    == F.catalog.products.compactMap { $0.subscription.map { "\($0.groupID):\($0.level)" } })
            #expect(
                await store.subscriptions(inGroup: F.vipGroup).map(\.id) == [F.gold, F.goldYearly, F.silver, F.bronze])

            #expect(try await store.purchase(F.flowers) == .purchased)
            #expect(await store.isPurchased(F.flowers))
            #expect(try await store.purchase(F.silver) == .purchased)
            #expect(try await store.purchase(F.gold) == .purchased)
            #expect(await store.subscriptionInfo(group: F.vipGroup)?.currentProductID == F.gold)
            try await store.purchase(F.installation)
            try await store.purchase(F.installation)
            #expect(await store.consumableCount(F.installation) == 2)
        }
    }
}

/// On a device, syncing with the App Store (`AppStore.sync()`, also how a new receipt is fetched) is a sign-in prompt,
/// which Apple allows only on the customer's request: the Store makes one for a restore and none at launch, for a
/// purchase or at a reconciliation, in every validation mode and over every transport.
@Suite struct SignInPromptTests {
    typealias F = FloristCatalog

    @Test(arguments: ModeKind.allCases, Transport.allCases)
    func onlyARestoreAsksTheCustomerToSignIn(_ mode: ModeKind, _ transport: Transport) async throws {
        try await StoreHarness.run(mode, transport) { world in
            try world.customer("ana")
            _ = try world.simulator.purchase(F.flowers, account: "ana")  // bought on another device
            let backend = try await world.backend("ana")
            let (store, _) = try await world.store(backend)
            #expect(try await store.purchase(F.chocolates) == .purchased)
            await store.reconcile()
            #expect(backend.customer.signIns == 0, "no sign-in prompt at launch, for a purchase or a reconciliation")

            try await store.restore()
            #expect(backend.customer.signIns == 1, "one prompt for a restore")
            #expect(await store.isPurchased(F.flowers))
            #expect(await store.isPurchased(F.chocolates))
        }
    }

    @Test(arguments: [Transport.inProcess, .storeKit])
    func aMissingReceiptIsNotRefreshedAtLaunchOnlyOnRestore(_ transport: Transport) async throws {
        try await StoreHarness.run(.appReceipt, transport) { world in
            try world.customer("ana")
            _ = try world.simulator.purchase(F.flowers, account: "ana")  // bought on another device
            let backend = try await world.backend("ana")
            backend.customer.receiptOnlyFromRefresh = true
            let (store, log) = try await world.store(backend)
            await log.wait(for: .reconcileFailed)
            #expect(backend.customer.signIns == 0, "no sign-in prompt at launch")
            #expect(await !store.isPurchased(F.flowers))

            // A purchase leaves a receipt on the device: it verifies without a sync.
            #expect(try await store.purchase(F.chocolates) == .purchased)
            #expect(backend.customer.signIns == 0)

            // The customer restores: now the App Store is asked, once, and its receipt read from the disk.
            try await store.restore()
            #expect(backend.customer.signIns == 1)
            #expect(await store.isPurchased(F.flowers))
            #expect(await store.isPurchased(F.chocolates))
        }
    }
}

/// Consumable counts are kept where StoreHelper keeps them: a file here (the keychain on Apple platforms), read again
/// at the next launch, though finished consumables leave the store's lists.
@Suite struct ConsumableCountFileTests {
    typealias F = FloristCatalog

    @Test(arguments: ModeKind.allCases)
    func countsSurviveARelaunchInAFile(_ mode: ModeKind) async throws {
        let folder = TestFiles.url("counts")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = FileStorePersistence(url: folder.appendingPathComponent("store-cache.json"))
        try await StoreHarness.run(mode, .storeKit) { world in
            try world.customer("ana")
            let (first, _) = try await world.store(try await world.backend("ana"), persistence: file)
            for _ in 0..<3 { try await first.purchase(F.installation) }
            try await first.consume(F.installation)
            #expect(await first.consumableCount(F.installation) == 2)
            #expect(try world.simulator.unfinishedTransactions(account: "ana").isEmpty, "all finished")

            let (relaunched, _) = try await world.store(try await world.backend("ana"), persistence: file)
            #expect(await relaunched.consumableCount(F.installation) == 2)
            let saved = try #require(try await file.load())
            #expect(saved.history.consumptions.count == 1)
        }
    }
}
