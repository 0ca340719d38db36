public import ArgumentParser
import Foundation
import IAPServerAPI
import IAPSignedData
import IAPTrust

/// `iapkit api ...`: Apple's App Store Server API (or `iapkit serve`'s copy) from the command line.
public struct APICommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "api",
        abstract: "Call the App Store Server API: Apple's (Sandbox, Production) or iapkit serve's copy (--base-url).",
        discussion: """
            Every signed document in an answer is verified against the --root certificates before it is printed: one \
            line per document with its verdict (JSON Lines with --json). A refusal prints Apple's error code and the \
            command exits 1.
            """,
        subcommands: [
            APITransactionCommand.self, APIHistoryCommand.self, APIStatusCommand.self, APIRefundsCommand.self,
            APIOrderCommand.self, APIExtendCommand.self, APIConsumptionCommand.self, APITestNotificationCommand.self,
            APINotificationsCommand.self,
        ]
    )

    public init() {}
}

/// What every `iapkit api` command needs: the key, who calls, where, and what to trust.
struct APIOptions: ParsableArguments {
    @Option(help: "The In-App Purchase key from App Store Connect (the .p8 file).")
    var key: String

    @Option(help: "The key's id.")
    var keyId: String

    @Option(help: "Your team's issuer id (App Store Connect, Users and Access, Integrations).")
    var issuerId: String

    @Option(help: "The app's bundle id.")
    var bundleId: String

    @Option(help: "Sandbox or Production: Apple's host, and the environment documents must claim.")
    var environment: String = "Sandbox"

    @Option(help: "Call this server instead of Apple's (iapkit serve: http://127.0.0.1:8080).")
    var baseUrl: String?

    @Option(help: "The app's Apple id (Production documents are checked against it).")
    var appAppleId: Int64?

    @OptionGroup var trust: TrustOptions

    @Flag(help: "Print one JSON object per line (JSON Lines).")
    var json = false

    func validate() throws {
        guard ["Sandbox", "Production"].contains(environment) else {
            throw ValidationError("--environment is Sandbox or Production")
        }
        if let baseUrl, URL(string: baseUrl)?.scheme.map({ ["http", "https"].contains($0) }) != true {
            throw ValidationError("--base-url needs an http or https URL")
        }
    }

    /// The client the options describe, or nil after reporting why it cannot be made.
    func client(output: some CommandOutput) -> ServerAPIClient? {
        do {
            let pem = String(decoding: try InputFile.read(key), as: UTF8.self)
            let credentials = try ServerAPICredentials(keyID: keyId, issuerID: issuerId, bundleID: bundleId, p8: pem)
            guard let trustStore = trust.trustStore(output: output) else { return nil }
            let documents = AppStoreEnvironment(rawValue: environment)
            let verifier = try SignedDataVerifier(
                trustStore: trustStore,
                configuration: .init(bundleID: bundleId, appAppleID: appAppleId, environments: [documents]))
            let target: ServerAPIEnvironment =
                if let baseUrl, let url = URL(string: baseUrl) {
                    .custom(url)
                } else {
                    environment == "Production" ? .production : .sandbox
                }
            return ServerAPIClient(credentials: credentials, environment: target, verifier: verifier)
        } catch {
            let (code, reason) = CommandText.codeAndReason(of: error)
            output.line(json ? JSONLine.encode(APIErrorLine(code: code, reason: reason)) : "error: \(code): \(reason)")
            return nil
        }
    }
}

/// Writes the documents and facts of answers, and refusals, as text or JSON Lines.
struct APIPrinter {
    let output: any CommandOutput
    let json: Bool

    /// One verified document: its kind, a summary for people, and its payload.
    func document(_ kind: String, _ summary: String, payload: JSONValue) {
        if json {
            output.line(
                JSONLine.encode(
                    APIDocumentLine(kind: kind, verdict: "verified", payload: EncodableJSON(value: payload))))
        } else {
            output.line("\(kind) \(summary): verified")
        }
    }

    func transaction(_ payload: TransactionPayload) {
        let id = payload.transactionID ?? "?"
        let product = payload.productID ?? "?"
        let date = payload.purchaseDate.map { " purchased \(Self.text($0.date))" } ?? ""
        let revoked = payload.revocationDate.map { " revoked \(Self.text($0.date))" } ?? ""
        let expires = payload.expiresDate.map { " expires \(Self.text($0.date))" } ?? ""
        document("transaction", "\(id) \(product)\(date)\(expires)\(revoked)", payload: payload.json)
    }

    /// A fact of an answer that is not a signed document (an extension's result, an order's status).
    func fact(_ kind: String, _ fields: [(String, JSONValue)], text: String) {
        if json {
            var object = JSONObject([("kind", .string(kind))])
            for (key, value) in fields { object[key] = value }
            output.line(JSONLine.encode(EncodableJSON(value: .object(object))))
        } else {
            output.line("\(kind) \(text)")
        }
    }

    /// A refusal or failure; returns the exit status.
    func failure(_ error: ServerAPIError) -> Int32 {
        if json {
            output.line(
                JSONLine.encode(
                    APIErrorLine(
                        code: error.code.rawValue, reason: error.reason, appleErrorCode: error.appleErrorCode,
                        httpStatus: error.httpStatus)))
        } else {
            output.line(
                "error: \(error.code)" + (error.appleErrorCode.map { " \($0)" } ?? "")
                    + (error.httpStatus.map { " (HTTP \($0))" } ?? "") + ": \(error.reason)")
        }
        return 1
    }

    static func text(_ date: Date) -> String { date.formatted(.iso8601) }
}

struct APIDocumentLine: Encodable {
    let kind: String
    let verdict: String
    let payload: EncodableJSON
}

struct APIErrorLine: Encodable {
    let code: String
    let reason: String
    var appleErrorCode: Int?
    var httpStatus: Int?
}

/// Runs an `iapkit api` command body with a client, turning its refusal into the printed error and exit status.
enum APIRun {
    static func run(
        _ options: APIOptions, output: some CommandOutput,
        _ body: (ServerAPIClient, APIPrinter) async throws(ServerAPIError) -> Void
    ) async -> Int32 {
        let printer = APIPrinter(output: output, json: options.json)
        guard let client = options.client(output: output) else { return 1 }
        do {
            try await body(client, printer)
            return 0
        } catch {
            return printer.failure(error)
        }
    }

    /// Runs the command and exits with its status.
    static func exit(_ status: Int32) throws { if status != 0 { throw ExitCode(status) } }
}

/// A date given on the command line: ISO 8601, or epoch milliseconds.
struct APIDate: ExpressibleByArgument {
    let date: Date

    init?(argument: String) {
        if let milliseconds = Int64(argument), milliseconds > -(1 << 50), milliseconds < 1 << 50 {
            date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        } else if let parsed = try? Date(argument, strategy: .iso8601) {
            date = parsed
        } else {
            return nil
        }
    }
}

// MARK: - The commands

/// `iapkit api transaction ID`.
struct APITransactionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transaction", abstract: "Get transaction info: one transaction by id.")
    @OptionGroup var options: APIOptions
    @Argument(help: "A transaction id.") var transactionId: String

    func run() async throws { try APIRun.exit(await execute(output: StandardOutput())) }

    func execute(output: some CommandOutput) async -> Int32 {
        await APIRun.run(options, output: output) { (client, printer) throws(ServerAPIError) in
            printer.transaction(try await client.transactionInfo(transactionId))
        }
    }
}

/// `iapkit api history ID`.
struct APIHistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history", abstract: "Get a customer's transaction history (v2), every page.")
    @OptionGroup var options: APIOptions
    @Argument(help: "Any transaction id of the customer.") var transactionId: String
    @Option(help: "Only this product (repeatable).") var productId: [String] = []
    @Option(help: "Only this type: AUTO_RENEWABLE, NON_RENEWABLE, CONSUMABLE, NON_CONSUMABLE (repeatable).")
    var productType: [String] = []
    @Flag(help: "Newest purchase first.") var descending = false

    func run() async throws { try APIRun.exit(await execute(output: StandardOutput())) }

    func execute(output: some CommandOutput) async -> Int32 {
        let query = TransactionHistoryQuery(
            productIDs: productId, productTypes: productType, sort: descending ? .descending : .ascending)
        return await APIRun.run(options, output: output) { (client, printer) throws(ServerAPIError) in
            for try await transaction in client.transactionHistory(transactionId, query: query) {
                printer.transaction(transaction)
            }
        }
    }
}

/// `iapkit api status ID`.
struct APIStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Get all subscription statuses: each subscription's transaction and renewal info.")
    @OptionGroup var options: APIOptions
    @Argument(help: "Any transaction id of the customer.") var transactionId: String
    @Option(help: "Only this status: 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked (repeatable).")
    var status: [Int] = []

    func run() async throws { try APIRun.exit(await execute(output: StandardOutput())) }

    func execute(output: some CommandOutput) async -> Int32 {
        await APIRun.run(options, output: output) { (client, printer) throws(ServerAPIError) in
            let statuses = try await client.subscriptionStatuses(transactionId, statuses: status)
            for group in statuses.groups {
                for subscription in group.lastTransactions {
                    printer.fact(
                        "subscription",
                        [
                            ("groupId", .string(group.groupID)),
                            ("status", .number(JSONNumber(Int64(subscription.status)))),
                            ("originalTransactionId", .string(subscription.originalTransactionID)),
                        ],
                        text: "\(group.groupID) \(subscription.originalTransactionID) status \(subscription.status)")
                    printer.transaction(subscription.transaction)
                    let renewal = subscription.renewalInfo
                    printer.document(
                        "renewal",
                        "\(renewal.originalTransactionID ?? "?") renews to \(renewal.autoRenewProductID ?? "?")",
                        payload: renewal.json)
                }
            }
        }
    }
}

/// `iapkit api refunds ID`.
struct APIRefundsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "refunds", abstract: "Get a customer's refund history, every page.")
    @OptionGroup var options: APIOptions
    @Argument(help: "Any transaction id of the customer.") var transactionId: String

    func run() async throws { try APIRun.exit(await execute(output: StandardOutput())) }

    func execute(output: some CommandOutput) async -> Int32 {
        await APIRun.run(options, output: output) { (client, printer) throws(ServerAPIError) in
            for try await transaction in client.refundHistory(transactionId) { printer.transaction(transaction) }
        }
    }
}

/// `iapkit api order ORDER_ID`.
struct APIOrderCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "order", abstract: "Look up an order id from a customer's emailed receipt.")
    @OptionGroup var options: APIOptions
    @Argument(help: "The order id.") var orderId: String

    func run() async throws { try APIRun.exit(await execute(output: StandardOutput())) }

    func execute(output: some CommandOutput) async -> Int32 {
        await APIRun.run(options, output: output) { (client, printer) throws(ServerAPIError) in
            let found = try await client.lookUpOrder(orderId)
            printer.fact(
                "order", [("orderId", .string(orderId)), ("status", .number(JSONNumber(Int64(found.status))))],
                text: "\(orderId) \(found.isValid ? "valid" : "invalid (status \(found.status))")")
            for transaction in found.transactions { printer.transaction(transaction) }
        }
    }
}

/// `iapkit api extend ORIGINAL_ID --days N`.
struct APIExtendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extend", abstract: "Extend a subscription's renewal date.")
    @OptionGroup var options: APIOptions
    @Argument(help: "The subscription's original transaction id.") var originalTransactionId: String
    @Option(help: "Days, 1 to 90.") var days: Int
    @Option(help: "0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage.") var reason = 0
    @Option(help: "Your id for the request (sending it again does not extend twice); a new UUID by default.")
    var requestId: String?

    func run() async throws { try APIRun.exit(await execute(output: StandardOutput())) }

    func execute(output: some CommandOutput) async -> Int32 {
        let identifier = requestId ?? UUID().uuidString.lowercased()
        return await APIRun.run(options, output: output) { (client, printer) throws(ServerAPIError) in
            let result = try await client.extendRenewalDate(
                originalTransactionID: originalTransactionId, days: days, reasonCode: reason,
                requestIdentifier: identifier)
            let effective = result.effectiveDate.map(APIPrinter.text) ?? "?"
            printer.fact(
                "extension",
                [
                    ("originalTransactionId", .string(result.originalTransactionID)),
                    ("success", .bool(result.success)),
                    ("effectiveDate", .string(effective)), ("requestIdentifier", .string(identifier)),
                ],
                text: "\(result.originalTransactionID) \(result.success ? "extended" : "not extended") to \(effective)")
        }
    }
}

/// `iapkit api consumption ID`.
struct APIConsumptionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "consumption", abstract: "Send consumption information for a refund request.")
    @OptionGroup var options: APIOptions
    @Argument(help: "The transaction the refund request is about.") var transactionId: String
    @Option(
        help:
            "DELIVERED, UNDELIVERED_QUALITY_ISSUE, UNDELIVERED_WRONG_ITEM, UNDELIVERED_SERVER_OUTAGE, UNDELIVERED_OTHER."
    )
    var deliveryStatus = "DELIVERED"
    @Option(help: "How much was consumed, in milli-percent (100000 is all).") var consumptionPercentage: Int?
    @Option(help: "DECLINE, GRANT_FULL or GRANT_PRORATED.") var refundPreference: String?
    @Flag(help: "Sample content was provided.") var sampleContentProvided = false

    func validate() throws {
        guard ConsumptionInformation.DeliveryStatus(rawValue: deliveryStatus) != nil else {
            throw ValidationError("unknown --delivery-status \(deliveryStatus)")
        }
        if let refundPreference, ConsumptionInformation.RefundPreference(rawValue: refundPreference) == nil {
            throw ValidationError("unknown --refund-preference \(refundPreference)")
        }
    }

    func run() async throws { try APIRun.exit(await execute(output: StandardOutput())) }

    func execute(output: some CommandOutput) async -> Int32 {
        let information = ConsumptionInformation(
            customerConsented: true, sampleContentProvided: sampleContentProvided,
            deliveryStatus: ConsumptionInformation.DeliveryStatus(rawValue: deliveryStatus) ?? .delivered,
            consumptionPercentage: consumptionPercentage,
            refundPreference: refundPreference.flatMap(ConsumptionInformation.RefundPreference.init(rawValue:)))
        return await APIRun.run(options, output: output) { (client, printer) throws(ServerAPIError) in
            try await client.sendConsumptionInformation(transactionId, information)
            printer.fact("consumption", [("transactionId", .string(transactionId))], text: "\(transactionId) sent")
        }
    }
}

/// `iapkit api test-notification`.
struct APITestNotificationCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test-notification",
        abstract: "Ask for a TEST notification, then show it with its send attempts (waiting up to --wait seconds).")
    @OptionGroup var options: APIOptions
    @Option(help: "Seconds to wait for a first send attempt.") var wait = 5

    func run() async throws { try APIRun.exit(await execute(output: StandardOutput())) }

    func execute(output: some CommandOutput) async -> Int32 {
        let patience = min(max(wait, 0), 120)
        return await APIRun.run(options, output: output) { (client, printer) throws(ServerAPIError) in
            let token = try await client.requestTestNotification()
            var sent = try await client.testNotificationStatus(token)
            let deadline = ContinuousClock.now + .seconds(patience)
            while sent.sendAttempts.isEmpty, ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(250))
                sent = try await client.testNotificationStatus(token)
            }
            printer.fact("test-notification", [("token", .string(token))], text: token)
            APINotificationsCommand.print(sent, printer)
        }
    }
}

/// `iapkit api notifications --start DATE`.
struct APINotificationsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notifications", abstract: "Get the notification history, every page, with send attempts.")
    @OptionGroup var options: APIOptions
    @Option(help: "From (ISO 8601 or epoch milliseconds; at most 180 days ago).") var start: APIDate
    @Option(help: "Until (ISO 8601 or epoch milliseconds; now by default).") var end: APIDate?
    @Option(help: "Only this notification type (DID_RENEW, ...).") var type: String?
    @Option(help: "Only this subtype.") var subtype: String?
    @Option(help: "Only this customer's notifications (any of their transaction ids).") var transactionId: String?
    @Flag(help: "Only notifications that never reached your server.") var onlyFailures = false

    func run() async throws { try APIRun.exit(await execute(output: StandardOutput())) }

    func execute(output: some CommandOutput) async -> Int32 {
        let query = NotificationHistoryQuery(
            startDate: start.date, endDate: end?.date ?? Date(), notificationType: type, notificationSubtype: subtype,
            transactionId: transactionId, onlyFailures: onlyFailures ? true : nil)
        return await APIRun.run(options, output: output) { (client, printer) throws(ServerAPIError) in
            for try await sent in client.notificationHistory(query) { Self.print(sent, printer) }
        }
    }

    static func print(_ sent: SentNotification, _ printer: APIPrinter) {
        let payload = sent.payload
        let name = [payload.notificationType?.rawValue, payload.subtype?.rawValue].compactMap { $0 }
            .joined(separator: "/")
        let attempts = sent.sendAttempts.map(\.result).joined(separator: ",")
        var json = payload.json
        if case .object(var object) = json {
            object["sendAttempts"] = .array(
                sent.sendAttempts.map {
                    .object(
                        JSONObject([
                            ("attemptDate", .string(APIPrinter.text($0.date))),
                            ("sendAttemptResult", .string($0.result)),
                        ]))
                })
            json = .object(object)
        }
        printer.document(
            "notification",
            "\(name) \(payload.notificationUUID ?? "?") attempts \(attempts.isEmpty ? "none" : attempts)",
            payload: json)
    }
}
