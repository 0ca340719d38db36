import ArgumentParser
import Foundation
import IAPCatalog
import IAPEntitlements
import IAPReceipts
import IAPSignedData
import IAPSimulator
import IAPStoreClient
import IAPStoreClientTesting
import IAPTrust
import Logging

/// The seeds' florist app in a terminal: the StoreClient over `iapkit serve`'s local App Store.
///
/// ```sh
/// swift run iapkit serve --pki .iapkit-pki &
/// swift run florist --account ana --create-account --pki .iapkit-pki
/// ```
@main
struct FloristTerminal: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "florist",
        abstract: "The florist app in a terminal, buying from the local App Store of a running `iapkit serve`.",
        discussion: """
            Type a command and press return: buy N, consume N, restore, refund N, redeem CODE, \
            mode signed|receipt|server, refresh, help, quit. N is the number the screen shows before a product.
            """)

    @Option(help: "The server (default http://127.0.0.1:8080).")
    var server = "http://127.0.0.1:8080"

    @Option(help: "The simulated customer's account.")
    var account = "ana"

    @Flag(help: "Open the account when the simulator does not know it.")
    var createAccount = false

    @Option(help: "The folder `iapkit serve --pki` signs with: the app trusts its root certificates (only those).")
    var pki: String

    @Option(help: "The product configuration (default the florist example).")
    var catalog = "Examples/Florist/Florist.storekit"

    @Option(help: "How purchases are validated: signed (on device, the default), receipt (on device) or server.")
    var mode: ValidationChoice = .signed

    @Option(
        name: [.customLong("app-key"), .customLong("api-key")],
        help: "The app's key for server validation: an app key (`iapkit serve --app-key ID=KEY`), safe in an app.")
    var apiKey: String?

    @Option(help: "The server's admin token, when its /simulator requires one.")
    var adminToken: String?

    func run() async throws {
        LoggingSystem.bootstrap { _ in SwiftLogNoOpLogHandler() }
        guard let url = URL(string: server) else { throw ValidationError("--server must be a URL") }
        let products = try Catalog.load(contentsOfFile: catalog)
        let trust = try TrustStore(
            roots: [SimulatorPKI.FileName.receiptRoot, SimulatorPKI.FileName.jwsRoot].flatMap {
                try TrustAnchorLoader.certificates(
                    contentsOfFile: URL(fileURLWithPath: pki).appendingPathComponent($0).path)
            })
        let backend = try await HTTPStoreBackend.connect(
            to: url, account: account, adminToken: adminToken, createAccount: createAccount)
        let app = FloristApp(
            catalog: products, backend: backend, trust: trust, server: url, apiKey: apiKey, output: Screen())
        try await app.run(startingIn: mode)
    }
}

/// The three validation modes, as typed.
enum ValidationChoice: String, ExpressibleByArgument, CaseIterable, Sendable {
    case signed, receipt, server

    var title: String {
        switch self {
        case .signed: "signed transactions, verified on this device"
        case .receipt: "app receipt, verified on this device"
        case .server: "validated by the server"
        }
    }
}

/// Where the app writes: the terminal, cleared before each screen when it is one.
struct Screen: Sendable {
    let isTerminal = isatty(STDOUT_FILENO) == 1

    func show(_ lines: [String]) {
        var text = isTerminal ? "\u{1B}[2J\u{1B}[H" : ""
        text += lines.joined(separator: "\n") + "\n> "
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
