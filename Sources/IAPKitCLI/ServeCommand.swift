public import ArgumentParser
import Configuration
import Foundation
import IAPServer
import IAPSimulatorServer
import Logging
import NIOCore
import NIOPosix

/// `iapkit serve`: the validation server, with the local App Store beside it, in one command.
public struct ServeCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the validation server (SQLite by default) with the local App Store feeding it.",
        discussion: """
            Verifies signed transactions (POST /v1/transactions), takes App Store Server Notifications V2 \
            (POST /v1/notifications), and answers what customers own (GET /v1/customers/ID/entitlements, with an \
            API key). With the simulator on (the default) the local App Store sells the catalog, signs with its own \
            PKI (--pki DIR keeps it between runs, shared with `iapkit simulate --pki`), and every notification it \
            makes is applied by the server, so one process shows the whole loop. Stop it with Ctrl-C: requests in \
            flight finish and the database closes cleanly.
            """
    )

    @Option(
        help:
            "A JSON configuration file (apps, roots, secrets, keys; see the validation server in docs/tour.md). IAPKIT_* environment variables override it, flags override both."
    )
    var config: String?

    @Option(help: "The address to listen on (default 127.0.0.1, loopback only).")
    var host: String?

    @Option(help: "The port to listen on (default 8080).")
    var port: Int?

    @Option(help: "An SQLite file path (default iapkit.sqlite), ':memory:', or a postgres:// URL.")
    var database: String?

    @Option(help: "The simulator's catalog (.storekit or Products.plist; default the florist example).")
    var catalog: String?

    @Option(help: "The simulated app's bundle id (default com.example.florist).")
    var bundleId: String?

    @Option(help: "Sign with the authority saved in this folder (made there if absent).")
    var pki: String?

    @Option(
        name: .customLong("api-key"),
        help: "An API key for the customer endpoints, 16 characters or more (repeatable; one is made if none).")
    var apiKeys: [String] = []

    @Option(
        name: .customLong("app-key"),
        help: ArgumentHelp(
            "A key of the simulated app that is safe to ship in the app, as ID=KEY (repeatable).",
            discussion: "KEY is 16 characters or more. With one, posting the simulated app's documents needs a key.",
            valueName: "ID=KEY"))
    var appKeys: [String] = []

    @Option(
        name: .customLong("secret-key"),
        help: ArgumentHelp(
            "A key of the simulated app for its backend (listings, refresh), as ID=KEY (repeatable).",
            discussion: "KEY is 16 characters or more.", valueName: "ID=KEY"))
    var secretKeys: [String] = []

    @Option(
        name: .customLong("webhook"),
        help: ArgumentHelp(
            "A URL that receives the simulated app's events (repeatable; needs --webhook-secret).", valueName: "URL"))
    var webhooks: [String] = []

    @Option(
        name: .customLong("webhook-secret"),
        help: "The secret the simulated app's webhook deliveries are signed with (HMAC-SHA256, 16 characters or more).")
    var webhookSecret: String?

    @Option(
        name: .customLong("transfer-policy"),
        help: "What a claim on a purchase another customer holds does: refuse (409, the default), keep or transfer.")
    var transferPolicy: String?

    @Option(
        name: .customLong("answer-key"),
        help: ArgumentHelp(
            "Sign answers for apps that send a nonce with this P-256 private key, as ID=FILE (PEM).",
            valueName: "ID=FILE"))
    var answerKey: String?

    @Option(
        help:
            "The token /simulator, /console and /metrics require, 16 characters or more (needed outside development mode: with apps configured or beyond loopback)."
    )
    var adminToken: String?

    @Option(
        name: .customLong("allowed-host"),
        help: "A public name requests may carry in Host, such as the name a proxy in front serves (repeatable).")
    var allowedHosts: [String] = []

    @Option(
        name: .customLong("server-api-key"),
        help: ArgumentHelp(
            "An App Store Server API key the simulated /inApps accepts, as KEYID=FILE (repeatable).",
            discussion: "FILE is the .p8 from App Store Connect or its public key in PEM.", valueName: "KEYID=FILE"))
    var serverAPIKeys: [String] = []

    @Option(name: .customLong("server-api-issuer"), help: "The issuer id /inApps tokens must carry.")
    var serverAPIIssuer: String?

    @Flag(help: "Do not run the local App Store (the configuration must name at least one app).")
    var noSimulator = false

    public init() {}

    public func validate() throws {
        if let port, !(0...65_535).contains(port) { throw ValidationError("--port must be 0 to 65535") }
    }

    public func run() async throws {
        var logger = Logger(label: "iapkit", factory: ServerLogHandler.standardOutput)
        logger.logLevel = .info
        var settings = try await loadSettings()
        let generatedKey = settings.server.apiKeys.isEmpty
        if generatedKey { settings.server.apiKeys = [UUID().uuidString.lowercased()] }
        try await Self.checkListening(host: settings.server.host, port: settings.server.port)
        // The local App Store is added beside the validation server when the settings turn it on.
        let runtime = try await ServerRuntime.start(
            settings, logger: logger, additions: [LocalAppStoreAddition.maker()])
        let key = settings.server.apiKeys[0]
        let served = runtime.service.bundleIDs.joined(separator: ", ")
        let simulatorLine =
            runtime.simulatorServed != nil
            ? "  curl \(settings.adminToken == nil ? "" : "-H 'Authorization: Bearer ADMIN_TOKEN' ")ADDRESS/simulator"
            : nil
        let mode =
            switch settings.operatorAccess {
            case .open:
                "Development mode: the operator routes (/simulator, /console, /metrics) need no token on this machine."
            case .token: "The operator routes (/simulator, /console, /metrics) need the admin token."
            case .refused: "The operator routes refuse everyone: set --admin-token to use them."
            }
        let simulatedKeys = settings.simulator?.accessKeys ?? []
        let keysLine =
            settings.simulator == nil
            ? nil
            : simulatedKeys.isEmpty
                ? "The simulated app has no keys: its documents post without one (give it --app-key ID=KEY)."
                : "The simulated app's keys: "
                    + simulatedKeys.map { "\($0.id) (\($0.scope == .app ? "app key, safe in the app" : "secret"))" }
                    .joined(separator: ", ")
        let database = (try? DatabaseName(settings.databaseURL))?.description ?? settings.databaseURL
        let sellsHere = runtime.simulator != nil && database != ":memory:"
        let elsewhereLine =
            sellsHere
            ? "The local App Store sells here (this server holds its lease on the database)."
            : runtime.simulatorHeldElsewhere.map {
                "The local App Store sells on another server of this database (\($0)): here its documents verify, "
                    + "and /simulator, /inApps, /store and /manager answer 503 until this one takes the store over (when "
                    + "that one stops)."
            }
        let server = settings.server
        let apiKeys = (runtime.simulatorServed != nil ? settings.simulator?.serverAPIKeys.keys.sorted() : nil) ?? []
        let banner: @Sendable (any Channel) async -> Void = { channel in
            let address = "http://\(server.host):\(channel.localAddress?.port ?? server.port)"
            let banner = """
                IAPKit server on \(address)  (database: \(database); apps: \(served))
                \(mode)
                In a browser: \(address)/  (\(simulatorLine == nil ? "" : "\(address)/store to buy as a test customer, ")\(address)/inspector to check any receipt or JWS)
                Server-wide secret key (every app's customers): \(generatedKey ? "\(key) (made for this run; pass --api-key)" : "as configured")
                \(keysLine.map { $0 + "\n" } ?? "")\
                \(elsewhereLine.map { $0 + "\n" } ?? "")\
                Try first:
                  curl \(address)/health
                \(simulatorLine.map { $0.replacingOccurrences(of: "ADDRESS", with: address) + "\n" } ?? "")\
                \(apiKeys.isEmpty ? "" : "  App Store Server API: \(address)/inApps (keys \(apiKeys.joined(separator: ", ")))\n")\
                  curl -H 'Authorization: Bearer \(generatedKey ? key : "API_KEY")' \(address)/v1/customers/CUSTOMER/entitlements

                """
            // Written at once and unbuffered, so a script reading the output sees the address immediately.
            FileHandle.standardOutput.write(Data(banner.utf8))
        }
        do {
            try await runtime.run(onServerRunning: banner)
        } catch let error as IOError where error.errnoCode == EADDRINUSE || error.errnoCode == EADDRNOTAVAIL {
            throw Self.listeningFailure(error, host: server.host, port: server.port)
        }
    }

    /// Binds the address once and lets it go, before the database is opened: a port in use was told only after the
    /// tables were made ready and the local App Store's lease watched (3 s), and a server that could take the store
    /// over did so before it exited (an operator's trial). Port 0 takes a free one: nothing to check.
    static func checkListening(host: String, port: Int) async throws {
        guard port != 0 else { return }
        do {
            let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .serverChannelOption(.autoRead, value: false)  // nothing accepted: a client arriving meanwhile is reset
                .bind(host: host, port: port).get()
            try await channel.close()
        } catch let error as IOError where error.errnoCode == EADDRINUSE || error.errnoCode == EADDRNOTAVAIL {
            throw listeningFailure(error, host: host, port: port)
        }
    }

    /// What `serve` says when it cannot listen where it was told to.
    static func listeningFailure(_ error: IOError, host: String, port: Int) -> ServeFailure {
        ServeFailure(
            error.errnoCode == EADDRINUSE
                ? "port \(port) on \(host) is already in use (another iapkit serve?): choose another with --port, or "
                    + "stop what listens there"
                : "cannot listen on \(host): no interface of this machine has that address (--host)")
    }

    /// A reason `serve` could not start, said in the terms of its flags.
    struct ServeFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The settings from the configuration file, the environment (`IAPKIT_...`) and the flags, in rising precedence.
    func loadSettings() async throws -> ServerSettings {
        var flags: [AbsoluteConfigKey: ConfigValue] = [:]
        func set(_ key: String, _ content: ConfigContent?) {
            if let content {
                flags[AbsoluteConfigKey(key.split(separator: ".").map(String.init))] = .init(content, isSecret: false)
            }
        }
        set("server.host", host.map { .string($0) })
        set("server.port", port.map { .int($0) })
        set("database.url", database.map { .string($0) })
        set("simulator.catalog", catalog.map { .string(URL(fileURLWithPath: $0).path) })
        set("simulator.bundleId", bundleId.map { .string($0) })
        set("simulator.pki", pki.map { .string(URL(fileURLWithPath: $0).path) })
        set("apiKeys", apiKeys.isEmpty ? nil : .stringArray(apiKeys))
        set("adminToken", adminToken.map { .string($0) })
        if let answerKey {
            let parts = answerKey.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw ValidationError("--answer-key is ID=FILE") }
            set("answerSigning.keyId", .string(parts[0]))
            set("answerSigning.key", .string(URL(fileURLWithPath: parts[1]).path))
        }
        set("simulator.webhooks.urls", webhooks.isEmpty ? nil : .stringArray(webhooks))
        set("simulator.webhooks.secret", webhookSecret.map { .string($0) })
        set("simulator.transferPolicy", transferPolicy.map { .string($0) })
        set("simulator.appKeys", appKeys.isEmpty ? nil : .stringArray(appKeys))
        set("simulator.secretKeys", secretKeys.isEmpty ? nil : .stringArray(secretKeys))
        set("server.allowedHosts", allowedHosts.isEmpty ? nil : .stringArray(allowedHosts))
        set(
            "simulator.serverApiKeys",
            serverAPIKeys.isEmpty
                ? nil
                : .stringArray(
                    serverAPIKeys.map { entry in
                        // A relative file is the caller's, not the configuration file's.
                        guard let equals = entry.firstIndex(of: "=") else { return entry }
                        return entry[..<equals] + "="
                            + URL(fileURLWithPath: String(entry[entry.index(after: equals)...])).path
                    }))
        set("simulator.serverApiIssuerId", serverAPIIssuer.map { .string($0) })
        if noSimulator { set("simulator.enabled", .bool(false)) }
        var providers: [any ConfigProvider] = [
            InMemoryProvider(name: "flags", values: flags),
            EnvironmentVariablesProvider().prefixKeys(with: "iapkit"),
        ]
        var base = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        if let config {
            let file = URL(fileURLWithPath: config)
            try Self.checkConfigurationFile(file, named: config)
            do {
                let location = InMemoryProvider(values: [
                    AbsoluteConfigKey(["filePath"]): .init(.string(file.path), isSecret: false)
                ])
                providers.append(try await FileProvider<JSONSnapshot>(config: ConfigReader(provider: location)))
            } catch {
                throw ServeFailure("--config \(config): \(error)")
            }
            base = file.deletingLastPathComponent()
        }
        do {
            return try ServerSettings.load(from: ConfigReader(providers: providers), baseDirectory: base)
        } catch {
            throw ServeFailure(error.reason)
        }
    }

    /// Refuses a configuration file that is missing, unreadable or not a JSON object, saying which and where,
    /// before the configuration library reads it (its own errors are Foundation's domain and code).
    static func checkConfigurationFile(_ file: URL, named name: String) throws {
        var folder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: file.path, isDirectory: &folder) else {
            throw ServeFailure("--config \(name): no such file")
        }
        guard !folder.boolValue else { throw ServeFailure("--config \(name) is a folder: name the JSON file in it") }
        guard let data = try? Data(contentsOf: file) else { throw ServeFailure("--config \(name): cannot be read") }
        let value: Any
        do {
            value = try JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)
        } catch {
            let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String
            throw ServeFailure("--config \(name) is not valid JSON" + (detail.map { ": \($0)" } ?? ""))
        }
        guard value is [String: Any] else {
            throw ServeFailure("--config \(name): the file must hold one JSON object (its keys are the settings)")
        }
    }
}
