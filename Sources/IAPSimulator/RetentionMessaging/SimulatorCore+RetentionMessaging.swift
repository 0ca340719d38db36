import Foundation
import IAPCatalog
import IAPCore
import IAPEntitlements
import IAPSignedData

extension SimulatorCore {
    /// Whether uploads are approved at once: Apple's sandbox does so; elsewhere they wait for review.
    var approvesRetentionContent: Bool { configuration.environment == .sandbox }

    /// The catalog's auto-renewable subscriptions, the products default messages are for.
    var retentionProductIDs: Set<String> {
        Set(catalog.products.filter { $0.kind == .autoRenewable }.map(\.id))
    }

    /// Starts a performance test for a customer's active subscription, given by its original transaction id.
    mutating func startPerformanceTest(originalTransactionID id: String, configuration: PerformanceTestConfiguration)
        throws(SimulatorError) -> PerformanceTestRun
    {
        let t = try originalPurchase(apiID: id, sharedReason: "a family-shared transaction cannot be tested")
        guard t.kind == .autoRenewable, let group = t.groupID,
            let number = lineNumber(account: t.accountID, group: group),
            lines[number].originalID == t.id,
            [.subscribed, .inGracePeriod].contains(Self.status(lines[number], at: now))
        else {
            throw RetentionMessagingRecords.refusal(
                4_000_211, "Invalid request: \(id) is not an active auto-renewable subscription.")
        }
        return try messaging.startPerformanceTest(
            requestID: ids.uuid(), originalTransactionID: id, productID: lines[number].productID,
            configuration: configuration)
    }

    /// A "Get Retention Message" request for a performance test, signed as the App Store signs it: the body is
    /// `{"signedPayload": JWS}` over originalTransactionId, appAppleId, productId, userLocale, requestIdentifier,
    /// environment and signedDate.
    mutating func signedRealtimeRequest(for run: PerformanceTestRun, locale: String) throws(SimulatorError) -> [UInt8] {
        let payload: [String: Any] = [
            "originalTransactionId": run.originalTransactionID, "appAppleId": configuration.appAppleID,
            "productId": run.productID, "userLocale": locale,
            "requestIdentifier": ids.uuid().uuidString.lowercased(),
            "environment": configuration.environment.rawValue, "signedDate": now.millisecondsSince1970,
        ]
        do {
            let bytes = try JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys])
            let jws = try jwsSigner.sign(payload: Array(bytes))
            statistics.jwsSignatures += 1
            return Array(try JSONSerialization.data(withJSONObject: ["signedPayload": jws]))
        } catch {
            throw SimulatorError(.signingFailed, "signing a retention message request failed: \(error)")
        }
    }
}
