import Foundation
import IAPSimulator
import IAPStoreKit
import IAPTestSupport
import Testing

/// A store written the way Apple's documentation and sample code write one against StoreKit 2, compiled here
/// against IAPStoreKit with nothing changed but the import. Its listener is a detached task, as in Apple's sample,
/// so the tests make their session the process default and run one at a time.
@MainActor final class DocumentedStore {
    enum StoreFailure: Error { case failedVerification }

    private(set) var products: [Product] = []
    private(set) var purchasedIdentifiers = Set<String>()
    private(set) var updatesSeen: [UInt64] = []
    var updateListenerTask: Task<Void, any Error>?

    init() { updateListenerTask = listenForTransactions() }

    deinit { updateListenerTask?.cancel() }

    func listenForTransactions() -> Task<Void, any Error> {
        Task.detached {
            for await result in Transaction.updates {
                do {
                    let transaction = try await self.checkVerified(result)
                    await self.record(update: transaction.id)
                    await self.updateCustomerProductStatus()
                    await transaction.finish()
                } catch {
                    print("Transaction failed verification")
                }
            }
        }
    }

    func record(update id: UInt64) { updatesSeen.append(id) }

    func requestProducts(_ identifiers: [String]) async throws {
        products = try await Product.products(for: identifiers)
    }

    func purchase(_ product: Product) async throws -> Transaction? {
        let result = try await product.purchase()
        switch result {
        case .success(let verification):
            let transaction = try checkVerified(verification)
            await updateCustomerProductStatus()
            await transaction.finish()
            return transaction
        case .userCancelled, .pending:
            return nil
        @unknown default:
            return nil
        }
    }

    func checkVerified<T>(_ result: VerificationResult<T>) throws -> T {
        switch result {
        case .unverified:
            throw StoreFailure.failedVerification
        case .verified(let safe):
            return safe
        }
    }

    func updateCustomerProductStatus() async {
        var purchased = Set<String>()
        for await result in Transaction.currentEntitlements {
            do {
                let transaction = try checkVerified(result)
                switch transaction.productType {
                case .consumable: break
                default: purchased.insert(transaction.productID)
                }
            } catch {
                print("unverified entitlement")
            }
        }
        purchasedIdentifiers = purchased
    }
}

@Suite(.serialized) struct DocumentedStoreTests {
    typealias F = FloristCatalog

    /// A session on a fresh store selling the florist catalog, made the process default.
    static func session(account: String = "ana") throws -> StoreKitSession {
        let simulator = try AppStoreSimulator(
            catalog: F.catalog, configuration: SimulatorConfiguration(bundleID: "com.example.florist"),
            pki: SimulatorTestKeys.pki)
        let session = try StoreKitSession(simulator: simulator, account: account)
        session.makeDefault()
        return session
    }

    /// Waits (at most 5 s) until `condition` holds.
    static func eventually(_ condition: @Sendable () async -> Bool) async throws {
        for _ in 0..<500 {
            if await condition() { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("the condition never held")
    }

    @Test func productsLoadAndAPurchaseIsVerifiedEntitledAndFinished() async throws {
        let session = try Self.session()
        defer { StoreKitSession.clearDefault() }
        let store = await DocumentedStore()
        try await store.requestProducts([F.flowers, F.gold, F.flowers, "com.example.unknown"])
        let products = await store.products
        #expect(products.map(\.id).sorted() == [F.flowers, F.gold].sorted(), "duplicates and unknowns left out")
        let flowers = try #require(products.first { $0.id == F.flowers })
        #expect(flowers.type == .nonConsumable && flowers.subscription == nil)
        let gold = try #require(products.first { $0.id == F.gold })
        #expect(gold.type == .autoRenewable && gold.subscription?.subscriptionGroupID != nil)

        let transaction = try #require(try await store.purchase(flowers))
        #expect(transaction.productID == F.flowers && transaction.ownershipType == .purchased)
        #expect(transaction.purchasedQuantity == 1 && transaction.revocationDate == nil)
        #expect(await store.purchasedIdentifiers == [F.flowers])
        // Finished: not unfinished any more.
        var unfinished: [UInt64] = []
        for await result in Transaction.unfinished { unfinished.append(result.unsafePayloadValue.id) }
        #expect(!unfinished.contains(transaction.id))
        let latest = try #require(await Transaction.latest(for: F.flowers))
        #expect(try latest.payloadValue.id == transaction.id)
        #expect(latest.jwsRepresentation.split(separator: ".").count == 3)
        _ = session
    }

    @Test func updatesBringOtherDevicesPurchasesAndRefundsButNotThisDevicesOwn() async throws {
        let session = try Self.session()
        defer { StoreKitSession.clearDefault() }
        let store = await DocumentedStore()
        try await store.requestProducts([F.flowers, F.silver])
        let flowers = try #require(await store.products.first { $0.id == F.flowers })
        let mine = try #require(try await store.purchase(flowers))
        // Another device of the same account buys silver: it arrives through updates.
        let other = try session.simulator.addDevice(account: "ana")
        let theirs = try #require(
            try session.simulator.purchase(F.silver, account: "ana", device: other).transaction)
        try await Self.eventually { await store.purchasedIdentifiers.contains(F.silver) }
        let seen = await store.updatesSeen
        #expect(seen.contains(UInt64(theirs.transactionID)!))
        #expect(!seen.contains(mine.id), "the purchasing device's own purchase is not an update")

        // A refund revokes: the revoked transaction arrives, and the product leaves the entitlements.
        _ = try session.simulator.refund(String(mine.id))
        try await Self.eventually { await !store.purchasedIdentifiers.contains(F.flowers) }
        var entitled: [String] = []
        for await result in Transaction.currentEntitlements { entitled.append(result.unsafePayloadValue.productID) }
        #expect(!entitled.contains(F.flowers))
    }

    @Test func askToBuyAnswersPendingAndTheApprovalArrivesAsAnUpdate() async throws {
        let session = try Self.session()
        defer { StoreKitSession.clearDefault() }
        try session.simulator.updateAccount("ana", askToBuy: true)
        let store = await DocumentedStore()
        try await store.requestProducts([F.flowers])
        let flowers = try #require(await store.products.first)
        let result = try await flowers.purchase()
        guard case .pending = result else {
            Issue.record("ask to buy answers .pending, not \(result)")
            return
        }
        #expect(await store.purchasedIdentifiers.isEmpty)
        let pending = try #require(session.simulator.pendingPurchases.first)
        _ = try session.simulator.approve(pending.id)
        try await Self.eventually { await store.purchasedIdentifiers == [F.flowers] }
    }

    @Test func aDocumentFromAnotherAuthorityIsUnverified() async throws {
        // The device trusts the test PKI; a store signing with other keys is not believed.
        let rogue = try AppStoreSimulator(
            catalog: F.catalog, configuration: SimulatorConfiguration(bundleID: "com.example.florist"),
            pki: try SimulatorPKI(keys: SimulatorTestKeys.otherKeys))
        let session = try Self.session()
        defer { StoreKitSession.clearDefault() }
        try rogue.createAccount("ana")
        let forged = try #require(try rogue.purchase(F.flowers, account: "ana").transaction)
        try await session.run {
            let result = try #require(await session.verify(forged.jws))
            guard case .unverified(_, let error) = result else {
                Issue.record("a document of another authority verified")
                return
            }
            #expect(error == .invalidCertificateChain || error == .invalidSignature)
            #expect(throws: VerificationResult<Transaction>.VerificationError.self) { try result.payloadValue }
        }
    }
}
