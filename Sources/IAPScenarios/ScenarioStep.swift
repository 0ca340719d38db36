import Foundation

/// One step of a scenario: exactly one action key, and the options it takes.
public struct ScenarioStep: Sendable, Decodable {
    /// The actions, by their key in the file.
    public enum Action: String, Sendable, CaseIterable {
        case createAccount, addDevice, joinFamily, leaveFamily
        case buy, approve, decline, redeemOfferCode
        case advance, advanceTo
        case billingIssue, billingFixed, autoRenewOff, autoRenewOn, changePrice, acceptPriceIncrease
        case refund, requestRefund, reportConsumption, grantRefund, declineRefund
        case finish, restore, deleteTransaction, clear, fail
        case expect, note
    }

    public var action: Action
    /// The action key's value (an account, product, duration, label, text ...).
    public var value: String
    public var account: String?
    /// Names the transaction a purchase gives, for later `refund`, `finish` ... steps.
    public var label: String?
    public var quantity: Int?
    public var storefront: String?
    public var askToBuy: Bool?
    public var appAccountToken: String?
    public var interrupted: Bool?
    public var cancel: Bool?
    public var promotionalOffer: String?
    public var keyID: String?
    public var winBackOffer: String?
    public var group: String?
    /// Refund share in percent (50 = half).
    public var percentage: Double?
    public var price: Double?
    public var requiresConsent: Bool?
    /// For `fail`: the error code to inject (`networkError`, ...), or `none` to stop.
    public var error: String?
    /// For `requestRefund`: Apple's consumption request reason.
    public var reason: String?
    /// For `reportConsumption`: the consumption status 0-3.
    public var consumptionStatus: Int?
    /// The error code this step must fail with; the step succeeding is then a failed expectation.
    public var expectError: String?
    // Expectations (`expect` steps).
    public var entitled: [String]?
    public var notEntitled: [String]?
    public var balance: [String: Int]?
    public var subscription: ExpectedSubscription?
    public var pending: Int?
    /// The notifications issued for the account since the previous `expect` for it, as `TYPE` or `TYPE/SUBTYPE`.
    public var notifications: [String]?

    /// What an `expect` step says about a subscription group.
    public struct ExpectedSubscription: Sendable, Decodable {
        public var group: String?
        public var state: String?
        public var product: String?
        public var autoRenew: Bool?
        public var renewsTo: String?
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    static let optionKeys: Set<String> = [
        "account", "label", "as", "quantity", "storefront", "askToBuy", "appAccountToken", "interrupted", "cancel",
        "promotionalOffer", "keyID", "winBackOffer", "group", "percentage", "price", "requiresConsent", "error",
        "reason", "consumptionStatus", "expectError", "entitled", "notEntitled", "balance", "subscription", "pending",
        "notifications",
    ]

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        let keys = container.allKeys.map(\.stringValue)
        let actions = keys.compactMap(Action.init(rawValue:))
        guard actions.count == 1, let action = actions.first else {
            throw ScenarioError(
                .unreadable,
                "step at \(Scenario.path(decoder.codingPath)) needs exactly one action "
                    + "(\(Action.allCases.map(\.rawValue).joined(separator: ", "))); it has \(actions.map(\.rawValue))")
        }
        if let unknown = keys.first(where: { Action(rawValue: $0) == nil && !Self.optionKeys.contains($0) }) {
            throw ScenarioError(
                .unreadable, "step at \(Scenario.path(decoder.codingPath)) has an unknown key '\(unknown)'")
        }
        self.action = action
        let actionKey = Key(action.rawValue)
        if let text = try? container.decode(String.self, forKey: actionKey) {
            value = text
        } else if let number = try? container.decode(Double.self, forKey: actionKey) {
            value = String(number)
        } else if (try? container.decodeNil(forKey: actionKey)) == true {
            value = ""
        } else {
            throw ScenarioError(
                .unreadable, "step at \(Scenario.path(decoder.codingPath)): '\(action.rawValue)' takes a text value")
        }
        func optional<T: Decodable>(_ key: String) throws -> T? {
            try container.decodeIfPresent(T.self, forKey: Key(key))
        }
        account = try optional("account")
        label = try optional("label") ?? optional("as")
        quantity = try optional("quantity")
        storefront = try optional("storefront")
        askToBuy = try optional("askToBuy")
        appAccountToken = try optional("appAccountToken")
        interrupted = try optional("interrupted")
        cancel = try optional("cancel")
        promotionalOffer = try optional("promotionalOffer")
        keyID = try optional("keyID")
        winBackOffer = try optional("winBackOffer")
        group = try optional("group")
        percentage = try optional("percentage")
        price = try optional("price")
        requiresConsent = try optional("requiresConsent")
        error = try optional("error")
        reason = try optional("reason")
        consumptionStatus = try optional("consumptionStatus")
        expectError = try optional("expectError")
        entitled = try optional("entitled")
        notEntitled = try optional("notEntitled")
        balance = try optional("balance")
        subscription = try optional("subscription")
        pending = try optional("pending")
        notifications = try optional("notifications")
    }
}
