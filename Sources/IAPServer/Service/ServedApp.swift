import Foundation
import IAPCatalog
import IAPEntitlements
import IAPReceipts
import IAPSignedData

/// An app as the server runs it: its configuration with the verifiers and the engine made from it, once.
struct ServedApp: Sendable {
    /// How many verified signatures each app's verifier remembers (2.5 MiB): a re-post of a document seen since skips
    /// its P-256 check, about a tenth of a server's CPU under re-posts.
    static let signatureMemory = 65_536

    let configuration: AppConfiguration
    let signedData: SignedDataVerifier
    let receipts: ReceiptVerifier
    let engine: EntitlementEngine

    init(_ configuration: AppConfiguration) throws(ServiceError) {
        self.configuration = configuration
        do {
            signedData = try SignedDataVerifier(
                trustStore: configuration.trustStore,
                configuration: .init(
                    bundleID: configuration.bundleID, appAppleID: configuration.appAppleID,
                    environments: configuration.environments),
                signatureMemory: Self.signatureMemory)
        } catch {
            throw ServiceError(.misconfigured, error.code, "app \(configuration.bundleID): \(error.reason)")
        }
        receipts = ReceiptVerifier(
            trustStore: configuration.trustStore,
            configuration: .init(
                bundleID: configuration.bundleID,
                environments: Set(configuration.environments.map { ReceiptEnvironment(rawValue: $0.rawValue) })))
        engine = EntitlementEngine(catalog: configuration.catalog)
    }
}
