import Foundation
import IAPCatalog
import IAPCore
import IAPEntitlements
import IAPSimulator
import IAPStoreClient
import IAPStoreClientTesting
import IAPTestSupport
import Observation
import Testing

/// The SwiftUI model's state at every step of the seeds' scenarios, as a store screen would show it, through StoreKit's
/// API (the StoreKit backend over the stand-in) in each validation mode: launch, a purchase in progress, bought,
/// consumables counted and used, cancelled, failed with a message, an introductory offer used up by a subscription,
/// an upgrade, a refund, ask to buy, a family member's shared purchase, and an offline launch.
@Suite struct StoreModelTests {
    typealias F = FloristCatalog

    /// Waits (bounded) until the model shows what `condition` asks for.
    /// Refreshes `model` until `condition` holds: at least 200 times and for up to 60 s of wall-clock time, so a
    /// loaded machine (slow refreshes) does not run out of tries before the state arrives.
    static func until(
        _ model: StoreModel, sourceLocation: SourceLocation = #_sourceLocation,
        _ condition: @MainActor (StoreModel) -> Bool
    ) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(60)
        var tries = 0
        while tries < 200 || clock.now < deadline {
            await model.refresh()
            if await condition(model) { return }
            tries += 1
            try await Task.sleep(for: .milliseconds(5))
        }
        let groups = await model.subscriptionGroups.map { "\($0.name): \($0.status?.currentProductID ?? "none")" }
        let entitled = await model.entitled.sorted()
        let error = await model.errorMessage ?? "none"
        let message =
            "the model never showed the expected state after \(tries) refreshes; entitled: \(entitled), "
            + "groups: \(groups), error: \(error)"
        Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
    }

    @Test(arguments: ModeKind.allCases)
    func aCustomerBuysUsesUpgradesAndIsRefunded(_ mode: ModeKind) async throws {
        try await StoreHarness.run(mode, .storeKit) { world in
            try world.customer("ana")
            let backend = try await world.backend("ana")
            let store = Store(catalog: F.catalog, backend: backend, validation: try world.validation())
            let model = await StoreModel(store: store)

            // Launch: sections, levels, prices with the trial, nothing owned.
            await model.start()
            #expect(await model.consumables.map(\.id) == [F.installation])
            #expect(await model.nonConsumables.map(\.id) == [F.flowers, F.chocolates])
            #expect(await model.nonRenewables.map(\.id) == [F.monthPass])
            let group = try #require(await model.subscriptionGroups.first)
            #expect(group.name == "VIP" && group.products.map(\.id) == [F.gold, F.goldYearly, F.silver, F.bronze])
            #expect(group.status == nil)
            #expect(await model.priceText(for: F.flowers) == "$2.99")
            #expect(await model.priceText(for: F.gold) == "1 week free, then $9.99 / month")
            #expect(await model.priceText(for: F.goldYearly) == "1 week free, then $99.99 / year")
            #expect(await model.entitled.isEmpty)
            #expect(await model.owned.isEmpty)
            #expect(await model.errorMessage == nil)
            #expect(await model.origin == .verified)

            // A purchase in progress, then bought; observers hear of it.
            backend.customer.holdNextPurchase()
            let buying = Task { await model.purchase(F.flowers) }
            try await Self.until(model) { $0.purchaseState(of: F.flowers) == .inProgress }
            let changed = await ObservedChange { _ = model.entitled }
            backend.customer.release()
            await buying.value
            #expect(await model.purchaseState(of: F.flowers) == .purchased)
            #expect(await model.isOwned(F.flowers))
            #expect(await model.isEntitled(to: F.flowers))
            #expect(changed.happened)

            // Consumables counted, used, over-used with a message.
            await model.purchase(F.installation)
            await model.purchase(F.installation)
            #expect(await model.count(of: F.installation) == 2)
            await model.consume(F.installation)
            #expect(await model.count(of: F.installation) == 1)
            await model.consume(F.installation, quantity: 5)
            #expect(await model.error?.code == .insufficientBalance)
            #expect(await model.errorMessage == "You have none of these left.")
            await model.dismissError()
            #expect(await model.errorMessage == nil)

            // Cancelled at the sheet; refused by the store.
            backend.customer.willAct(.cancel)
            await model.purchase(F.chocolates)
            #expect(await model.purchaseState(of: F.chocolates) == .cancelled)
            world.simulator.injectFailure(.purchase, .purchaseNotAllowed)
            await model.purchase(F.chocolates)
            guard case .failed = await model.purchaseState(of: F.chocolates) else {
                Issue.record("state \(await model.purchaseState(of: F.chocolates))")
                return
            }
            #expect(await model.errorMessage == "Purchases are not allowed on this device.")
            world.simulator.injectFailure(.purchase, nil)
            await model.dismissError()

            // Silver, then an upgrade to gold: the trial is used up, the group shows gold.
            await model.purchase(F.silver)
            #expect(await model.subscriptionGroups.first?.status?.currentProductID == F.silver)
            #expect(await model.priceText(for: F.gold) == "$9.99 / month", "no trial once the group was subscribed")
            await model.purchase(F.gold)
            // The group follows the next snapshot, which may come a moment after the purchase's own answer.
            try await Self.until(model) { $0.subscriptionGroups.first?.status?.currentProductID == F.gold }
            #expect(await model.isEntitled(to: F.gold))
            #expect(await !model.isEntitled(to: F.silver))

            // Refunded: access goes.
            let flowers = try #require(await store.purchaseInfo(F.flowers)?.transactionID)
            try world.simulator.refund(flowers)
            try await Self.until(model) { !$0.isEntitled(to: F.flowers) }
            #expect(await !model.isOwned(F.flowers))
        }
    }

    @Test(arguments: ModeKind.allCases)
    func askToBuyFamilySharingAndAnOfflineLaunch(_ mode: ModeKind) async throws {
        try await StoreHarness.run(mode, .storeKit) { world in
            try world.customer("mum")
            try world.customer("kid", askToBuy: true)
            try world.simulator.joinFamily("smiths", account: "mum")
            try world.simulator.joinFamily("smiths", account: "kid")
            let kidBackend = try await world.backend("kid")
            let cache = MemoryStorePersistence()
            let kid = await StoreModel(
                store: Store(
                    catalog: F.catalog, backend: kidBackend, validation: try world.validation(), persistence: cache))
            await kid.start()

            // Ask to buy: pending until a parent approves, then purchased.
            await kid.purchase(F.chocolates)
            #expect(await kid.purchaseState(of: F.chocolates) == .pending)
            #expect(await !kid.isEntitled(to: F.chocolates))
            _ = try world.simulator.approve(try #require(world.simulator.pendingPurchases.first).id)
            // The purchase state follows the store's event and ownership the next snapshot: both come, in either order.
            try await Self.until(kid) { $0.purchaseState(of: F.chocolates) == .purchased && $0.isOwned(F.chocolates) }
            #expect(await kid.isOwned(F.chocolates))

            // Mum's shareable purchase reaches the kid: entitled, not owned.
            let mum = try await world.backend("mum")
            let mumStore = Store(catalog: F.catalog, backend: mum, validation: try world.validation())
            await mumStore.start()
            try await mumStore.purchase(F.flowers)
            try await Self.until(kid) { $0.isEntitled(to: F.flowers) }
            if mode != .appReceipt {  // a receipt does not say who bought a purchase
                #expect(await !kid.isOwned(F.flowers))
            }

            // Offline launch: the cache answers, with a message; the store confirms once back.
            kidBackend.customer.isOffline = true
            let offline = await StoreModel(
                store: Store(
                    catalog: F.catalog, backend: kidBackend, validation: try world.validation(), persistence: cache))
            await offline.start()
            #expect(await offline.isEntitled(to: F.chocolates))
            #expect(await offline.products.count == F.catalog.products.count)
            try await Self.until(offline) {
                $0.errorMessage == "The App Store cannot be reached. Check your connection and try again."
            }
            kidBackend.customer.isOffline = false
            await offline.restore()
            #expect(await offline.origin == .verified)
            try await Self.until(offline) { $0.errorMessage == nil }
            #expect(await offline.isEntitled(to: F.chocolates))
            #expect(await offline.isEntitled(to: F.flowers))
        }
    }
}

/// Whether a model property read in `read` changed after tracking began (Observation's own notification).
final class ObservedChange: @unchecked Sendable {
    private let lock = NSLock()
    private var changed = false

    @MainActor init(_ read: @MainActor () -> Void) {
        withObservationTracking(read) { [self] in lock.withLock { changed = true } }
    }

    var happened: Bool { lock.withLock { changed } }
}
