import Foundation
import IAPSimulator
import IAPStoreClient
import IAPStoreClientTesting

/// What a ``StoreKitSession`` does to its store as the test (not as the device): the account's setup, held purchases,
/// injected failures, the clock, refunds, other devices. One implementation for the local App Store in process, one
/// for `iapkit serve`'s `/simulator`.
protocol SessionStore: Sendable {
    func askToBuy() async throws -> Bool
    func update(askToBuy: Bool?, storefront: String?) async throws
    /// The account's storefront (ISO 3166-1 alpha-3).
    func storefront() async throws -> String
    /// The ids of the account's purchases held for `reason`.
    func pendingPurchases(_ reason: PendingPurchase.Reason) async throws -> [String]
    func settle(pending id: String, approve: Bool) async throws
    func failOperation(_ operation: SimulatorOperation, with code: SimulatorError.Code?) async throws
    func advanceClock(by seconds: TimeInterval) async throws
    func refund(_ transactionID: String) async throws
    /// Buys `productID` on another device of the account; returns the transaction id.
    func buyOnAnotherDevice(_ productID: String) async throws -> String
}

/// The local App Store in this process, for one account.
struct LocalSessionStore: SessionStore {
    let simulator: AppStoreSimulator
    let account: String

    func askToBuy() throws -> Bool { try simulator.settings(account: account).askToBuy }

    func update(askToBuy: Bool?, storefront: String?) throws {
        try simulator.updateAccount(account, askToBuy: askToBuy, storefront: storefront)
    }

    func storefront() throws -> String { try simulator.settings(account: account).storefront }

    func pendingPurchases(_ reason: PendingPurchase.Reason) -> [String] {
        simulator.pendingPurchases.filter { $0.accountID == account && $0.reason == reason }.map(\.id)
    }

    func settle(pending id: String, approve: Bool) throws {
        if approve { _ = try simulator.approve(id) } else { try simulator.decline(id) }
    }

    func failOperation(_ operation: SimulatorOperation, with code: SimulatorError.Code?) {
        simulator.injectFailure(operation, code)
    }

    func advanceClock(by seconds: TimeInterval) throws { try simulator.advance(by: seconds) }

    func refund(_ transactionID: String) throws { _ = try simulator.refund(transactionID) }

    func buyOnAnotherDevice(_ productID: String) throws -> String {
        let other = try simulator.addDevice(account: account)
        guard case .purchased(let transaction) = try simulator.purchase(productID, account: account, device: other)
        else { throw SimulatorError(.invalidArgument, "the purchase of \(productID) on another device was held") }
        return transaction.transactionID
    }
}

/// The local App Store of a running `iapkit serve`, through its `/simulator` API, for one account.
struct RemoteSessionStore: SessionStore {
    let http: JSONHTTPClient
    let account: String

    private var accountPath: String { "/simulator/accounts/\(HTTPStoreBackend.segment(account))" }

    private func settings() async throws -> SimulatorWire.Account {
        try await http.decode(SimulatorWire.Account.self, "GET", accountPath)
    }

    func askToBuy() async throws -> Bool { try await settings().askToBuy }

    func update(askToBuy: Bool?, storefront: String?) async throws {
        _ = try await http.decode(
            SimulatorWire.Account.self, "PATCH", accountPath,
            body: SimulatorWire.AccountSettings(askToBuy: askToBuy, storefront: storefront))
    }

    func storefront() async throws -> String { try await settings().storefront }

    func pendingPurchases(_ reason: PendingPurchase.Reason) async throws -> [String] {
        try await http.decode(SimulatorWire.State.self, "GET", "/simulator").pendingPurchases
            .filter { $0.accountId == account && $0.reason == reason.rawValue }.map(\.id)
    }

    func settle(pending id: String, approve: Bool) async throws {
        let path = "/simulator/pending/\(HTTPStoreBackend.segment(id))/" + (approve ? "approve" : "decline")
        _ = try await http.send(expecting: "POST", path)
    }

    func failOperation(_ operation: SimulatorOperation, with code: SimulatorError.Code?) async throws {
        let path = "/simulator/failures/\(operation.rawValue)"
        if let code {
            _ = try await http.decode(
                SimulatorWire.Failures.self, "PUT", path, body: SimulatorWire.Failure(code: code.rawValue))
        } else {
            _ = try await http.decode(SimulatorWire.Failures.self, "DELETE", path)
        }
    }

    /// Whole seconds only: the API moves the clock by at least one second.
    func advanceClock(by seconds: TimeInterval) async throws {
        guard seconds >= 1, seconds.rounded() == seconds else {
            throw SimulatorError(
                .invalidArgument, "over HTTP the clock moves by whole seconds, at least 1 (not \(seconds))")
        }
        _ = try await http.decode(
            SimulatorWire.Now.self, "POST", "/simulator/clock/advance",
            body: SimulatorWire.Advance(seconds: Int64(seconds)))
    }

    func refund(_ transactionID: String) async throws {
        _ = try await http.send(
            expecting: "POST", "/simulator/transactions/\(HTTPStoreBackend.segment(transactionID))/refund",
            body: SimulatorWire.Refund())
    }

    func buyOnAnotherDevice(_ productID: String) async throws -> String {
        let other = try await http.decode(SimulatorWire.SignedIn.self, "POST", accountPath + "/devices")
        let result = try await http.decode(
            SimulatorWire.PurchaseResult.self, "POST", accountPath + "/purchases",
            body: SimulatorWire.Purchase(productId: productID, deviceId: other.deviceId))
        guard let transaction = result.transaction else {
            throw SimulatorError(
                .invalidArgument, "the purchase of \(productID) on another device was \(result.outcome)")
        }
        return transaction.transactionId
    }
}

extension JSONHTTPClient {
    /// Sends a request whose answer only has to say yes (2xx); any other status is an error with the server's code.
    fileprivate func send(expecting method: String, _ path: String, body: (any Encodable)? = nil)
        async throws(StoreError)
    {
        let (status, bytes) = try await send(method, path, body: body)
        guard (200..<300).contains(status) else { throw Self.error(status: status, bytes, refused: nil) }
    }
}
