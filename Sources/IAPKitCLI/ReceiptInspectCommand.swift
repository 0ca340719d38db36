public import ArgumentParser
import Foundation
import IAPReceipts
import IAPTrust

/// `iapkit receipt inspect FILE... [--json]`: decodes receipts without verifying them.
public struct ReceiptInspectCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Decode receipts (binary or base64; - for standard input) and show every field.",
        discussion: "Decoding is not verification: use `iapkit receipt verify` before trusting what a receipt says."
    )

    @OptionGroup var input: BulkInputOptions

    @Flag(help: "Print one JSON object per document (JSON Lines).")
    var json = false

    public init() {}

    public func run() async throws {
        let status = await execute(output: StandardOutput())
        if status != 0 { throw ExitCode(status) }
    }

    /// Runs the command, writing to `output`; returns the exit status (0 when every document decoded).
    public func execute(output: some CommandOutput) async -> Int32 {
        let json = self.json
        return await input.run(output: output, passed: "decoded", failed: "failed", summaryToStandardError: true) {
            item in
            await CommandText.result(of: item, json: json, failure: "cannot read the receipt", expecting: .receipt) {
                bytes in
                let receipt = try SignedReceipt(bytes: ReceiptInput.receiptBytes(from: bytes)).receipt
                return .passed(
                    json
                        ? JSONLine.encode(ReceiptReport(file: item.name, receipt: receipt))
                        : ReceiptText.describe(receipt, file: item.name))
            }
        }
    }
}

/// The human-readable views of receipts and verdicts.
enum ReceiptText {
    static func date(_ date: Date?) -> String { date.map(ReceiptDate.format) ?? "-" }

    static func describe(_ receipt: AppReceipt, file: String) -> String {
        var lines = ["\(file)"]
        func row(_ label: String, _ value: String) {
            lines.append("  " + label.padding(toLength: 22, withPad: " ", startingAt: 0) + value)
        }
        let environment = receipt.environment.map {
            $0.normalized == $0.rawValue ? $0.rawValue : "\($0.normalized) (\($0.rawValue))"
        }
        row("environment", environment ?? "-")
        row("bundle id", receipt.bundleID)
        row("app version", receipt.appVersion)
        row("original app version", receipt.originalAppVersion ?? "-")
        row("created", date(receipt.creationDate))
        row("expires", date(receipt.expirationDate))
        row("opaque value", receipt.opaqueValue.hexString)
        row("sha1 hash", receipt.sha1Hash.hexString)
        row("in-app purchases", "\(receipt.inAppPurchases.count)")
        for (index, purchase) in receipt.inAppPurchases.enumerated() {
            var notes: [String] = []
            if let type = purchase.productType { notes.append(type.description) }
            if purchase.quantity != 1 { notes.append("quantity \(purchase.quantity)") }
            if let expires = purchase.expiresDate { notes.append("expires \(date(expires))") }
            if purchase.isTrialPeriod { notes.append("trial") }
            if purchase.isInIntroOfferPeriod { notes.append("intro offer") }
            if let offer = purchase.promotionalOfferID { notes.append("offer \(offer)") }
            if let cancelled = purchase.cancellationDate { notes.append("CANCELLED \(date(cancelled))") }
            let original =
                purchase.originalTransactionID.map { $0 == purchase.transactionID ? "" : " (original \($0))" } ?? ""
            lines.append("    \(index + 1). \(purchase.productID)  transaction \(purchase.transactionID)\(original)")
            lines.append(
                "       bought \(date(purchase.purchaseDate))"
                    + (notes.isEmpty ? "" : ", " + notes.joined(separator: ", ")))
        }
        let unknown = receipt.unknownAttributes.map { String($0.type) }
        row(
            "unknown attributes",
            unknown.isEmpty ? "none" : "\(unknown.count) (types \(unknown.joined(separator: ", ")))")
        return lines.joined(separator: "\n")
    }
}
