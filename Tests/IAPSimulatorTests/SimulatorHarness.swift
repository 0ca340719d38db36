import Foundation
import IAPCatalog
import IAPEntitlements
import IAPReceipts
import IAPSignedData
import IAPSimulator
import IAPTestSupport
import Testing

/// A florist simulator on a frozen clock with fixed keys, and verifiers configured with its roots, for scenario tests.
struct SimulatorHarness {
    static let bundleID = "com.example.florist"
    static let start = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00:00Z

    let store: AppStoreSimulator
    let jwsVerifier: SignedDataVerifier
    let receiptVerifier: ReceiptVerifier
    let engine: EntitlementEngine

    init(
        catalog: Catalog = FloristCatalog.catalog, grace: Bool = true, timeRate: TimeRate = .realTime,
        configure: (inout SimulatorConfiguration) -> Void = { _ in }
    ) throws {
        var configuration = SimulatorConfiguration(
            bundleID: Self.bundleID, timeRate: timeRate, start: Self.start, billingGracePeriodEnabled: grace)
        configure(&configuration)
        store = try AppStoreSimulator(catalog: catalog, configuration: configuration, pki: SimulatorTestKeys.pki)
        jwsVerifier = try SignedDataVerifier(
            trustStore: SimulatorTestKeys.pki.trustStore,
            configuration: .init(
                bundleID: Self.bundleID, appAppleID: configuration.appAppleID,
                environments: [configuration.environment]))
        receiptVerifier = ReceiptVerifier(
            trustStore: SimulatorTestKeys.pki.trustStore, configuration: .init(bundleID: Self.bundleID))
        engine = EntitlementEngine(catalog: catalog)
    }

    /// An account with one device.
    @discardableResult
    func customer(_ id: String, askToBuy: Bool = false, storefront: String = "USA") throws -> UUID {
        try store.createAccount(id, storefront: storefront, askToBuy: askToBuy)
        return try store.addDevice(account: id)
    }

    /// The engine's snapshot now, from the account's signed transactions and renewal infos, each verified with the
    /// simulator's roots (a document that fails verification fails the test).
    func snapshotFromSignedData(_ account: String) async throws -> EntitlementSnapshot {
        let reading = try await store.readSignedData(account: account)
        for failure in reading.unverified { Issue.record("\(failure)") }
        return reading.snapshot
    }

    /// The engine's snapshot now from the device's receipt, verified with the simulator's roots.
    func snapshotFromReceipt(_ account: String, device: UUID) async throws -> EntitlementSnapshot {
        let issued = try store.receipt(account: account, device: device)
        let verdict = try await receiptVerifier.verify(
            issued.bytes, at: try store.now, deviceIdentifier: ReceiptVerifier.deviceIdentifier(device))
        #expect(verdict.isValid, "receipt: \(verdict.failures)")
        var history = PurchaseHistory()
        if verdict.isValid { history.add(verdict.receipt) }
        return engine.snapshot(of: history, at: try store.now)
    }

    /// Checks that the engine, reading the signed artifacts, sees what the simulator sees.
    func expectAgreement(_ account: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let view = try store.view(account: account)
        let snapshot = try await snapshotFromSignedData(account)
        Self.expect(snapshot, matches: view, catalog: store.catalog, what: "signed data", sourceLocation)
    }

    static func expect(
        _ snapshot: EntitlementSnapshot, matches view: SimulatorEntitlements, catalog: Catalog, what: String,
        _ sourceLocation: SourceLocation
    ) {
        for difference in view.differences(from: snapshot, catalog: catalog) {
            Issue.record("\(what): \(difference)", sourceLocation: sourceLocation)
        }
    }

    /// The notifications so far as "TYPE/SUBTYPE" strings, in order, optionally for one account.
    func notificationNames(_ account: String? = nil) -> [String] {
        store.notifications.filter { account == nil || $0.accountID == account }.map {
            $0.type.rawValue + ($0.subtype.map { "/\($0.rawValue)" } ?? "")
        }
    }

    static let month = SubscriptionPeriod(value: 1, unit: .month)
    static let day: TimeInterval = 86_400
}
