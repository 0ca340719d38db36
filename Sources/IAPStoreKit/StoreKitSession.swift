public import Foundation
public import IAPCatalog
import IAPCore
import IAPSignedData
public import IAPSimulator
import IAPStoreClient
public import IAPStoreClientTesting
import Synchronization

/// The App Store that StoreKit's API (`Product`, `Transaction`, `AppStore`, `Storefront`) talks to where StoreKit
/// itself is not there: the local App Store, as one device of one account sees it, with every signed document
/// verified against the store's own roots. In the spirit of Xcode's `SKTestSession`: the test owns the store, its
/// clock, its accounts and what the customer does at the purchase sheet.
///
/// ```swift
/// let session = try StoreKitSession(simulator: simulator, account: "ana")
/// try await session.run {
///     let products = try await Product.products(for: ["com.example.florist.flowers"])
///     let result = try await products[0].purchase()
/// }
/// ```
///
/// StoreKit's API is static, so the session it talks to is found at each call: the one `run(_:)` bound to the
/// current task (tests run in parallel, each with its own), or else the process's default (`makeDefault()`), which a
/// detached task sees too. With neither, calls fail as a store that cannot be reached (`StoreKitError.networkError`)
/// and the sequences are empty.
public final class StoreKitSession: Sendable {
    /// The local App Store behind the session.
    public let simulator: AppStoreSimulator
    /// The account signed in on the device.
    public let account: String
    /// The person and network around the device: sheet choices, offline, held purchases.
    public let customer: SimulatedCustomer
    let backend: any StoreBackend
    let verifier: SignedDataVerifier

    /// The products the store sells, with their groups and offers.
    public var catalog: Catalog? { simulator.catalog }

    /// A device of `account` (opened, with one device, when the store does not know it yet) on `simulator`.
    public init(
        simulator: AppStoreSimulator, account: String = "customer", device: UUID? = nil,
        customer: SimulatedCustomer = SimulatedCustomer()
    ) throws {
        if !simulator.accountIDs.contains(account) { try simulator.createAccount(account) }
        self.simulator = simulator
        self.account = account
        self.customer = customer
        backend = try SimulatorBackend(simulator, account: account, device: device, customer: customer)
        verifier = try SignedDataVerifier(
            trustStore: simulator.pki.trustStore,
            configuration: .init(
                bundleID: simulator.configuration.bundleID, appAppleID: simulator.configuration.appAppleID,
                environments: [simulator.configuration.environment]))
    }

    // MARK: - Which session StoreKit's calls reach

    @TaskLocal static var bound: StoreKitSession?
    private static let processDefault = Mutex<StoreKitSession?>(nil)

    /// Runs `body` with StoreKit's calls (and the tasks it starts, not detached ones) reaching this session.
    public func run<T>(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T) async rethrows -> T
    {
        try await Self.$bound.withValue(self, operation: body, isolation: isolation)
    }

    /// Makes this the session every StoreKit call reaches when no `run(_:)` is in effect (detached tasks included).
    public func makeDefault() { Self.processDefault.withLock { $0 = self } }

    /// No process default any more.
    public static func clearDefault() { processDefault.withLock { $0 = nil } }

    /// The session a StoreKit call reaches now.
    static func current() throws(StoreKitError) -> StoreKitSession {
        if let session = bound ?? processDefault.withLock({ $0 }) { return session }
        throw StoreKitError.networkError(URLError(.notConnectedToInternet))
    }

    // MARK: - Reading what the store signs

    /// A signed transaction, verified: nil only when it is not a transaction at all.
    func verifiedTransaction(_ jws: String) async -> VerificationResult<Transaction>? {
        guard let verdict = try? await verifier.verifyTransaction(jws), let payload = verdict.payload,
            let transaction = Transaction(payload, jws: jws, session: self)
        else { return nil }
        return verdict.isValid
            ? .verified(transaction) : .unverified(transaction, .init(verdict.failures))
    }

    /// Verifies a signed transaction as the device does (for tests: what the device makes of a document it did not
    /// get from this store).
    public func verify(_ jws: String) async -> VerificationResult<Transaction>? { await verifiedTransaction(jws) }

    /// The account's storefront.
    func storefront() -> Storefront? {
        guard let settings = try? simulator.settings(account: account) else { return nil }
        return Storefront(
            id: AppStoreSimulator.storefrontID(of: settings.storefront), countryCode: settings.storefront)
    }
}
