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

    @Argument(help: "Receipt files, binary DER/BER or base64 text; - reads standard input.")
    var files: [String]

    @Flag(help: "Print one JSON object per file (JSON Lines).")
    var json = false

    public init() {}

    public func run() async throws {
        let status = execute(output: StandardOutput())
        if status != 0 { throw ExitCode(status) }
    }

    /// Runs the command, writing to `output`; returns the exit status (0 when every file decoded).
    public func execute(output: some CommandOutput) -> Int32 {
        CommandText.eachFile(files, json: json, output: output, failure: "cannot read the receipt") { file in
            let receipt = try SignedReceipt(bytes: ReceiptInput.receiptBytes(from: InputFile.read(file))).receipt
            return json
                ? JSONLine.encode(ReceiptReport(file: file, receipt: receipt))
                : ReceiptText.describe(receipt, file: file)
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
