import IAPStoreClient

/// StoreKit's `PurchaseIntent`: a purchase the customer started on the App Store (a promoted in-app purchase or a
/// win-back offer) that the app completes with `product.purchase(options:)`. In a session, a test starts one with
/// ``StoreKitSession/customerStartsPurchaseOnAppStore(_:offerID:)``.
public struct PurchaseIntent: Identifiable, Sendable, Hashable {
    /// The product the customer chose.
    public let product: Product
    /// The win-back offer the customer chose, if any.
    public let offer: Product.SubscriptionOffer?

    /// The product's id.
    public var id: Product.ID { product.id }

    /// The intents from now on. Iterate it early at launch: intents that arrive while nobody listens wait for the
    /// first listener (as StoreKit holds a promoted purchase until the app asks).
    public static var intents: PurchaseIntents {
        PurchaseIntents(session: try? StoreKitSession.current())
    }

    /// `PurchaseIntent.PurchaseIntents`: an asynchronous sequence of purchase intents.
    public struct PurchaseIntents: AsyncSequence, Sendable {
        public typealias Element = PurchaseIntent
        let session: StoreKitSession?

        public struct AsyncIterator: AsyncIteratorProtocol {
            var base: AsyncStream<PurchaseIntent>.AsyncIterator
            public mutating func next() async -> PurchaseIntent? { await base.next() }
        }

        public func makeAsyncIterator() -> AsyncIterator {
            let stream = session?.purchaseIntents.subscribe() ?? AsyncStream { $0.finish() }
            return AsyncIterator(base: stream.makeAsyncIterator())
        }
    }
}

extension Storefront {
    /// The customer's storefront each time it changes (the account moved to another country) from the moment the
    /// sequence is made.
    public static var updates: Storefronts {
        Storefronts(
            stream: (try? StoreKitSession.current())?.storefrontChanges.subscribe() ?? AsyncStream { $0.finish() })
    }

    /// `Storefront.Storefronts`: an asynchronous sequence of storefronts (iterate it once).
    public struct Storefronts: AsyncSequence, Sendable {
        public typealias Element = Storefront
        let stream: AsyncStream<Storefront>

        public struct AsyncIterator: AsyncIteratorProtocol {
            var base: AsyncStream<Storefront>.AsyncIterator
            public mutating func next() async -> Storefront? { await base.next() }
        }

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: stream.makeAsyncIterator()) }
    }
}
