public import Foundation

/// What the caller expects of a receipt. Expected values come from the caller (hard-coded in the app, or the server's
/// configuration), never from a file the user can edit such as Info.plist.
public struct ReceiptVerificationPolicy: Sendable {
    /// When the chain is validated.
    public enum ChainValidationTime: Sendable, Hashable {
        /// At the receipt's creation date (attribute 12): Apple's certificates in old receipts have long expired.
        case receiptCreationDate
        /// At a fixed time, for example now.
        case fixed(Date)
    }

    /// The time expiration is judged at (attribute 21). An input, so verification is deterministic.
    public var now: Date
    /// The bundle id the receipt must carry, if checked.
    public var bundleID: String?
    /// The app version (`CFBundleVersion`) the receipt must carry, if checked.
    public var appVersion: String?
    /// The device identifier bytes (the `identifierForVendor` UUID's 16 bytes on iOS), if the device hash is checked.
    public var deviceIdentifier: [UInt8]?
    /// When the certificate chain is validated.
    public var chainValidationTime: ChainValidationTime
    /// The environments the receipt may come from (its signed attribute 0), compared in Apple's words:
    /// ``ReceiptEnvironment/sandbox`` also matches `ProductionSandbox`. Nil skips the check (and the verdict says so);
    /// a server should always set it, because any TestFlight tester gets genuine Apple-signed sandbox receipts for
    /// free purchases. Xcode-signed receipts are refused unless ``ReceiptEnvironment/xcode`` is listed, whatever the
    /// trust store accepts.
    public var environments: Set<ReceiptEnvironment>?

    public init(
        now: Date,
        bundleID: String? = nil,
        appVersion: String? = nil,
        deviceIdentifier: [UInt8]? = nil,
        environments: Set<ReceiptEnvironment>? = nil,
        chainValidationTime: ChainValidationTime = .receiptCreationDate
    ) {
        self.now = now
        self.bundleID = bundleID
        self.appVersion = appVersion
        self.deviceIdentifier = deviceIdentifier
        self.environments = environments
        self.chainValidationTime = chainValidationTime
    }

    /// A policy that also checks the device hash for this device id (a UUID's 16 bytes).
    public func checkingDevice(_ identifier: UUID) -> Self {
        var copy = self
        copy.deviceIdentifier = withUnsafeBytes(of: identifier.uuid) { Array($0) }
        return copy
    }
}
