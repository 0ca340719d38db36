import ArgumentParser
import Foundation
import IAPKitCLI
import IAPTestSupport
import Testing

/// `iapkit catalog` on the shared .storekit files.
@Suite(.enabled(if: SharedTestData.isAvailable, "\(SharedTestData.skipMessage)"))
struct CatalogCommandTests {
    @Test func jsonListsEveryProductWithTheRequiredKeys() throws {
        let output = CapturedOutput()
        let command = try CatalogCommand.parse([
            SharedTestData.path("storekit/StoreHelper-SampleProducts.storekit"), "--storefront", "GBR", "--json",
        ])
        #expect(command.execute(output: output) == 0)
        let object = try #require(try output.jsonObjects().first)
        #expect(object["storefront"] as? String == "GBR")
        let products = try #require(object["products"] as? [[String: Any]])
        #expect(products.count == 11)
        for product in products {
            for key in ["id", "type", "displayName", "price", "displayPrice"] {
                #expect(product.keys.contains(key), "missing \(key)")
            }
        }
        let gold = try #require(products.first { $0["id"] as? String == "com.rarcher.subscription.vip.gold" })
        #expect(gold["type"] as? String == "autoRenewable")
        #expect(gold["subscriptionGroup"] as? String == "8126C4BB")
        #expect(gold["level"] as? Int == 1)
        #expect(gold["period"] as? String == "P1M")
        #expect(gold["price"] as? String == "19.99")
        #expect(gold["displayPrice"] as? String == "£19.99")
        let flowers = try #require(products.first { $0["id"] as? String == "com.rarcher.nonconsumable.flowers.large" })
        #expect(flowers["type"] as? String == "nonConsumable")
        #expect(flowers["description"] as? String == "Lovely large flowers")  // the en_GB localization
    }

    @Test func textGroupsProductsByTypeAndGroup() throws {
        let output = CapturedOutput()
        let command = try CatalogCommand.parse([
            SharedTestData.path("storekit/RevenueCat-UnitTestsConfiguration.storekit")
        ])
        #expect(command.execute(output: output) == 0)
        let text = output.lines.joined(separator: "\n")
        #expect(text.contains("storefront USA (USD)"))
        #expect(text.contains("Subscription group subscription_group_1 (7096FF06)"))
        #expect(text.contains("introductory offer: free for 1 x P3M"))
        #expect(text.contains("com.revenuecat.non_renewable  Non Renewable Subscription  $1.69"))
    }

    @Test func aBrokenFileExitsOneWithItsCode() throws {
        let output = CapturedOutput()
        #expect(try CatalogCommand.parse(["/nonexistent.storekit"]).execute(output: output) == 1)
        #expect(output.diagnostics.first?.contains("[unreadableFile]") == true)
        #expect(throws: (any Error).self) { try CatalogCommand.parse(["x.storekit", "--storefront", "Narnia"]) }
    }
}
