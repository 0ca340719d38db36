import Foundation
public import IAPReceipts
public import IAPSignedData

/// How the ``Store`` decides what to believe: one way per seed, chosen at creation. Whichever way, the entitlement
/// engine gives the answer; nothing unlocks on the device's own guess.
public enum ValidationMode: Sendable {
    /// Each signed transaction verified on the device (StoreHelper's way; the default). The verifier carries the
    /// trusted roots and the app's bundle id and environments.
    case signedTransactions(SignedDataVerifier)
    /// The app receipt verified on the device (IAPHelper's way): its signature and chain, bundle id, app version and
    /// device hash, read from the disk (a new one comes with ``Store/restore()``'s sync, the only time the customer is
    /// asked to sign in). Configure the verifier with the app's bundle id and version.
    case appReceipt(ReceiptVerifier)
    /// The app's own server (SwiftyReceiptValidator's way): the signed transaction or the receipt goes to
    /// `iapkit serve`, and the app unlocks from the server's verdict.
    case server(ValidationServer)

    /// The name used in events and logs.
    public var name: String {
        switch self {
        case .signedTransactions: "signedTransactions"
        case .appReceipt: "appReceipt"
        case .server: "server"
        }
    }
}
