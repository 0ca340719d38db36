import Crypto
import Foundation
import IAPCatalog
import IAPCore
import IAPServerAPI
import IAPSimulator
import IAPStoreKit
import IAPTestSupport
import IAPTrust
import Testing

/// Where a session's store is: in this process, or behind a real `iapkit serve` on a loopback socket.
enum SessionPlace: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case inProcess, overHTTP
    var testDescription: String { rawValue }
}

/// What a test drives through a `StoreKitSession` (as through Xcode's `SKTestSession`), and the parts of StoreKit's API
/// that answer it: storefront changes, purchases started on the App Store, refund requests, offer codes, ask to buy,
/// interrupted purchases, injected failures, the purchase options that carry offers, and the lists answered from the
/// device while offline. Every test runs twice: on a session over the store in process, and on one over
/// `iapkit serve`'s `/simulator`. Each test binds its own session to its task, so they run in parallel.
@Suite struct StoreKitSessionTests {
    typealias F = FloristCatalog
    static let bundleID = "com.example.florist"
    static let credentials = ServerAPICredentials(
        keyID: "OFFERKEY01", issuerID: "5b1c7a2e-1111-4222-8333-944455556666", bundleID: bundleID,
        privateKey: TestJWS.key("offer signing key"))

    /// A fresh florist store whose gold subscription also has a win-back offer, and which knows the developer's
    /// offer-signing key.
    static func store() throws -> AppStoreSimulator {
        var catalog = F.catalog
        let gold = try #require(catalog.products.firstIndex { $0.id == F.gold })
        catalog.products[gold].subscription?.winBackOffers = [
            SubscriptionOffer(
                id: "missyou", paymentMode: .payUpFront, period: SubscriptionPeriod(value: 3, unit: .month),
                numberOfPeriods: 1, price: 9.99)
        ]
        catalog.products[gold].subscription?.promotionalOffers = [
            SubscriptionOffer(
                id: "comeback", paymentMode: .payAsYouGo, period: SubscriptionPeriod(value: 1, unit: .month),
                numberOfPeriods: 2, price: 4.99)
        ]
        var configuration = SimulatorConfiguration(
            bundleID: bundleID, start: Date(timeIntervalSince1970: 1_767_225_600))
        configuration.serverAPIKeys = [credentials.keyID: credentials.privateKey.publicKey]
        configuration.serverAPIIssuerID = credentials.issuerID
        return try AppStoreSimulator(catalog: catalog, configuration: configuration, pki: SimulatorTestKeys.pki)
    }

    /// Runs `body` with StoreKit's calls reaching a session of `account` on a fresh store (``store()``), in process
    /// or through a server serving that store for the length of `body`.
    static func withSession(
        _ place: SessionPlace, account: String = "ana", roots: TrustStore? = nil,
        _ body: @Sendable (StoreKitSession, AppStoreSimulator) async throws -> Void
    ) async throws {
        let simulator = try store()
        switch place {
        case .inProcess:
            let session = try StoreKitSession(simulator: simulator, account: account)
            try await session.run { try await body(session, simulator) }
        case .overHTTP:
            try await StoreHarness.serve(simulator) { url in
                let session = try await StoreKitSession.connect(
                    to: url, account: account, roots: roots, timeout: StoreHarness.requestLimit)
                try await session.run { try await body(session, simulator) }
            }
        }
    }

    /// The developer's server, signing offers on the store's clock.
    static func signer(_ simulator: AppStoreSimulator) -> OfferSigner {
        OfferSigner(credentials: credentials, clock: { (try? simulator.now) ?? .distantPast })
    }

    static func product(_ id: String) async throws -> Product {
        try #require(try await Product.products(for: [id]).first)
    }

    /// The verified transaction of a purchase that succeeded.
    static func bought(_ result: Product.PurchaseResult) throws -> Transaction {
        guard case .success(.verified(let transaction)) = result else {
            Issue.record("the purchase answered \(result)")
            throw StoreKitError.unknown
        }
        return transaction
    }

    @Test(arguments: SessionPlace.allCases)
    func aStorefrontChangeIsAnnouncedAndPricesFollowIt(_ place: SessionPlace) async throws {
        try await Self.withSession(place) { session, simulator in
            #expect(await Storefront.current?.countryCode == "USA")
            #expect(await Storefront.current?.id == "143441")
            let dollars = try await Self.product(F.flowers).displayPrice
            var changes = Storefront.updates.makeAsyncIterator()
            try await session.setStorefront("FRA")
            let changed = await changes.next()
            #expect(changed?.countryCode == "FRA")
            #expect(await Storefront.current == changed)
            let euros = try await Self.product(F.flowers).displayPrice
            #expect(euros != dollars && euros.contains("€"), "\(euros)")
        }
    }

    @Test(arguments: SessionPlace.allCases)
    func aPurchaseStartedOnTheAppStoreReachesTheAppAndCompletes(_ place: SessionPlace) async throws {
        try await Self.withSession(place) { session, _ in
            // Started before the app listens: StoreKit holds it for the first listener.
            try await session.customerStartsPurchaseOnAppStore(F.flowers)
            var intents = PurchaseIntent.intents.makeAsyncIterator()
            let intent = try #require(await intents.next())
            #expect(intent.id == F.flowers && intent.offer == nil)
            let transaction = try Self.bought(try await intent.product.purchase())
            #expect(transaction.productID == F.flowers)
        }
    }

    @Test(arguments: SessionPlace.allCases)
    func refundRequestsAreSubmittedCancelledOrRefusedAsDuplicates(_ place: SessionPlace) async throws {
        try await Self.withSession(place) { session, simulator in
            let flowers = try Self.bought(try await Self.product(F.flowers).purchase())
            await flowers.finish()
            session.cancelNextSheet()
            #expect(try await flowers.beginRefundRequest() == .userCancelled)
            #expect(try await Transaction.beginRefundRequest(for: flowers.id) == .success)
            await #expect(throws: Transaction.RefundRequestError.duplicateRequest) {
                try await flowers.beginRefundRequest()
            }
            // Apple grants it: the revocation arrives through updates and the entitlement goes.
            var updates = Transaction.updates.makeAsyncIterator()
            try simulator.decideRefund(String(flowers.id), grant: true)
            let revoked = try #require(await updates.next())
            #expect(revoked.unsafePayloadValue.id == flowers.id && revoked.unsafePayloadValue.revocationDate != nil)
            var entitled: [String] = []
            for await result in Transaction.currentEntitlements { entitled.append(result.unsafePayloadValue.productID) }
            #expect(entitled.isEmpty)
            // No screen for managing subscriptions: a typed error, not a silent success.
            await #expect(throws: StoreKitError.self) { try await AppStore.showManageSubscriptions() }
        }
    }

    @Test(arguments: SessionPlace.allCases)
    func askToBuyInterruptedPurchasesAndInjectedFailures(_ place: SessionPlace) async throws {
        try await Self.withSession(place) { session, _ in
            let flowers = try await Self.product(F.flowers)
            var updates = Transaction.updates.makeAsyncIterator()

            try await session.setAskToBuyEnabled(true)
            #expect(try await session.askToBuyEnabled)
            guard case .pending = try await flowers.purchase() else { throw StoreKitError.unknown }
            try await session.declineAskToBuy()
            #expect(await Transaction.latest(for: F.flowers) == nil, "declined: nothing issued")
            guard case .pending = try await flowers.purchase() else { throw StoreKitError.unknown }
            try await session.approveAskToBuy()
            #expect(try #require(await updates.next()).unsafePayloadValue.productID == F.flowers)
            try await session.setAskToBuyEnabled(false)

            let chocolates = try await Self.product(F.chocolates)
            session.interruptNextPurchase()
            guard case .pending = try await chocolates.purchase() else { throw StoreKitError.unknown }
            try await session.resolveInterruptedPurchases()
            #expect(try #require(await updates.next()).unsafePayloadValue.productID == F.chocolates)

            session.cancelNextSheet()
            guard case .userCancelled = try await Self.product(F.installation).purchase() else {
                throw StoreKitError.unknown
            }
            try await session.failOperation(.purchase, with: .ineligibleForOffer)
            await #expect(throws: Product.PurchaseError.ineligibleForOffer) {
                try await Self.product(F.installation).purchase()
            }
            try await session.failOperation(.purchase, with: nil)
            try await session.failOperation(.loadProducts, with: .networkError)
            await #expect(throws: StoreKitError.self) { try await Product.products(for: [F.gold]) }
        }
    }

    @Test(arguments: SessionPlace.allCases)
    func offersTravelAsPurchaseOptions(_ place: SessionPlace) async throws {
        try await Self.withSession(place) { session, simulator in
            let signer = Self.signer(simulator)
            let gold = try await Self.product(F.gold)
            let subscription = try #require(gold.subscription)
            #expect(subscription.winBackOffers.map(\.id) == ["missyou"])
            #expect(subscription.promotionalOffers.map(\.id) == ["comeback"])

            // The developer's server decides the introductory offer: here it says no.
            let app = try await AppTransaction.shared.unsafePayloadValue.appTransactionID
            let noTrial = try signer.introductoryOfferEligibility(
                productID: F.gold, allowIntroductoryOffer: false, transactionID: app)
            let first = try Self.bought(
                try await gold.purchase(options: [.introductoryOfferEligibility(compactJWS: noTrial)]))
            #expect(first.offer == nil)

            // Lapsed, the customer can come back with a win-back offer, or a promotional one the server signed.
            try simulator.setAutoRenew(account: session.account, group: F.vipGroup, enabled: false)
            try await session.advanceClock(by: 40 * 86_400)
            let winBack = try #require(subscription.winBackOffers.first)
            let back = try Self.bought(try await gold.purchase(options: [.winBackOffer(winBack)]))
            #expect(back.offerType == .winBack && back.offerID == "missyou")

            try simulator.setAutoRenew(account: session.account, group: F.vipGroup, enabled: false)
            try await session.advanceClock(by: 100 * 86_400)
            let jws = try signer.promotionalOfferV2(
                productID: F.gold, offerID: "comeback", transactionID: String(back.originalID))
            let promoted = try Self.bought(
                try await gold.purchase(
                    options: Set(Product.PurchaseOption.promotionalOffer("comeback", compactJWS: jws))))
            #expect(promoted.offerType == .promotional && promoted.offerID == "comeback")
        }
    }

    @Test(arguments: SessionPlace.allCases)
    func offlineTheDeviceAnswersTheListsItKeeps(_ place: SessionPlace) async throws {
        try await Self.withSession(place) { session, _ in
            let flowers = try Self.bought(try await Self.product(F.flowers).purchase())
            await flowers.finish()
            session.isOffline = true
            await #expect(throws: StoreKitError.self) { try await Product.products(for: [F.flowers]) }
            var all: [UInt64] = []
            for await result in Transaction.all { all.append(result.unsafePayloadValue.id) }
            #expect(all == [flowers.id], "the device keeps what the store handed it")
        }
    }
}
