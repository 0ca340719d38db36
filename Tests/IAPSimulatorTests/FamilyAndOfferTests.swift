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
private let day = SimulatorHarness.day
private let start = SimulatorHarness.start

@Suite("Simulator: family sharing")
struct FamilySharingTests {
    @Test func aFamilyMemberLosesAccessWhenThePurchaseIsRefunded() async throws {
        let h = try SimulatorHarness()
        try h.customer("mum")
        let kidDevice = try h.customer("kid")
        try h.store.joinFamily("smiths", account: "mum")
        try h.store.joinFamily("smiths", account: "kid")
        let gold = try #require(try h.store.purchase(F.gold, account: "mum").transaction)
        let flowers = try #require(try h.store.purchase(F.flowers, account: "mum").transaction)
        _ = try h.store.purchase(F.chocolates, account: "mum")  // not shareable

        let shared = try h.store.transactions(account: "kid")
        #expect(shared.map(\.payload.productID) == [F.gold, F.flowers])
        #expect(shared.allSatisfy { $0.payload.inAppOwnershipType == .familyShared })
        #expect(shared.allSatisfy { $0.payload.price == 0 })
        var kid = try h.store.view(account: "kid")
        #expect(kid.entitledProductIDs == [F.gold, F.flowers])
        #expect(kid.subscriptions[F.vipGroup]?.isFamilyShared == true)
        try await h.expectAgreement("kid")
        try await h.expectAgreement("mum")

        // Renewals reach the family too.
        try h.store.advance(by: 8 * day)
        #expect(try h.store.transactions(account: "kid").filter { $0.payload.productID == F.gold }.count == 2)
        try await h.expectAgreement("kid")

        // Mum gets the current period refunded: the family loses it with her.
        let current = try #require(try h.store.transactions(account: "mum").last { $0.payload.productID == F.gold })
        #expect(current.transactionID != gold.transactionID)
        try h.store.refund(current.transactionID)
        kid = try h.store.view(account: "kid")
        #expect(kid.entitledProductIDs == [F.flowers])
        try await h.expectAgreement("kid")
        try await h.expectAgreement("mum")
        #expect(h.notificationNames("mum").last == "REFUND")
        #expect(h.notificationNames("kid").last == "REVOKE")
        let revoked = try h.store.transactions(account: "kid").last { $0.payload.productID == F.gold }
        #expect(revoked?.payload.revocationType == .familyRevoke)

        // Leaving the family revokes the rest.
        try h.store.leaveFamily(account: "kid")
        #expect(try h.store.view(account: "kid").entitledProductIDs.isEmpty)
        try await h.expectAgreement("kid")
        let fromReceipt = try await h.snapshotFromReceipt("kid", device: kidDevice)
        #expect(fromReceipt.entitledProductIDs.isEmpty)
        #expect(flowers.payload.inAppOwnershipType == .purchased)
    }

    @Test func joiningLaterSharesWhatTheFamilyAlreadyHas() async throws {
        let h = try SimulatorHarness()
        try h.customer("dad")
        try h.customer("teen")
        try h.store.joinFamily("lee", account: "dad")
        _ = try h.store.purchase(F.flowers, account: "dad")
        _ = try h.store.purchase(F.silver, account: "dad")
        _ = try h.store.purchase(F.bronze, account: "teen")
        try h.store.joinFamily("lee", account: "teen")
        let teen = try h.store.view(account: "teen")
        #expect(teen.subscriptions[F.vipGroup]?.productID == F.silver, "the shared higher level wins")
        #expect(try h.store.view(account: "dad").subscriptions[F.vipGroup]?.productID == F.silver)
        try await h.expectAgreement("teen")
        try await h.expectAgreement("dad")
        #expect(
            (#expect(throws: SimulatorError.self) { try h.store.joinFamily("other", account: "teen") })?.code
                == .invalidState)
    }
}

@Suite("Simulator: offers")
struct OfferTests {
    static let promoKey = try! P256.Signing.PrivateKey(
        rawRepresentation: Array(SHA256.hash(data: Array("promotional-offer-key".utf8))))
    static let goldIndex = FloristCatalog.catalog.products.firstIndex { $0.id == F.gold }!

    static let catalog: Catalog = {
        var catalog = FloristCatalog.catalog
        let month = SubscriptionPeriod(value: 1, unit: .month)
        catalog.products[goldIndex].subscription?.promotionalOffers = [
            SubscriptionOffer(id: "comeback", paymentMode: .payAsYouGo, period: month, numberOfPeriods: 2, price: 4.99)
        ]
        catalog.products[goldIndex].subscription?.offerCodes = [
            SubscriptionOffer(id: "spring", paymentMode: .freeTrial, period: month, numberOfPeriods: 1)
        ]
        catalog.products[goldIndex].subscription?.winBackOffers = [
            SubscriptionOffer(id: "missyou", paymentMode: .payUpFront, period: month, numberOfPeriods: 3, price: 9.99)
        ]
        return catalog
    }()

    func harness() throws -> SimulatorHarness {
        try SimulatorHarness(catalog: Self.catalog) {
            $0.promotionalOfferKeys = ["KEY1": Self.promoKey.publicKey]
            $0.offerCodes = ["SPRING26": OfferCodeGrant(productID: F.gold, offerID: "spring")]
        }
    }

    func promo(
        _ h: SimulatorHarness, key: P256.Signing.PrivateKey = promoKey, timestamp: Int64? = nil,
        offer: String = "comeback"
    )
        throws -> PurchaseOptions
    {
        let signed = try PromotionalOffer.sign(
            key: key, bundleID: SimulatorHarness.bundleID, keyID: "KEY1", productID: F.gold, offerID: offer,
            appAccountToken: nil, nonce: UUID(uuidString: "4A0F7C3E-3C35-4C3E-9C1B-0F4E3A3D2B11")!,
            timestamp: timestamp ?? Int64(try h.store.now.timeIntervalSince1970 * 1000))
        return PurchaseOptions(offer: .promotional(signed))
    }

    @Test func introductoryOfferOncePerGroup() async throws {
        let h = try harness()
        try h.customer("ana")
        #expect(try h.store.products([F.bronze], account: "ana")[0].isEligibleForIntroductoryOffer)
        let trial = try #require(try h.store.purchase(F.bronze, account: "ana").transaction)
        #expect(trial.payload.offerType == .introductory)
        #expect(trial.payload.offerPeriod == "P1W")
        #expect(try h.store.products([F.gold], account: "ana")[0].isEligibleForIntroductoryOffer == false)
        try await h.expectAgreement("ana")
    }

    @Test func promotionalOffersNeedAValidSignatureAndAPastSubscription() async throws {
        let h = try harness()
        try h.customer("ana")
        // Never subscribed: not eligible (checked after the signature).
        #expect(
            (#expect(throws: SimulatorError.self) {
                try h.store.purchase(F.gold, account: "ana", options: try promo(h))
            })?
            .code == .ineligibleForOffer)
        _ = try h.store.purchase(F.gold, account: "ana")
        try h.store.setAutoRenew(account: "ana", group: F.vipGroup, enabled: false)
        try h.store.advance(by: 10 * day)

        let forged = try P256.Signing.PrivateKey(rawRepresentation: Array(SHA256.hash(data: Array("forger".utf8))))
        let attempts: [(PurchaseOptions, SimulatorError.Code)] = [
            (try promo(h, key: forged), .invalidOfferSignature),
            (
                try promo(h, timestamp: Int64((try h.store.now.timeIntervalSince1970 - 2 * day) * 1000)),
                .invalidOfferSignature
            ),
            (try promo(h, offer: "nope"), .invalidOfferIdentifier),
            (
                PurchaseOptions(
                    offer: .promotional(
                        PromotionalOffer(offerID: "", keyID: "", nonce: UUID(), timestamp: 0, signature: ""))),
                .missingOfferParameters
            ),
        ]
        for (options, code) in attempts {
            let error = #expect(throws: SimulatorError.self) {
                try h.store.purchase(F.gold, account: "ana", options: options)
            }
            #expect(error?.code == code)
        }
        let bought = try #require(try h.store.purchase(F.gold, account: "ana", options: try promo(h)).transaction)
        #expect(bought.payload.offerType == .promotional)
        #expect(bought.payload.offerIdentifier == "comeback")
        #expect(bought.payload.offerDiscountType == .payAsYouGo)
        // Pay as you go for two periods: the first renewal keeps the offer, the second does not.
        try h.store.advance(by: 62 * day)
        let periods = try h.store.transactions(account: "ana").suffix(3).map(\.payload.offerIdentifier)
        #expect(periods == ["comeback", "comeback", nil])
        #expect(h.notificationNames().contains("OFFER_REDEEMED/RESUBSCRIBE"))
        try await h.expectAgreement("ana")
    }

    @Test func offerCodesAndWinBackOffers() async throws {
        let h = try harness()
        try h.customer("ana")
        let redeemed = try h.store.redeemOfferCode("SPRING26", account: "ana")
        #expect(redeemed.payload.offerType == .offerCode)
        #expect(redeemed.payload.offerIdentifier == "spring")
        #expect(
            (#expect(throws: SimulatorError.self) { try h.store.redeemOfferCode("WINTER", account: "ana") })?.code
                == .invalidOfferIdentifier)
        // Win-back only once lapsed.
        let winBack = PurchaseOptions(offer: .winBack(offerID: "missyou"))
        #expect(
            (#expect(throws: SimulatorError.self) { try h.store.purchase(F.gold, account: "ana", options: winBack) })?
                .code
                == .ineligibleForOffer)
        try h.store.setAutoRenew(account: "ana", group: F.vipGroup, enabled: false)
        try h.store.advance(by: 40 * day)
        let renewal = try await h.jwsVerifier.verifyRenewalInfo(
            try h.store.renewalInfo(account: "ana", group: F.vipGroup))
        #expect(renewal.verifiedPayload?.eligibleWinBackOfferIDs == ["missyou"])
        let back = try #require(try h.store.purchase(F.gold, account: "ana", options: winBack).transaction)
        #expect(back.payload.offerType == .winBack)
        #expect(back.payload.expiresDate?.date == SubscriptionPeriod(value: 3, unit: .month).advance(try h.store.now))
        try await h.expectAgreement("ana")
        #expect(
            h.notificationNames() == [
                "OFFER_REDEEMED/INITIAL_BUY", "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "EXPIRED/VOLUNTARY",
                "OFFER_REDEEMED/RESUBSCRIBE",
            ])
    }
}
