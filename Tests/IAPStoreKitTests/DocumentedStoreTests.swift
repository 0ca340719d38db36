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

/// Every test here makes its session the process default (the documented store listens from a detached task), so
/// they run one at a time: the suites are nested in one serialized suite.
@Suite(.serialized) enum StandInTests {}

extension StandInTests {
    @Suite struct DocumentedStoreTests {
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
            let payload = try JSONSerialization.jsonObject(with: latest.payloadData) as? [String: Any]
            #expect(payload?["transactionId"] as? String == String(transaction.id))
            #expect(!latest.headerData.isEmpty && !latest.signatureData.isEmpty)
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
            let other = try session.local.addDevice(account: "ana")
            let theirs = try #require(
                try session.local.purchase(F.silver, account: "ana", device: other).transaction)
            try await Self.eventually { await store.purchasedIdentifiers.contains(F.silver) }
            let seen = await store.updatesSeen
            #expect(seen.contains(UInt64(theirs.transactionID)!))
            #expect(!seen.contains(mine.id), "the purchasing device's own purchase is not an update")

            // A refund revokes: the revoked transaction arrives, and the product leaves the entitlements.
            _ = try session.local.refund(String(mine.id))
            try await Self.eventually { await !store.purchasedIdentifiers.contains(F.flowers) }
            var entitled: [String] = []
            for await result in Transaction.currentEntitlements { entitled.append(result.unsafePayloadValue.productID) }
            #expect(!entitled.contains(F.flowers))
        }

        @Test func askToBuyAnswersPendingAndTheApprovalArrivesAsAnUpdate() async throws {
            let session = try Self.session()
            defer { StoreKitSession.clearDefault() }
            try session.local.updateAccount("ana", askToBuy: true)
            let store = await DocumentedStore()
            try await store.requestProducts([F.flowers])
            let flowers = try #require(await store.products.first)
            let result = try await flowers.purchase()
            guard case .pending = result else {
                Issue.record("ask to buy answers .pending, not \(result)")
                return
            }
            #expect(await store.purchasedIdentifiers.isEmpty)
            let pending = try #require(session.local.pendingPurchases.first)
            _ = try session.local.approve(pending.id)
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
}

extension StandInTests {
    /// Subscriptions, the app transaction and the storefront, read as Apple's documentation reads them.
    @Suite struct DocumentedSubscriptionTests {
        typealias F = FloristCatalog

        @Test func aSubscriptionIsSubscribedThenExpiresWhenAutoRenewIsOff() async throws {
            let session = try DocumentedStoreTests.session()
            defer { StoreKitSession.clearDefault() }
            let gold = try #require(try await Product.products(for: [F.gold]).first)
            let subscription = try #require(gold.subscription)
            #expect(await subscription.isEligibleForIntroOffer == (subscription.introductoryOffer != nil))
            guard case .success(let verification) = try await gold.purchase() else {
                Issue.record("the purchase did not succeed")
                return
            }
            let transaction = try verification.payloadValue
            await transaction.finish()
            #expect(transaction.productType == .autoRenewable && transaction.expirationDate != nil)
            #expect(await subscription.isEligibleForIntroOffer == false, "a subscriber is not eligible any more")

            var statuses = try await subscription.status
            #expect(statuses.count == 1)
            let status = try #require(statuses.first)
            #expect(status.state == .subscribed)
            let renewal = try status.renewalInfo.payloadValue
            #expect(renewal.willAutoRenew && renewal.currentProductID == F.gold)
            #expect(renewal.originalTransactionID == transaction.originalID)
            #expect(try status.transaction.payloadValue.id == transaction.id)

            try session.local.setAutoRenew(account: "ana", group: subscription.subscriptionGroupID, enabled: false)
            try session.local.advance(by: 40 * 86_400)
            statuses = try await Product.SubscriptionInfo.status(for: subscription.subscriptionGroupID)
            let expired = try #require(statuses.first)
            #expect(expired.state == .expired)
            let ended = try expired.renewalInfo.payloadValue
            #expect(!ended.willAutoRenew && ended.expirationReason == .autoRenewDisabled)
            var entitled: [String] = []
            for await result in Transaction.currentEntitlements { entitled.append(result.unsafePayloadValue.productID) }
            #expect(!entitled.contains(F.gold))
        }

        @Test func theAppTransactionAndTheStorefrontAreThisDevicesAndSyncAnswers() async throws {
            let session = try DocumentedStoreTests.session()
            defer { StoreKitSession.clearDefault() }
            let app = try await AppTransaction.shared
            let payload = try app.payloadValue
            #expect(try payload.bundleID == session.local.configuration.bundleID)
            #expect(!payload.originalAppVersion.isEmpty && app.jwsRepresentation.split(separator: ".").count == 3)
            let storefront = try #require(await Storefront.current)
            #expect(storefront.countryCode == "USA" && storefront.id == "143441")
            try await AppStore.sync()
        }

        @Test func withoutASessionCallsFailAsAnUnreachableStoreAndSequencesAreEmpty() async throws {
            StoreKitSession.clearDefault()
            await #expect(throws: StoreKitError.self) { _ = try await Product.products(for: [F.flowers]) }
            var count = 0
            for await _ in Transaction.currentEntitlements { count += 1 }
            #expect(count == 0)
            #expect(await Storefront.current == nil)
        }
    }
}

extension StoreKitSession {
    /// The store in this process behind the session (every session of these tests has one).
    var local: AppStoreSimulator {
        get throws { try #require(simulator) }
    }
}
