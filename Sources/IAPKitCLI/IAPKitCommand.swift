public import ArgumentParser

/// The `iapkit` tool: in-app purchases on the command line.
public struct IAPKitCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "iapkit",
        abstract:
            "In-app purchases end to end: verify App Store receipts and signed data, in pure Swift, anywhere Swift runs.",
        subcommands: [
            ServeCommand.self, ReceiptCommand.self, JWSCommand.self, CatalogCommand.self, EntitlementsCommand.self,
            SimulateCommand.self, APICommand.self,
        ]
    )

    public init() {}
}

/// `iapkit receipt ...`: StoreKit 1 app receipts.
public struct ReceiptCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "receipt",
        abstract: "Inspect and verify App Store receipts (PKCS#7, StoreKit 1).",
        subcommands: [ReceiptInspectCommand.self, ReceiptVerifyCommand.self]
    )

    public init() {}
}
