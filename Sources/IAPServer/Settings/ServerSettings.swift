public import Configuration
public import Crypto
public import Foundation
import IAPCatalog
public import IAPCore
import IAPServerAPI
import IAPSignedData
import IAPTrust
import X509

/// Everything `iapkit serve` needs, read from a configuration file, environment variables and command-line flags
/// (apple/swift-configuration), each key checked: a bad value stops start-up with a ``ConfigurationProblem`` naming
/// the key.
///
/// Keys (JSON nesting shown with dots; the environment variable is the key upper-cased with `_`, prefixed `IAPKIT_`,
/// for example `IAPKIT_SERVER_PORT` or `IAPKIT_APP_FLORIST_SHARED_SECRET`):
/// - `server.host` (default 127.0.0.1), `server.port` (8080), `server.maximumBodySize` (bytes, 1 MiB),
///   `server.allowedHosts` (the public names a proxy in front serves; loopback names are always allowed),
///   `server.headerTimeout` (seconds, 10), `server.bodyTimeout` (30), `server.idleTimeout` (60),
///   `server.maximumConnections` (4,096, or the file limit less 128)
/// - `database.url`: an SQLite path (default `iapkit.sqlite`), `:memory:`, or a `postgres://` URL
/// - `answerSigning.keyId` and `answerSigning.key` (a P-256 private key in PEM, as `openssl ecparam -name prime256v1
///   -genkey | openssl pkcs8 -topk8 -nocrypt` writes): the key answers are signed with for apps that send a nonce
/// - `apiKeys`: keys for the customer endpoints; `adminToken`: the token `/simulator`, `/console` and `/metrics`
///   require whenever the server is not in development mode (no app configured, loopback only)
/// - `apps`: names of the apps served; for each name `app.NAME.bundleId`, `app.NAME.appAppleId`,
///   `app.NAME.environments` (Production, Sandbox, Xcode), `app.NAME.roots` (certificate files),
///   `app.NAME.xcodeCertificate` (accepts Xcode-signed data), `app.NAME.sharedSecret`, `app.NAME.catalog`,
///   `app.NAME.maximumNotificationAge` (seconds), `app.NAME.serverApi.keyId`, `app.NAME.serverApi.issuerId`,
///   `app.NAME.serverApi.key` (the `.p8`) and `app.NAME.serverApi.baseUrl` (optional): the App Store Server API key
///   `POST /v1/customers/{id}/refresh` uses; `app.NAME.appKeys` and `app.NAME.secretKeys` (`ID=KEY` entries, see
///   ``AccessKey``: app keys ship in the app, secret keys stay on its backend); `app.NAME.webhooks.urls` and
///   `app.NAME.webhooks.secret` (where the app's events go, signed with the secret); `app.NAME.transferPolicy`
///   (refuse, keep or transfer: a claim on a purchase another customer holds); `app.NAME.consumption.customerConsent`,
///   `app.NAME.consumption.refundPreference` (decline, grantFull, grantProrated) and
///   `app.NAME.consumption.sampleContentProvided` (answers to Apple's consumption requests, with the serverApi key)
/// - `events.firstRetry` (seconds, 10), `events.retryFor` (seconds, three days), `events.lease` (seconds, 60),
///   `events.timeout` (seconds, 10), `events.pollInterval` (milliseconds, 1,000), `events.concurrency` (16),
///   `events.send` (true; false leaves announcing and sending to other instances), `events.busyRequests` (1,000 a second) and
///   `events.busyPercent` (10): how events are sent (``DeliverySettings``)
/// - `simulator.enabled` (default: on when no app is configured), `simulator.bundleId`, `simulator.catalog`,
///   `simulator.pki` (a folder), `simulator.serverApiKeys` (`KEYID=FILE` entries: the App Store Server API keys the
///   simulated `/inApps` accepts, each file a `.p8` from App Store Connect or its public key in PEM),
///   `simulator.serverApiIssuerId` (the issuer id tokens must carry), `simulator.appKeys` and `simulator.secretKeys`
///   (the simulated app's keys, as an app's), `simulator.webhooks.urls`, `simulator.webhooks.secret` and
///   `simulator.transferPolicy` (as an app's), `simulator.performanceTestThreshold` (the
///   milliseconds past which a Retention Messaging performance test counts an answer as timed out; 700)
///
/// Relative file paths are read from the configuration file's folder.
public struct ServerSettings: Sendable {
    public var server: ServerConfiguration
    public var databaseURL: String
    /// The token the operator routes require outside development mode (see ``operatorAccess``).
    public var adminToken: String?
    /// The apps configured (the simulated app is added to them when the simulator runs).
    public var apps: [AppConfiguration]
    /// The local App Store, when it runs.
    public var simulator: SimulatorSettings?
    /// How events are sent to the apps' webhooks.
    public var delivery = DeliverySettings()

    public init(
        server: ServerConfiguration = ServerConfiguration(), databaseURL: String = "iapkit.sqlite",
        adminToken: String? = nil, apps: [AppConfiguration] = [], simulator: SimulatorSettings? = SimulatorSettings()
    ) {
        self.server = server
        self.databaseURL = databaseURL
        self.adminToken = adminToken
        self.apps = apps
        self.simulator = simulator
    }

    /// Whether the server listens on loopback only.
    public var listensOnLoopbackOnly: Bool { server.listensOnLoopbackOnly }

    /// Development mode: no real app is configured (only the local App Store is served), the server listens on
    /// loopback only and serves no public name (`server.allowedHosts` is empty: a proxy in front means a deployment).
    /// It is what `iapkit serve` with no configuration runs, and the only mode whose operator routes need no token;
    /// it says so on start.
    public var developmentMode: Bool { apps.isEmpty && listensOnLoopbackOnly && server.allowedHosts.isEmpty }

    /// Who may use `/simulator`, `/console` and `/metrics`: anyone in development mode (unless an admin token is
    /// set), else only callers with the admin token; with real apps and no token, nobody.
    public var operatorAccess: OperatorAccess { .from(developmentMode: developmentMode, adminToken: adminToken) }

    /// Reads and checks every key.
    /// - Parameters:
    ///   - config: the providers to read from, in precedence order.
    ///   - baseDirectory: the folder relative file paths are read from (the configuration file's).
    public static func load(from config: ConfigReader, baseDirectory: URL) throws(ConfigurationProblem)
        -> ServerSettings
    {
        let keys = KeyReader(config: config, base: baseDirectory)
        var settings = ServerSettings()
        settings.server.host = try keys.string("server.host") ?? settings.server.host
        settings.server.port = try keys.int("server.port", in: 0...65_535) ?? settings.server.port
        settings.server.maximumBodySize =
            try keys.int("server.maximumBodySize", in: 1_024...(64 << 20)) ?? settings.server.maximumBodySize
        var limits = settings.server.connectionLimits
        if let seconds = try keys.int("server.headerTimeout", in: 1...3_600) {
            limits.headerTimeout = .seconds(seconds)
        }
        if let seconds = try keys.int("server.bodyTimeout", in: 1...3_600) { limits.bodyTimeout = .seconds(seconds) }
        if let seconds = try keys.int("server.idleTimeout", in: 1...3_600) { limits.idleTimeout = .seconds(seconds) }
        limits.maximumConnections =
            try keys.int("server.maximumConnections", in: 1...1_000_000) ?? limits.maximumConnections
        settings.server.connectionLimits = limits
        settings.server.allowedHosts = try keys.strings("server.allowedHosts") ?? []
        if let bad = settings.server.allowedHosts.first(where: {
            $0.isEmpty || $0.contains(where: { $0 == "/" || $0 == " " })
        }) {
            throw ConfigurationProblem(
                "server.allowedHosts", "'\(bad)' is not a host name (give iap.example.com, no scheme)")
        }
        settings.server.apiKeys = try keys.strings("apiKeys") ?? []
        if let short = settings.server.apiKeys.first(where: { $0.count < 16 }) {
            throw ConfigurationProblem("apiKeys", "'\(short.prefix(4))…' is shorter than 16 characters")
        }
        settings.server.answerSigner = try answerSigner(keys)
        settings.databaseURL = try keys.string("database.url") ?? settings.databaseURL
        settings.delivery = try deliverySettings(keys)
        settings.adminToken = try keys.string("adminToken")
        if let token = settings.adminToken, token.count < 16 {
            throw ConfigurationProblem("adminToken", "the admin token must be at least 16 characters")
        }

        let names = try keys.strings("apps") ?? []
        for name in names {
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber }) else {
                throw ConfigurationProblem("apps", "'\(name)' is not a name of letters and digits")
            }
            settings.apps.append(try app(name, keys))
        }
        if Set(settings.apps.map(\.bundleID)).count != settings.apps.count {
            throw ConfigurationProblem("apps", "two apps have the same bundle id")
        }
        try checkKeysDiffer(settings.server.apiKeys + settings.apps.flatMap { $0.accessKeys.map(\.value) }, "apps")

        if try keys.bool("simulator.enabled") ?? names.isEmpty {
            var simulator = SimulatorSettings()
            simulator.bundleID = try keys.string("simulator.bundleId") ?? simulator.bundleID
            simulator.catalogPath = try keys.path("simulator.catalog") ?? simulator.catalogPath
            simulator.pkiFolder = try keys.path("simulator.pki")
            for entry in try keys.strings("simulator.serverApiKeys") ?? [] {
                let (keyID, key) = try serverAPIKey(entry, keys)
                simulator.serverAPIKeys[keyID] = key
            }
            simulator.serverAPIIssuerID = try keys.string("simulator.serverApiIssuerId")
            simulator.accessKeys = try accessKeys("simulator.", keys)
            simulator.webhooks = try webhooks("simulator.", keys)
            simulator.transferPolicy = try transferPolicy("simulator.", keys)
            if let threshold = try keys.int("simulator.performanceTestThreshold", in: 1...60_000) {
                simulator.performanceTestThreshold = Int64(threshold)
            }
            try checkKeysDiffer(
                settings.server.apiKeys + (settings.apps.flatMap(\.accessKeys) + simulator.accessKeys).map(\.value),
                "simulator.appKeys")
            if settings.apps.contains(where: { $0.bundleID == simulator.bundleID }) {
                throw ConfigurationProblem(
                    "simulator.bundleId", "\(simulator.bundleID) is also a configured app; give the simulator its own")
            }
            settings.simulator = simulator
        } else {
            settings.simulator = nil
            if names.isEmpty {
                throw ConfigurationProblem("apps", "with the simulator off, at least one app must be configured")
            }
        }
        return settings
    }

    /// An app's keys from `PREFIXappKeys` and `PREFIXsecretKeys`, each entry `ID=KEY`: ids of letters, digits, `.`,
    /// `-` and `_` (at most 64, each once), keys of at least 16 characters.
    private static func accessKeys(_ prefix: String, _ keys: KeyReader) throws(ConfigurationProblem) -> [AccessKey] {
        var found: [AccessKey] = []
        for (name, scope) in [("appKeys", AccessKey.Scope.app), ("secretKeys", .secret)] {
            for entry in try keys.strings(prefix + name) ?? [] {
                let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2, isKeyID(parts[0]) else {
                    throw ConfigurationProblem(prefix + name, "an entry is not ID=KEY (an id of letters and digits)")
                }
                guard parts[1].count >= 16 else {
                    throw ConfigurationProblem(prefix + name, "key '\(parts[0])' is shorter than 16 characters")
                }
                guard !found.contains(where: { $0.id == parts[0] }) else {
                    throw ConfigurationProblem(prefix + name, "the key id '\(parts[0])' is used twice")
                }
                found.append(AccessKey(id: parts[0], scope: scope, value: parts[1]))
            }
        }
        return found
    }

    /// An app's webhooks from `PREFIXwebhooks.urls` (http or https URLs) and `PREFIXwebhooks.secret` (at least 16
    /// characters), or nil when no URL is given.
    private static func webhooks(_ prefix: String, _ keys: KeyReader) throws(ConfigurationProblem) -> Webhooks? {
        let urls = try keys.strings(prefix + "webhooks.urls") ?? []
        guard !urls.isEmpty else { return nil }
        for text in urls {
            guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil,
                text.utf8.count <= 2_048
            else {
                throw ConfigurationProblem(prefix + "webhooks.urls", "'\(text)' is not an http or https URL")
            }
        }
        guard Set(urls).count == urls.count else {
            throw ConfigurationProblem(prefix + "webhooks.urls", "an endpoint is given twice")
        }
        guard let secret = try keys.string(prefix + "webhooks.secret"), secret.count >= 16 else {
            throw ConfigurationProblem(
                prefix + "webhooks.secret", "webhooks need a secret of at least 16 characters to sign deliveries")
        }
        return Webhooks(endpoints: urls, secret: secret)
    }

    /// `PREFIXcustomerConsent` (true to answer at all), `PREFIXrefundPreference` (decline, grantFull,
    /// grantProrated) and `PREFIXsampleContentProvided`; nil when consent is not given.
    private static func consumptionAnswers(_ prefix: String, app: AppConfiguration, _ keys: KeyReader)
        throws(ConfigurationProblem) -> ConsumptionAnswers?
    {
        let preference: AppStoreServerAPI.ConsumptionRequest.RefundPreference?
        switch try keys.string(prefix + "refundPreference") {
        case nil: preference = nil
        case "decline": preference = .decline
        case "grantFull": preference = .grantFull
        case "grantProrated": preference = .grantProrated
        case let other?:
            throw ConfigurationProblem(
                prefix + "refundPreference", "'\(other)' is not decline, grantFull or grantProrated")
        }
        let sample = try keys.bool(prefix + "sampleContentProvided") ?? false
        guard try keys.bool(prefix + "customerConsent") == true else { return nil }
        guard app.serverAPI != nil else {
            throw ConfigurationProblem(
                prefix + "customerConsent", "answers to consumption requests need the app's serverApi key")
        }
        return ConsumptionAnswers(customerConsented: true, refundPreference: preference, sampleContentProvided: sample)
    }

    /// `PREFIXtransferPolicy`: refuse (the default), keep or transfer.
    private static func transferPolicy(_ prefix: String, _ keys: KeyReader) throws(ConfigurationProblem)
        -> TransferPolicy
    {
        guard let text = try keys.string(prefix + "transferPolicy") else { return .refuse }
        guard let policy = TransferPolicy(rawValue: text) else {
            throw ConfigurationProblem(prefix + "transferPolicy", "'\(text)' is not refuse, keep or transfer")
        }
        return policy
    }

    /// `events.*`: how deliveries are retried and leased.
    private static func deliverySettings(_ keys: KeyReader) throws(ConfigurationProblem) -> DeliverySettings {
        var settings = DeliverySettings()
        if let seconds = try keys.int("events.firstRetry", in: 1...86_400) { settings.firstRetry = .seconds(seconds) }
        if let seconds = try keys.int("events.retryFor", in: 60...(30 * 86_400)) {
            settings.retryFor = .seconds(seconds)
        }
        if let seconds = try keys.int("events.lease", in: 5...3_600) { settings.lease = .seconds(seconds) }
        if let seconds = try keys.int("events.timeout", in: 1...600) { settings.timeout = .seconds(seconds) }
        if let milliseconds = try keys.int("events.pollInterval", in: 10...60_000) {
            settings.pollInterval = .milliseconds(milliseconds)
        }
        if let count = try keys.int("events.concurrency", in: 1...256) { settings.concurrency = count }
        settings.sends = try keys.bool("events.send") ?? true
        if let rate = try keys.int("events.busyRequests", in: 0...10_000_000) { settings.busyRequests = rate }
        if let percent = try keys.int("events.busyPercent", in: 1...100) { settings.busyShare = Double(percent) / 100 }
        guard settings.timeout < settings.lease else {
            throw ConfigurationProblem("events.lease", "the lease must outlast a delivery's timeout (events.timeout)")
        }
        return settings
    }

    /// The answer-signing key, when `answerSigning.keyId` is set.
    private static func answerSigner(_ keys: KeyReader) throws(ConfigurationProblem) -> AnswerSigner? {
        guard let keyID = try keys.string("answerSigning.keyId") else {
            if try keys.string("answerSigning.key") != nil {
                throw ConfigurationProblem("answerSigning.keyId", "answerSigning.key is set: give the key an id too")
            }
            return nil
        }
        guard isKeyID(keyID) else {
            throw ConfigurationProblem(
                "answerSigning.keyId", "'\(keyID)' is not an id of letters, digits, '.', '-', '_'")
        }
        let path = try keys.path("answerSigning.key") ?? ""
        guard let data = FileManager.default.contents(atPath: path), data.count < 64 << 10 else {
            throw ConfigurationProblem("answerSigning.key", "'\(path)' cannot be read (a P-256 private key in PEM)")
        }
        guard let key = try? P256.Signing.PrivateKey(pemRepresentation: String(decoding: data, as: UTF8.self)) else {
            throw ConfigurationProblem("answerSigning.key", "\(path) holds no P-256 private key in PEM")
        }
        return AnswerSigner(keyID: keyID, key: key)
    }

    /// A key id: 1 to 64 ASCII letters, digits, `.`, `-` and `_`.
    private static func isKeyID(_ id: String) -> Bool {
        (1...64).contains(id.count)
            && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }
    }

    /// Every key the server accepts names one caller: the same key twice (an app key that is also a secret key, or
    /// one key for two apps) is refused.
    private static func checkKeysDiffer(_ values: [String], _ key: String) throws(ConfigurationProblem) {
        guard Set(values).count == values.count else {
            throw ConfigurationProblem(key, "the same key is configured twice (each key names one app and one scope)")
        }
    }

    /// One `KEYID=FILE` entry: the key id and the public key, read from a `.p8` private key or a PEM public key.
    private static func serverAPIKey(_ entry: String, _ keys: KeyReader) throws(ConfigurationProblem) -> (
        String, P256.Signing.PublicKey
    ) {
        let key = "simulator.serverApiKeys"
        let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw ConfigurationProblem(key, "'\(entry)' is not KEYID=FILE")
        }
        let path = keys.resolve(parts[1])
        guard let data = FileManager.default.contents(atPath: path), data.count < 64 << 10 else {
            throw ConfigurationProblem(key, "\(path) cannot be read")
        }
        let pem = String(decoding: data, as: UTF8.self)
        if let privateKey = try? P256.Signing.PrivateKey(pemRepresentation: pem) {
            return (parts[0], privateKey.publicKey)
        }
        if let publicKey = try? P256.Signing.PublicKey(pemRepresentation: pem) { return (parts[0], publicKey) }
        throw ConfigurationProblem(key, "\(path) holds no P-256 key in PEM (a .p8 or a public key)")
    }

    private static func app(_ name: String, _ keys: KeyReader) throws(ConfigurationProblem) -> AppConfiguration {
        let prefix = "app.\(name)."
        let bundleID = try keys.required(prefix + "bundleId")
        var environments: Set<AppStoreEnvironment> = []
        for text in try keys.strings(prefix + "environments") ?? ["Production", "Sandbox"] {
            guard let environment = ["Production", "Sandbox", "Xcode"].first(where: { $0 == text }) else {
                throw ConfigurationProblem(prefix + "environments", "'\(text)' is not Production, Sandbox or Xcode")
            }
            environments.insert(AppStoreEnvironment(rawValue: environment))
        }
        let appAppleID = try keys.int(prefix + "appAppleId", in: 1...Int.max).map(Int64.init)
        if environments.contains(.production), appAppleID == nil {
            throw ConfigurationProblem(
                prefix + "appAppleId", "required when Production is accepted (App Store Connect shows it)")
        }
        guard let rootFiles = try keys.paths(prefix + "roots"), !rootFiles.isEmpty else {
            throw ConfigurationProblem(
                prefix + "roots",
                "name the root certificate files to trust (Apple's: AppleRootCA-G3.cer and, for "
                    + "receipts, AppleIncRootCertificate.cer from apple.com/certificateauthority)")
        }
        var roots: [Certificate] = []
        for file in rootFiles {
            do { roots += try TrustAnchorLoader.certificates(contentsOfFile: file) } catch {
                throw ConfigurationProblem(prefix + "roots", "\(file): \(error.reason)")
            }
        }
        var trust = TrustStore(roots: roots)
        if let xcode = try keys.path(prefix + "xcodeCertificate") {
            do {
                trust = trust.insecurelyAcceptingXcodeTestCertificates(
                    try TrustAnchorLoader.certificates(contentsOfFile: xcode))
            } catch {
                throw ConfigurationProblem(prefix + "xcodeCertificate", "\(xcode): \(error)")
            }
            environments.insert(.xcode)
        } else if environments.contains(.xcode) {
            throw ConfigurationProblem(
                prefix + "xcodeCertificate", "Xcode is accepted but no Xcode certificate file is named")
        }
        var catalog: Catalog?
        if let file = try keys.path(prefix + "catalog") {
            do { catalog = try Catalog.load(contentsOfFile: file) } catch {
                throw ConfigurationProblem(prefix + "catalog", "\(file): \(error)")
            }
        }
        let age = try keys.int(prefix + "maximumNotificationAge", in: 60...(365 * 86_400)) ?? 4 * 86_400
        var app = AppConfiguration(
            bundleID: bundleID, appAppleID: appAppleID, environments: environments, trustStore: trust,
            sharedSecret: try keys.string(prefix + "sharedSecret"), catalog: catalog,
            maximumNotificationAge: TimeInterval(age))
        app.serverAPI = try serverAPIClient(prefix + "serverApi.", app: app, keys)
        app.accessKeys = try accessKeys(prefix, keys)
        app.webhooks = try webhooks(prefix, keys)
        app.transferPolicy = try transferPolicy(prefix, keys)
        app.consumptionAnswers = try consumptionAnswers(prefix + "consumption.", app: app, keys)
        return app
    }

    /// The App Store Server API client of an app (`keyId`, `issuerId`, `key` a `.p8` file, `baseUrl` optional: Apple's
    /// Production host when the app accepts Production, else Sandbox), or nil when no key is configured.
    private static func serverAPIClient(_ prefix: String, app: AppConfiguration, _ keys: KeyReader)
        throws(ConfigurationProblem) -> ServerAPIClient?
    {
        guard let keyID = try keys.string(prefix + "keyId") else { return nil }
        let issuerID = try keys.required(prefix + "issuerId")
        let path = try keys.path(prefix + "key") ?? ""
        guard let data = FileManager.default.contents(atPath: path), data.count < 64 << 10 else {
            throw ConfigurationProblem(prefix + "key", "'\(path)' cannot be read (the .p8 from App Store Connect)")
        }
        let credentials: ServerAPICredentials
        do {
            credentials = try ServerAPICredentials(
                keyID: keyID, issuerID: issuerID, bundleID: app.bundleID, p8: String(decoding: data, as: UTF8.self))
        } catch {
            throw ConfigurationProblem(prefix + "key", error.reason)
        }
        var environment: ServerAPIEnvironment = app.environments.contains(.production) ? .production : .sandbox
        if let text = try keys.string(prefix + "baseUrl") {
            guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https" else {
                throw ConfigurationProblem(prefix + "baseUrl", "'\(text)' is not an http or https URL")
            }
            environment = .custom(url)
        }
        let verifier: SignedDataVerifier
        do {
            verifier = try SignedDataVerifier(
                trustStore: app.trustStore,
                configuration: .init(bundleID: app.bundleID, appAppleID: app.appAppleID, environments: app.environments)
            )
        } catch {
            throw ConfigurationProblem(prefix + "key", "no verifier for the app's documents: \(error)")
        }
        return ServerAPIClient(credentials: credentials, environment: environment, verifier: verifier)
    }
}

/// The local App Store `iapkit serve` runs beside the server.
public struct SimulatorSettings: Sendable {
    public var bundleID = "com.example.florist"
    /// The catalog file it sells; nil for the florist example's catalog, which ships inside the package (so an
    /// installed `iapkit serve` starts in any folder).
    public var catalogPath: String?
    /// Where its signing authority is kept (shared with `iapkit simulate --pki`); a new one per run when nil.
    public var pkiFolder: String?
    /// The App Store Server API keys its `/inApps` accepts, by key id (the public halves).
    public var serverAPIKeys: [String: P256.Signing.PublicKey] = [:]
    /// The issuer id `/inApps` tokens must carry, when set.
    public var serverAPIIssuerID: String?
    /// The answer time, in milliseconds, past which a Retention Messaging performance test counts a request as timed
    /// out (Apple's 700 by default).
    public var performanceTestThreshold: Int64 = 700
    /// The simulated app's keys, as an app's (``AppConfiguration/accessKeys``).
    public var accessKeys: [AccessKey] = []
    /// The simulated app's webhooks, as an app's.
    public var webhooks: Webhooks?
    /// The simulated app's transfer policy, as an app's.
    public var transferPolicy: TransferPolicy = .refuse

    public init(bundleID: String = "com.example.florist", catalogPath: String? = nil) {
        self.bundleID = bundleID
        self.catalogPath = catalogPath
    }
}

/// A configuration key with a value the server cannot start with.
public struct ConfigurationProblem: CodedError, Sendable {
    public let key: String
    public var code: String { "invalidConfiguration" }
    public var reason: String { "configuration key '\(key)': \(message)" }
    public let message: String

    public init(_ key: String, _ message: String) {
        self.key = key
        self.message = message
    }
}

/// Reads typed values, turning every failure into a problem that names the key: a value of the wrong type is an
/// error, never silently replaced by the default.
private struct KeyReader {
    let config: ConfigReader
    let base: URL

    /// The value, nil when no provider has the key, a problem when one has it with the wrong type.
    private func read<Value>(_ key: String, _ kind: String, _ get: (ConfigKey) throws -> Value)
        throws(ConfigurationProblem) -> Value?
    {
        do { return try get(ConfigKey(key)) } catch {
            if "\(error)".hasPrefix("Missing required config value") { return nil }
            throw ConfigurationProblem(key, "must be \(kind)")
        }
    }

    func string(_ key: String) throws(ConfigurationProblem) -> String? {
        let value = try read(key, "a string") { try config.requiredString(forKey: $0, isSecret: true) }
        return value?.isEmpty == true ? nil : value
    }

    func required(_ key: String) throws(ConfigurationProblem) -> String {
        guard let value = try string(key) else { throw ConfigurationProblem(key, "is required") }
        return value
    }

    func int(_ key: String, in range: ClosedRange<Int>) throws(ConfigurationProblem) -> Int? {
        let value = try read(key, "a whole number") { try config.requiredInt(forKey: $0) }
        if let value, !range.contains(value) {
            throw ConfigurationProblem(key, "\(value) is outside \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    func bool(_ key: String) throws(ConfigurationProblem) -> Bool? {
        try read(key, "true or false") { try config.requiredBool(forKey: $0) }
    }

    func strings(_ key: String) throws(ConfigurationProblem) -> [String]? {
        try read(key, "a list of strings") { try config.requiredStringArray(forKey: $0, isSecret: true) }
    }

    func path(_ key: String) throws(ConfigurationProblem) -> String? {
        try string(key).map(resolve)
    }

    func paths(_ key: String) throws(ConfigurationProblem) -> [String]? {
        try strings(key).map { $0.map(resolve) }
    }

    func resolve(_ path: String) -> String {
        path.hasPrefix("/") ? path : base.appendingPathComponent(path).path
    }
}

/// How the server sends events to webhooks: the first retry after ``firstRetry``, each later one twice as late (at
/// most six hours apart), until ``retryFor`` after the event (three days by default, as Apple retries notifications);
/// each delivery leased to one instance for ``lease``, each request given ``timeout``.
public struct DeliverySettings: Hashable, Sendable {
    public var firstRetry: Duration = .seconds(10)
    public var retryFor: Duration = .seconds(3 * 86_400)
    public var lease: Duration = .seconds(60)
    public var timeout: Duration = .seconds(10)
    /// How often an idle sender looks for due deliveries (an instance's own new events wake it at once).
    public var pollInterval: Duration = .seconds(1)
    /// Deliveries in flight at once per instance.
    public var concurrency = 16
    /// Whether this instance sends at all (`events.send`): instances that only take requests can leave the outbox to
    /// others on the same database (every instance stores events or marks the writes that have them; the sending
    /// ones derive what is marked and deliver).
    public var sends = true
    /// Requests a second (over the last quarter of a second) above which this instance counts as busy and keeps its
    /// deliveries behind its requests (`events.busyRequests`, 1,000; 0 never does).
    public var busyRequests = 1_000
    /// While busy, the share of the time the sender's rounds may take (`events.busyPercent`, 10 for 0.1): about the
    /// share of one core the sender takes from requests under load.
    public var busyShare = 0.1

    /// The most deliveries one round of the sender leases (and writes it announces): four per delivery in flight.
    public var leaseBatch: Int { concurrency * 4 }

    public init() {}
}
