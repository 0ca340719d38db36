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

    /// The customer signs in and the store sends the device their latest transactions and app receipt (a restore):
    /// they are read through `Transaction.all` and on the device's disk, as StoreKit's are. On a device this is a
    /// sign-in prompt; the session's customer counts each one (`signIns`).
    public static func sync() async throws {
        let session = try StoreKitSession.current()
        do {
            try await session.backend.sync()
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
