public import Foundation
import IAPStoreClient

/// StoreKit's `AppStore`: the store itself.
public enum AppStore {
    /// Where a signed document comes from.
    public struct Environment: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let production = Environment(rawValue: "Production")
        public static let sandbox = Environment(rawValue: "Sandbox")
        public static let xcode = Environment(rawValue: "Xcode")
    }

    /// Asks the store for the customer's latest transactions and app receipt (after a restore): they arrive through
    /// `Transaction.currentEntitlements` and `Transaction.updates` and on the device's disk, as StoreKit's do.
    public static func sync() async throws {
        let session = try StoreKitSession.current()
        do {
            _ = try await session.backend.sync()
            _ = try await session.backend.refreshReceipt()
        } catch {
            throw StoreKitError(error)
        }
    }

    /// Whether this device may make payments (a session always may).
    public static var canMakePayments: Bool { (try? StoreKitSession.current()) != nil }
}

/// StoreKit's `Storefront`: the customer's App Store country.
public struct Storefront: Identifiable, Hashable, Sendable {
    public let id: String
    /// ISO 3166-1 alpha-3.
    public let countryCode: String

    /// The customer's storefront now, or nil when there is no session.
    public static var current: Storefront? {
        get async {
            guard let session = try? StoreKitSession.current() else { return nil }
            return await session.storefront()
        }
    }
}

/// StoreKit's `StoreKitError`.
public enum StoreKitError: Error, Sendable {
    case unknown
    case userCancelled
    case networkError(URLError)
    case systemError(any Error)
    case notAvailableInStorefront
    case notEntitled
    case unsupported

    /// The store's refusal, or no session, as StoreKit reports it.
    init(_ error: StoreError) {
        switch error.code.rawValue {
        case "networkError", "serverUnreachable": self = .networkError(URLError(.notConnectedToInternet))
        case "userCancelled": self = .userCancelled
        case "notAvailableInStorefront": self = .notAvailableInStorefront
        case "notEntitled": self = .notEntitled
        case "systemError": self = .systemError(error)
        default: self = .unknown
        }
    }
}
