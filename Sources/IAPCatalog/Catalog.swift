public import Foundation

/// What kind of product something is.
public enum ProductKind: String, Hashable, Sendable, Codable, CaseIterable {
    case consumable, nonConsumable, nonRenewable, autoRenewable
}

/// A product's name and description in one locale.
public struct ProductLocalization: Hashable, Sendable {
    public var locale: String
    public var displayName: String
    public var description: String

    public init(locale: String, displayName: String, description: String) {
        self.locale = locale
        self.displayName = displayName
        self.description = description
    }
}

/// A discount on a subscription: an introductory offer, a promotional (ad hoc) offer, an offer code or a win-back
/// offer.
public struct SubscriptionOffer: Hashable, Sendable, Codable {
    /// How the customer pays during the offer.
    public enum PaymentMode: String, Hashable, Sendable, Codable {
        case freeTrial, payAsYouGo, payUpFront
    }

    /// The offer identifier (promotional offers, offer codes and win-back offers have one; introductory offers do not).
    public var id: String?
    public var referenceName: String?
    public var paymentMode: PaymentMode
    /// One billing period of the offer.
    public var period: SubscriptionPeriod
    /// How many of those periods the offer lasts.
    public var numberOfPeriods: Int
    /// The price per period (pay as you go) or for the whole offer (pay up front); nil for a free trial.
    public var price: Decimal?

    public init(
        id: String? = nil, referenceName: String? = nil, paymentMode: PaymentMode, period: SubscriptionPeriod,
        numberOfPeriods: Int, price: Decimal? = nil
    ) {
        self.id = id
        self.referenceName = referenceName
        self.paymentMode = paymentMode
        self.period = period
        self.numberOfPeriods = numberOfPeriods
        self.price = price
    }
}

/// What an auto-renewable subscription adds to a product: its group, level, period and offers.
public struct SubscriptionInfo: Hashable, Sendable {
    /// The subscription group identifier.
    public var groupID: String
    /// The service level within the group: 1 is the highest.
    public var level: Int
    /// The renewal period; nil when the configuration does not say (a `Products.plist`).
    public var period: SubscriptionPeriod?
    public var introductoryOffer: SubscriptionOffer?
    public var promotionalOffers: [SubscriptionOffer]
    public var offerCodes: [SubscriptionOffer]
    public var winBackOffers: [SubscriptionOffer]

    public init(
        groupID: String, level: Int, period: SubscriptionPeriod?, introductoryOffer: SubscriptionOffer? = nil,
        promotionalOffers: [SubscriptionOffer] = [], offerCodes: [SubscriptionOffer] = [],
        winBackOffers: [SubscriptionOffer] = []
    ) {
        self.groupID = groupID
        self.level = level
        self.period = period
        self.introductoryOffer = introductoryOffer
        self.promotionalOffers = promotionalOffers
        self.offerCodes = offerCodes
        self.winBackOffers = winBackOffers
    }
}

/// One product of a catalog.
public struct CatalogProduct: Hashable, Sendable, Identifiable {
    /// The product identifier.
    public var id: String
    /// What kind of product it is; nil when the configuration does not say (a flat `Products.plist` list).
    public var kind: ProductKind?
    public var referenceName: String
    /// The price in the configuration's storefront currency, exactly as written; nil when the configuration has none.
    public var price: Decimal?
    public var familyShareable: Bool
    public var localizations: [ProductLocalization]
    /// For auto-renewable subscriptions.
    public var subscription: SubscriptionInfo?

    public init(
        id: String, kind: ProductKind?, referenceName: String = "", price: Decimal? = nil,
        familyShareable: Bool = false,
        localizations: [ProductLocalization] = [], subscription: SubscriptionInfo? = nil
    ) {
        self.id = id
        self.kind = kind
        self.referenceName = referenceName
        self.price = price
        self.familyShareable = familyShareable
        self.localizations = localizations
        self.subscription = subscription
    }

    /// The localization for `locale` (`en_GB`), else one with the same language, else the first.
    public func localization(for locale: String) -> ProductLocalization? {
        let language = locale.split(separator: "_").first.map(String.init)
        return localizations.first { $0.locale == locale }
            ?? localizations.first { $0.locale.split(separator: "_").first.map(String.init) == language }
            ?? localizations.first
    }

    /// The name to show in `locale`, falling back to the reference name and then the identifier.
    public func displayName(for locale: String) -> String {
        let name = localization(for: locale)?.displayName ?? ""
        return name.isEmpty ? (referenceName.isEmpty ? id : referenceName) : name
    }
}

/// A group of auto-renewable subscriptions; a customer has at most one active subscription per group.
public struct SubscriptionGroup: Hashable, Sendable, Identifiable {
    public var id: String
    public var name: String
    /// The group's products, highest service level first.
    public var productIDs: [String]

    public init(id: String, name: String, productIDs: [String]) {
        self.id = id
        self.name = name
        self.productIDs = productIDs
    }
}

/// The settings block of a `.storekit` file: how Xcode's StoreKit testing (and IAPKit's simulator) behaves.
public struct StoreKitSettings: Hashable, Sendable {
    /// The storefront purchases happen in (three-letter code); nil when unset.
    public var storefront: String?
    /// The locale product names are shown in.
    public var locale: String?
    /// Xcode's time-rate setting as written (0 is real time; others accelerate renewals).
    public var timeRate: Int
    public var askToBuyEnabled: Bool
    public var billingGracePeriodEnabled: Bool
    public var billingIssuesEnabled: Bool
    public var failTransactionsEnabled: Bool
    /// The configured StoreKit errors, per operation, as written.
    public var storeKitErrors: [[String: String]]

    public init(
        storefront: String? = nil, locale: String? = nil, timeRate: Int = 0, askToBuyEnabled: Bool = false,
        billingGracePeriodEnabled: Bool = false, billingIssuesEnabled: Bool = false,
        failTransactionsEnabled: Bool = false, storeKitErrors: [[String: String]] = []
    ) {
        self.storefront = storefront
        self.locale = locale
        self.timeRate = timeRate
        self.askToBuyEnabled = askToBuyEnabled
        self.billingGracePeriodEnabled = billingGracePeriodEnabled
        self.billingIssuesEnabled = billingIssuesEnabled
        self.failTransactionsEnabled = failTransactionsEnabled
        self.storeKitErrors = storeKitErrors
    }
}

/// The products an app sells, their subscription groups, and the store settings, read from an Xcode `.storekit`
/// configuration file or a `Products.plist`.
public struct Catalog: Hashable, Sendable {
    /// Products in the order the configuration lists them (in-app products, non-renewing, then subscriptions by
    /// group).
    public var products: [CatalogProduct]
    public var subscriptionGroups: [SubscriptionGroup]
    public var settings: StoreKitSettings
    /// The `.storekit` format version (`1.0` to `5.0`), nil for a `Products.plist`.
    public var formatVersion: String?

    public init(
        products: [CatalogProduct], subscriptionGroups: [SubscriptionGroup] = [],
        settings: StoreKitSettings = StoreKitSettings(), formatVersion: String? = nil
    ) {
        self.products = products
        self.subscriptionGroups = subscriptionGroups
        self.settings = settings
        self.formatVersion = formatVersion
    }

    /// The product with this identifier.
    public func product(_ id: String) -> CatalogProduct? { products.first { $0.id == id } }

    /// The subscription group with this identifier.
    public func group(_ id: String) -> SubscriptionGroup? { subscriptionGroups.first { $0.id == id } }

    /// The group with this id or, when none has it, the first with this name (a `.storekit` file's groups have both:
    /// `21000001` and `VIP`).
    public func group(idOrName: String) -> SubscriptionGroup? {
        group(idOrName) ?? subscriptionGroups.first { $0.name == idOrName }
    }

    /// The largest configuration file read: Xcode's `.storekit` files for hundreds of products are well under 1 MiB.
    public static let maximumFileSize = 4 << 20

    /// Reads a `.storekit` file (JSON) or a `Products.plist` (property list), by content. Errors name the file as
    /// given, so a user sees which path was tried.
    public static func load(contentsOfFile path: String) throws(CatalogError) -> Catalog {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        if let size = attributes?[.size] as? Int, size > maximumFileSize {
            throw CatalogError(.limitExceeded, file: path, keyPath: "", "larger than \(maximumFileSize >> 20) MiB")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot read the file" : "no such file"
            throw CatalogError(.unreadableFile, file: path, keyPath: "", reason)
        }
        return try load(data, fileName: path)
    }

    /// Reads configuration bytes: JSON as a `.storekit` file, a property list as a `Products.plist`.
    public static func load(_ data: Data, fileName: String) throws(CatalogError) -> Catalog {
        guard data.count <= maximumFileSize else {
            throw CatalogError(.limitExceeded, file: fileName, keyPath: "", "larger than \(maximumFileSize >> 20) MiB")
        }
        let first = data.first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }
        if first == UInt8(ascii: "{") {
            return try StoreKitConfigurationReader(fileName: fileName).read(data)
        }
        return try ProductsPlistReader(fileName: fileName).read(data)
    }
}
