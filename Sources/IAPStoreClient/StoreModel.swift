import Foundation
import IAPCatalog
import IAPCore
public import IAPEntitlements
public import Observation

/// The ``Store`` as SwiftUI views bind to it: an observable, main-actor mirror of what a store screen shows (products
/// by section and service level, a purchase state per product, what the customer owns and may use, subscription
/// status, consumable counts, price text with offers, and the error to show), refreshed after every store event.
///
/// ```swift
/// struct ShopView: View {
///     @State var model = StoreModel(store: store)
///     var body: some View {
///         List(model.nonConsumables, id: \.id) { product in
///             Button(model.priceText(for: product.id)) { Task { await model.purchase(product.id) } }
///                 .disabled(model.isEntitled(to: product.id))
///         }
///         .task { await model.start() }
///         .alert(model.errorMessage ?? "", isPresented: .constant(model.errorMessage != nil)) {
///             Button("OK") { model.dismissError() }
///         }
///     }
/// }
/// ```
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
@MainActor @Observable
public final class StoreModel {
    /// One subscription group as a store screen lists it.
    public struct SubscriptionSection: Identifiable, Hashable, Sendable {
        public var id: String { groupID }
        public var groupID: String
        /// The group's name in the product configuration.
        public var name: String
        /// The group's products, highest service level first.
        public var products: [StoreProduct]
        /// The customer's subscription in the group, as the engine sees it (nil: never subscribed).
        public var status: SubscriptionGroupStatus?
    }

    /// The store this model mirrors.
    @ObservationIgnored public let store: Store
    @ObservationIgnored private var listener: Task<Void, Never>?

    /// Every product the store sells among the configuration's, in configuration order.
    public private(set) var products: [StoreProduct] = []
    public private(set) var consumables: [StoreProduct] = []
    public private(set) var nonConsumables: [StoreProduct] = []
    public private(set) var nonRenewables: [StoreProduct] = []
    /// Auto-renewable subscriptions by group, in configuration order.
    public private(set) var subscriptionGroups: [SubscriptionSection] = []
    /// Where each product's last purchase stands.
    public private(set) var purchaseStates: [String: PurchaseState] = [:]
    /// The products the customer bought themselves and may use now.
    public private(set) var owned: Set<String> = []
    /// Every product the customer may use now: their own and those a family member shares.
    public private(set) var entitled: Set<String> = []
    /// The units left of each consumable.
    public private(set) var consumableCounts: [String: Int] = [:]
    /// Where the answers come from (the offline cache until the store confirms them).
    public private(set) var origin: EntitlementOrigin = .none
    /// The last failure worth showing, until ``dismissError()``.
    public private(set) var error: StoreError?
    /// Whether the store is launching or restoring.
    public private(set) var isBusy = false

    @ObservationIgnored private var introductoryEligibility: [String: Bool] = [:]
    /// The store's product configuration, as completed by the store.
    @ObservationIgnored private var catalog = Catalog(products: [])
    /// The event that reported ``error``, when an event did: its counterpart clears it.
    @ObservationIgnored private var errorEvent: StoreEvent.Kind?

    public init(store: Store) { self.store = store }

    // MARK: - Reading

    /// Where the product's last purchase stands (`.notStarted` when none was asked for).
    public func purchaseState(of productID: String) -> PurchaseState { purchaseStates[productID] ?? .notStarted }

    /// Whether the customer may use the product now.
    public func isEntitled(to productID: String) -> Bool { entitled.contains(productID) }

    /// Whether the customer bought the product themselves (a family member's shared purchase is entitled, not owned).
    public func isOwned(_ productID: String) -> Bool { owned.contains(productID) }

    /// The units left of a consumable.
    public func count(of productID: String) -> Int { consumableCounts[productID] ?? 0 }

    /// A product by id.
    public func product(_ productID: String) -> StoreProduct? { products.first { $0.id == productID } }

    /// The error as a sentence for the customer, nil when there is none to show.
    public var errorMessage: String? { error.map(Self.message) }

    /// What a buy button says: the price, per period for subscriptions, with the introductory offer first while the
    /// customer is eligible for it ("1 week free, then $9.99 / month"), or with the promotional offer `offerID`.
    public func priceText(for productID: String, promotionalOffer offerID: String? = nil) -> String {
        guard let product = product(productID) else { return "" }
        guard let period = product.subscriptionPeriod else { return product.displayPrice }
        let regular = "\(product.displayPrice) / \(Self.describe(period, unitOnly: true))"
        let subscription = catalog.product(productID)?.subscription
        let offer: SubscriptionOffer? =
            if let offerID {
                subscription?.promotionalOffers.first { $0.id == offerID }
            } else if let group = product.subscriptionGroupID, introductoryEligibility[group] == true {
                subscription?.introductoryOffer
            } else {
                nil
            }
        guard let offer else { return regular }
        let price = Self.format(offer.price ?? 0, like: product.displayPrice, regular: product.price)
        let length = SubscriptionPeriod(value: offer.period.value * offer.numberOfPeriods, unit: offer.period.unit)
        let lead =
            switch offer.paymentMode {
            case .freeTrial: "\(Self.describe(length)) free"
            case .payAsYouGo:
                "\(price) / \(Self.describe(offer.period, unitOnly: true)) for \(Self.describe(length))"
            case .payUpFront: "\(price) for \(Self.describe(length))"
            }
        return "\(lead), then \(regular)"
    }

    // MARK: - Acting

    /// Launches the store (cache, products, reconciliation, updates) and mirrors it from then on.
    public func start() async {
        if listener == nil {
            let events = await store.events()
            listener = Task { [weak self] in
                for await event in events {
                    guard let self else { return }
                    self.note(event)
                    await self.refresh()
                }
            }
        }
        isBusy = true
        await store.start()
        await refresh()
        isBusy = false
    }

    /// Buys a product; its state and the error to show follow.
    public func purchase(_ productID: String, quantity: Int = 1, offer: PurchaseOffer? = nil) async {
        purchaseStates[productID] = .inProgress
        do { try await store.purchase(productID, quantity: quantity, offer: offer) } catch { show(error) }
        await refresh()
    }

    /// Restores purchases (and loads the products again, in case they could not be loaded before).
    public func restore() async {
        isBusy = true
        await store.loadProducts()
        do { try await store.restore() } catch { show(error) }
        await refresh()
        isBusy = false
    }

    /// Uses up units of a consumable.
    public func consume(_ productID: String, quantity: Int = 1) async {
        do { try await store.consume(productID, quantity: quantity) } catch { show(error) }
        await refresh()
    }

    private func show(_ error: StoreError) {
        self.error = error
        errorEvent = nil
    }

    /// The error was shown.
    public func dismissError() {
        error = nil
        errorEvent = nil
    }

    /// Reads everything the screen shows from the store.
    public func refresh() async {
        let store = store
        products = await store.products
        catalog = await store.catalog
        let snapshot = await store.entitlements
        origin = await store.origin
        purchaseStates = await store.purchaseStates
        consumables = products.filter { $0.kind == .consumable }
        nonConsumables = products.filter { $0.kind == .nonConsumable }
        nonRenewables = products.filter { $0.kind == .nonRenewable }
        var sections: [SubscriptionSection] = []
        for groupID in await store.subscriptionGroupIDs {
            introductoryEligibility[groupID] = snapshot.isEligibleForIntroductoryOffer(inGroup: groupID)
            sections.append(
                SubscriptionSection(
                    groupID: groupID, name: catalog.group(groupID)?.name ?? groupID,
                    products: await store.subscriptions(inGroup: groupID), status: snapshot.group(groupID)))
        }
        subscriptionGroups = sections
        entitled = snapshot.entitledProductIDs
        var mine = Set(snapshot.nonConsumables.filter { $0.ownership == .purchased }.map(\.productID))
        for group in snapshot.subscriptionGroups where group.isEntitled && group.ownership != .familyShared {
            if let product = group.currentProductID { mine.insert(product) }
        }
        for pass in snapshot.nonRenewingSubscriptions where pass.state == .active { mine.insert(pass.productID) }
        owned = mine
        consumableCounts = Dictionary(uniqueKeysWithValues: consumables.map { ($0.id, snapshot.balance(of: $0.id)) })
    }

    /// Failures the store reports only as events (it could not load products or confirm purchases), shown until the
    /// store answers again.
    private func note(_ event: StoreEvent) {
        switch event.kind {
        case .productsUnavailable, .reconcileFailed:
            error = StoreError(.networkError, event.detail ?? "the store could not be reached")
            errorEvent = event.kind
        case .productsLoaded where errorEvent == .productsUnavailable,
            .reconciled where errorEvent == .reconcileFailed, .restored where errorEvent == .reconcileFailed:
            error = nil
            errorEvent = nil
        default: break
        }
    }

    // MARK: - Words

    static func message(_ error: StoreError) -> String {
        switch error.code {
        case .networkError, .serverUnreachable: "The App Store cannot be reached. Check your connection and try again."
        case .purchaseInProgress: "Another purchase is still in progress."
        case .failedVerification: "The purchase could not be verified, so nothing was charged to your access."
        case .purchaseNotAllowed: "Purchases are not allowed on this device."
        case .productUnavailable, .unknownProduct, .notAvailableInStorefront:
            "This item is not available in your country or region."
        case .ineligibleForOffer: "You are not eligible for this offer."
        case .insufficientBalance: "You have none of these left."
        default: "The purchase did not go through (\(error.code))."
        }
    }

    /// "1 week", "3 months"; with `unitOnly`, "week" or "3 months".
    static func describe(_ period: SubscriptionPeriod, unitOnly: Bool = false) -> String {
        let unit =
            switch period.unit {
            case .day: "day"
            case .week: "week"
            case .month: "month"
            case .year: "year"
            }
        if unitOnly, period.value == 1 { return unit }
        return "\(period.value) \(unit)\(period.value == 1 ? "" : "s")"
    }

    /// `amount` written as `display` writes `regular` ("$2.99" → "$0.99"; "2,99 €" → "0,99 €").
    static func format(_ amount: Decimal, like display: String, regular: Decimal) -> String {
        let plain = "\(regular)"
        let digits = plain.split(separator: ".").dropFirst().first?.count ?? 0
        var written = String(format: "%.\(digits)f", NSDecimalNumber(decimal: amount).doubleValue)
        for separator in [".", ","] {
            let regularText = plain.replacingOccurrences(of: ".", with: separator)
            if separator == "," { written = written.replacingOccurrences(of: ".", with: ",") }
            if display.contains(regularText) { return display.replacingOccurrences(of: regularText, with: written) }
        }
        return written
    }
}
