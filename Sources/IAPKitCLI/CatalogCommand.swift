public import ArgumentParser
import Foundation
import IAPCatalog

/// `iapkit catalog FILE [--storefront GBR] [--json]`: the products of a `.storekit` file or `Products.plist`.
public struct CatalogCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "catalog",
        abstract: "List the products of a .storekit file or Products.plist by type and group, with localized prices.",
        discussion: """
            Prices are the configuration's, formatted in the storefront's currency and locale (never converted). The \
            storefront is --storefront, else the file's settings, else USA.
            """
    )

    @Argument(help: "A .storekit configuration file or a Products.plist.")
    var file: String

    @Option(help: "The storefront to show prices in (three-letter country code, e.g. GBR).")
    var storefront: String?

    @Flag(help: "Print one JSON object with a products array.")
    var json = false

    public init() {}

    public func validate() throws {
        if let storefront, Storefront.named(storefront) == nil {
            throw ValidationError("Unknown storefront \(storefront); use a three-letter code such as USA, GBR, FRA.")
        }
    }

    public func run() async throws {
        let status = execute(output: StandardOutput())
        if status != 0 { throw ExitCode(status) }
    }

    /// Runs the command, writing to `output`. Returns the exit status: 0, or 1 when the file cannot be read.
    public func execute(output: some CommandOutput) -> Int32 {
        let catalog: Catalog
        do {
            catalog = try Catalog.load(contentsOfFile: file)
        } catch {
            output.diagnostic("error: \(error.reason) [\(error.code)]")
            return 1
        }
        let code = storefront ?? catalog.settings.storefront ?? "USA"
        let store = Storefront.named(code) ?? Storefront.named("USA")!
        // Names in the storefront's language when one is asked for, else in the file's own locale.
        let locale = storefront == nil ? (catalog.settings.locale ?? store.locale) : store.locale
        let reports = catalog.products.map {
            CatalogProductReport($0, catalog: catalog, storefront: store, locale: locale)
        }
        if json {
            output.line(
                JSONLine.encode(
                    CatalogReport(
                        file: file, storefront: store.countryCode, currency: store.currency,
                        formatVersion: catalog.formatVersion, products: reports)))
            return 0
        }
        output.line("\(file): \(catalog.products.count) products, storefront \(store.countryCode) (\(store.currency))")
        let sections: [(String, [CatalogProductReport])] = [
            ("Consumable", reports.filter { $0.type == "consumable" }),
            ("Non-consumable", reports.filter { $0.type == "nonConsumable" }),
            ("Non-renewing subscription", reports.filter { $0.type == "nonRenewable" }),
            ("Type not given", reports.filter { $0.type == nil }),
        ]
        for (title, items) in sections where !items.isEmpty {
            output.line("  \(title)")
            for item in items { output.line("    \(item.line)") }
        }
        for group in catalog.subscriptionGroups {
            output.line("  Subscription group \(group.name) (\(group.id)), highest level first")
            for item in reports where item.subscriptionGroup == group.id { output.line("    \(item.line)") }
        }
        return 0
    }
}

struct CatalogReport: Encodable {
    let file: String
    let storefront: String
    let currency: String
    let formatVersion: String?
    let products: [CatalogProductReport]
}

/// One product as the catalog command shows it.
struct CatalogProductReport: Encodable {
    let id: String
    let type: String?
    let displayName: String
    let description: String
    let price: String?
    let displayPrice: String?
    let familyShareable: Bool
    let subscriptionGroup: String?
    let subscriptionGroupName: String?
    let level: Int?
    let period: String?
    let introductoryOffer: String?
    let promotionalOffers: [String]
    let offerCodes: [String]
    let winBackOffers: [String]

    init(_ product: CatalogProduct, catalog: Catalog, storefront: Storefront, locale: String) {
        id = product.id
        type = product.kind?.rawValue
        displayName = product.displayName(for: locale)
        description = product.localization(for: locale)?.description ?? ""
        price = product.price.map { "\($0)" }
        displayPrice = product.price.map(storefront.format)
        familyShareable = product.familyShareable
        subscriptionGroup = product.subscription?.groupID
        subscriptionGroupName = product.subscription.flatMap { catalog.group($0.groupID)?.name }
        level = product.subscription?.level
        period = product.subscription?.period?.iso8601
        introductoryOffer = product.subscription?.introductoryOffer.map { Self.describe($0, storefront: storefront) }
        promotionalOffers =
            product.subscription?.promotionalOffers.map { Self.describe($0, storefront: storefront) } ?? []
        offerCodes = product.subscription?.offerCodes.map { Self.describe($0, storefront: storefront) } ?? []
        winBackOffers = product.subscription?.winBackOffers.map { Self.describe($0, storefront: storefront) } ?? []
    }

    static func describe(_ offer: SubscriptionOffer, storefront: Storefront) -> String {
        let what =
            switch offer.paymentMode {
            case .freeTrial: "free for \(offer.numberOfPeriods) x \(offer.period.iso8601)"
            case .payAsYouGo:
                "\(offer.price.map(storefront.format) ?? "?") per \(offer.period.iso8601) for \(offer.numberOfPeriods) periods"
            case .payUpFront:
                "\(offer.price.map(storefront.format) ?? "?") up front for \(offer.numberOfPeriods) x \(offer.period.iso8601)"
            }
        return offer.id.map { "\($0): \(what)" } ?? what
    }

    /// One line for people.
    var line: String {
        var text = "\(id)  \(displayName)  \(displayPrice ?? "no price")"
        if let level { text += "  level \(level)" }
        if let period { text += "  every \(period)" }
        if familyShareable { text += "  family shareable" }
        if let introductoryOffer { text += "\n        introductory offer: \(introductoryOffer)" }
        for offer in promotionalOffers { text += "\n        promotional offer \(offer)" }
        for offer in offerCodes { text += "\n        offer code \(offer)" }
        for offer in winBackOffers { text += "\n        win-back offer \(offer)" }
        return text
    }

    enum Keys: String, CodingKey {
        case id, type, displayName, description, price, displayPrice, familyShareable, subscriptionGroup,
            subscriptionGroupName, level, period, introductoryOffer, promotionalOffers, offerCodes, winBackOffers
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(id, forKey: .id)
        try c.encode(type, forKey: .type)
        try c.encode(displayName, forKey: .displayName)
        try c.encode(description, forKey: .description)
        try c.encode(price, forKey: .price)
        try c.encode(displayPrice, forKey: .displayPrice)
        try c.encode(familyShareable, forKey: .familyShareable)
        try c.encode(subscriptionGroup, forKey: .subscriptionGroup)
        try c.encode(subscriptionGroupName, forKey: .subscriptionGroupName)
        try c.encode(level, forKey: .level)
        try c.encode(period, forKey: .period)
        try c.encode(introductoryOffer, forKey: .introductoryOffer)
        try c.encode(promotionalOffers, forKey: .promotionalOffers)
        try c.encode(offerCodes, forKey: .offerCodes)
        try c.encode(winBackOffers, forKey: .winBackOffers)
    }
}
