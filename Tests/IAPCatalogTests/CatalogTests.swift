import Foundation
import IAPCatalog
import IAPTestSupport
import Testing

/// The shared `.storekit` files load with the right products, groups, levels and offers.
@Suite(.enabled(if: SharedTestData.isAvailable, "\(SharedTestData.skipMessage)"))
struct StoreKitCorpusTests {
    static func load(_ name: String) throws -> Catalog {
        try Catalog.load(contentsOfFile: SharedTestData.path("storekit/\(name)"))
    }

    @Test func iapHelperVersion1() throws {
        let catalog = try Self.load("IAPHelper-TestHostConfig.storekit")
        #expect(catalog.formatVersion == "1.0")
        #expect(catalog.products.count == 5)
        #expect(catalog.subscriptionGroups.isEmpty)
        let flowers = try #require(catalog.product("com.rarcher.flowers-large"))
        #expect(flowers.kind == .nonConsumable)
        #expect(flowers.price == Decimal(string: "1.99"))
        #expect(flowers.displayName(for: "en_GB") == "Flowers Large")
        #expect(flowers.localizations.map(\.locale) == ["en_US", "en_GB"])
        #expect(Set(catalog.products.compactMap(\.kind)) == [.consumable, .nonConsumable])
        #expect(catalog.settings.askToBuyEnabled == false)
        #expect(catalog.settings.storefront == nil)
    }

    @Test func storeHelperVersion2() throws {
        let catalog = try Self.load("StoreHelper-SampleProducts.storekit")
        #expect(catalog.formatVersion == "2.0")
        #expect(catalog.products.filter { $0.kind != .autoRenewable }.count == 5)
        #expect(catalog.products.filter { $0.kind == .autoRenewable }.count == 6)
        #expect(catalog.subscriptionGroups.map(\.name) == ["VIP", "Standard"])
        let vip = try #require(catalog.subscriptionGroups.first)
        #expect(vip.productIDs.first == "com.rarcher.subscription.vip.gold")
        let levels = vip.productIDs.compactMap { catalog.product($0)?.subscription?.level }
        #expect(levels == levels.sorted())
        let gold = try #require(catalog.product("com.rarcher.subscription.vip.gold"))
        #expect(gold.subscription?.period == SubscriptionPeriod(value: 1, unit: .month))
        #expect(gold.price == Decimal(string: "19.99"))
        #expect(catalog.settings.storefront == "USA")
        #expect(catalog.settings.locale == "en_US")
    }

    @Test func revenueCatVersion5WithOffersAndNonRenewing() throws {
        let catalog = try Self.load("RevenueCat-UnitTestsConfiguration.storekit")
        #expect(catalog.formatVersion == "5.0")
        #expect(catalog.products.filter { [.consumable, .nonConsumable].contains($0.kind) }.count == 2)
        #expect(catalog.product("com.revenuecat.non_renewable")?.kind == .nonRenewable)
        #expect(catalog.subscriptionGroups.map(\.id) == ["7096FF06", "4BB746BD"])
        #expect(catalog.products.filter { $0.kind == .autoRenewable }.count == 4)
        let monthly = try #require(catalog.product("com.revenuecat.monthly_4.99.1_week_intro")?.subscription)
        #expect(monthly.period == SubscriptionPeriod(value: 1, unit: .month))
        #expect(monthly.introductoryOffer?.paymentMode == .freeTrial)
        #expect(monthly.introductoryOffer?.period == SubscriptionPeriod(value: 3, unit: .month))
        #expect(
            monthly.promotionalOffers.map(\.id) == [
                "com.revenuecat.monthly_4.99.1_week_intro.year_discount",
                "com.revenuecat.monthly_4.99.1_week_intro.pay_as_you_go",
            ])
        #expect(monthly.promotionalOffers.map(\.paymentMode) == [.payUpFront, .payAsYouGo])
        #expect(monthly.promotionalOffers.map(\.price) == [Decimal(string: "40.99"), Decimal(string: "20.15")])
        #expect(monthly.promotionalOffers.map(\.numberOfPeriods) == [1, 2])
        let annual = try #require(catalog.product("com.revenuecat.annual_39.99.2_week_intro")?.subscription)
        #expect(annual.introductoryOffer?.period == SubscriptionPeriod(value: 2, unit: .week))
        #expect(catalog.product("lifetime")?.familyShareable == true)
        #expect(catalog.settings.storefront == "USA")
        #expect(catalog.settings.timeRate == 0)
    }
}

/// Broken configurations get errors naming file, key and reason; Products.plist forms; periods and prices.
struct CatalogBehaviourTests {
    func load(_ json: String) throws -> Catalog { try Catalog.load(Data(json.utf8), fileName: "Test.storekit") }

    @Test(arguments: [
        (#"{"products":[{"type":"Consumable"}]}"#, "missingKey", "products[0].productID"),
        (#"{"products":[{"productID":"a","type":"Gift"}]}"#, "invalidValue", "products[0].type"),
        (
            #"{"products":[{"productID":"a","type":"Consumable","displayPrice":"free"}]}"#, "invalidValue",
            "products[0].displayPrice"
        ),
        (
            #"{"products":[{"productID":"a","type":"Consumable","familyShareable":1}]}"#, "invalidValue",
            "products[0].familyShareable"
        ),
        (
            #"{"products":[{"productID":"a","type":"Consumable"},{"productID":"a","type":"NonConsumable"}]}"#,
            "duplicateProduct", ""
        ),
        (
            #"{"subscriptionGroups":[{"id":"g","subscriptions":[{"productID":"s","type":"RecurringSubscription","recurringSubscriptionPeriod":"monthly"}]}]}"#,
            "invalidValue", "subscriptionGroups[0].subscriptions[0].recurringSubscriptionPeriod"
        ),
        (#"{"version":{"major":9,"minor":0}}"#, "unsupportedVersion", "version"),
        (#"{"products":{}}"#, "invalidValue", "products"),
        (#"{"products":[ "#, "malformedFile", ""),
    ])
    func brokenConfigurationsNameFileKeyAndReason(json: String, code: String, keyPath: String) {
        #expect {
            try load(json)
        } throws: { error in
            let error = error as! CatalogError
            return error.code.rawValue == code && error.keyPath == keyPath && error.reason.hasPrefix("Test.storekit")
        }
    }

    @Test func productsPlistFlatList() throws {
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><array><string>com.example.flowers</string><string>com.example.chocolates</string></array></plist>
            """
        let catalog = try Catalog.load(Data(plist.utf8), fileName: "Products.plist")
        #expect(catalog.products.map(\.id) == ["com.example.flowers", "com.example.chocolates"])
        #expect(catalog.products.allSatisfy { $0.kind == nil })
        #expect(catalog.formatVersion == nil)
    }

    @Test func productsPlistByTypeWithGroupsInServiceLevelOrder() throws {
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
              <key>Consumable</key><array><string>com.example.plant-installation</string></array>
              <key>Non-Consumable</key><array><string>com.example.flowers</string></array>
              <key>Subscriptions</key><array><dict>
                <key>Group</key><string>vip</string>
                <key>Products</key><array><string>vip.gold</string><string>vip.silver</string><string>vip.bronze</string></array>
              </dict></array>
            </dict></plist>
            """
        let catalog = try Catalog.load(Data(plist.utf8), fileName: "Products.plist")
        #expect(catalog.product("com.example.plant-installation")?.kind == .consumable)
        #expect(catalog.product("com.example.flowers")?.kind == .nonConsumable)
        #expect(catalog.subscriptionGroups.first?.productIDs == ["vip.gold", "vip.silver", "vip.bronze"])
        #expect(catalog.product("vip.bronze")?.subscription?.level == 3)
        // The convention gives no period: it stays unknown rather than guessed.
        #expect(catalog.product("vip.gold")?.subscription?.period == nil)
    }

    @Test func badPlistsAreRefused() {
        #expect(throws: CatalogError.self) { try Catalog.load(Data("not a plist".utf8), fileName: "Products.plist") }
        let wrong = #"<?xml version="1.0"?><plist version="1.0"><array><integer>1</integer></array></plist>"#
        #expect(throws: CatalogError.self) { try Catalog.load(Data(wrong.utf8), fileName: "Products.plist") }
    }

    @Test func periodsParseAndAdvanceByTheCalendar() {
        #expect(SubscriptionPeriod(iso8601: "P1W") == SubscriptionPeriod(value: 1, unit: .week))
        #expect(SubscriptionPeriod(iso8601: "P3D")?.unit == .day)
        #expect(SubscriptionPeriod(iso8601: "P6M")?.value == 6)
        for bad in ["", "P", "1M", "PM", "P0M", "P1X", "P-1M", "P1M2"] {
            #expect(SubscriptionPeriod(iso8601: bad) == nil)
        }
        let january31 = Date(timeIntervalSince1970: 1_769_817_600)  // 2026-01-31T00:00:00Z
        let month = SubscriptionPeriod(value: 1, unit: .month)
        #expect(month.advance(january31) == Date(timeIntervalSince1970: 1_772_236_800))  // 2026-02-28
        #expect(
            SubscriptionPeriod(value: 1, unit: .year).advance(january31).timeIntervalSince(january31) == 365 * 86_400)
        #expect(
            SubscriptionPeriod(value: 2, unit: .week).advance(january31).timeIntervalSince(january31) == 14 * 86_400)
    }

    @Test func pricesAreFormattedInTheStorefrontNeverConverted() throws {
        let price = try #require(Decimal(string: "4.99"))
        #expect(Storefront.named("GBR")?.format(price) == "£4.99")
        #expect(Storefront.named("USA")?.format(price) == "$4.99")
        #expect(Storefront.named("fra")?.format(price).hasPrefix("4,99") == true)
        #expect(Storefront.named("JPN")?.currency == "JPY")
        #expect(Storefront.named("XYZ") == nil)
    }
}

/// A `.storekit` group has an id and a name; people write the name (`VIP`), the store and the engine key by the id.
@Suite struct GroupLookupTests {
    @Test func aGroupIsFoundByItsIdOrItsName() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Examples/Florist/Florist.storekit").path
        let catalog = try Catalog.load(contentsOfFile: path)
        #expect(catalog.group(idOrName: "21000001")?.name == "VIP")
        #expect(catalog.group(idOrName: "VIP")?.id == "21000001")
        #expect(catalog.group(idOrName: "Gold") == nil)
    }
}
