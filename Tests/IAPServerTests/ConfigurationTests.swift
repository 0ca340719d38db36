import Configuration
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import IAPServer
import IAPSimulator
import IAPSimulatorServer
import IAPTestSupport
import Logging
import NIOCore
import Testing

@Suite("Configuration: file, environment, and the real Apple data it serves")
struct ConfigurationTests {
    /// Writes `text` as a configuration file in a fresh folder and reads it (with `environment` over it).
    static func settings(_ text: String, environment: [String: String] = [:]) async throws -> ServerSettings {
        let folder = TestFiles.url("config")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("iapkit.json")
        try Data(text.utf8).write(to: file)
        let location = InMemoryProvider(values: [
            AbsoluteConfigKey(["filePath"]): .init(.string(file.path), isSecret: false)
        ])
        let reader = ConfigReader(providers: [
            EnvironmentVariablesProvider(environmentVariables: environment).prefixKeys(with: "iapkit"),
            try await FileProvider<JSONSnapshot>(config: ConfigReader(provider: location)),
        ])
        return try ServerSettings.load(from: reader, baseDirectory: folder)
    }

    static let certificates = SharedTestData.path("certs")

    /// Three real apps: a notification app and a receipt app on Apple's roots, and an Xcode-tested app.
    static let realConfiguration = """
        {
          "server": { "host": "127.0.0.1", "port": 8443 },
          "database": { "url": ":memory:" },
          "apiKeys": ["0123456789abcdef0123"],
          "apps": ["abilities", "revenuecat", "birds"],
          "app": {
            "abilities": {
              "bundleId": "com.Abilities", "environments": ["Sandbox"],
              "roots": ["\(certificates)/apple-official/AppleRootCA-G3.cer"]
            },
            "revenuecat": {
              "bundleId": "com.revenuecat.sampleapp", "environments": ["Sandbox"],
              "roots": ["\(certificates)/apple-official/AppleIncRootCertificate.cer"],
              "sharedSecret": "revenuecat-secret"
            },
            "birds": {
              "bundleId": "com.example.naturelab.backyardbirds.example", "environments": ["Xcode"],
              "roots": ["\(certificates)/apple-official/AppleRootCA-G3.cer"],
              "xcodeCertificate": "\(certificates)/storekit-testing/StoreKitTestingInXcode-jws-x5c-from-applelib.der"
            }
          }
        }
        """

    @Test(
        "a configuration of three real apps accepts Apple's own documents",
        .enabled(if: SharedTestData.isAvailable, "\(SharedTestData.skipMessage)"))
    func realAppleDataWithAppleRoots() async throws {
        let settings = try await Self.settings(Self.realConfiguration)
        #expect(
            settings.apps.map(\.bundleID) == [
                "com.Abilities", "com.revenuecat.sampleapp", "com.example.naturelab.backyardbirds.example",
            ])
        #expect(settings.simulator == nil)
        #expect(settings.server.port == 8443)
        // Apple's TEST notification was signed 2022-09-02; the clock stands a minute later.
        let signed = Date(timeIntervalSince1970: 1_662_122_492.884)
        let service = try ValidationService(
            apps: settings.apps, storage: MemoryStorage(), clock: { signed.addingTimeInterval(60) },
            logger: Logger(label: "test"))
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let application = buildApplication(service: service, configuration: settings.server, logger: logger)
        try await application.test(.router) { client in
            let notification = String(
                decoding: try SharedTestData.bytes("jws/aporat-test-notification-signedPayload.jws"), as: UTF8.self)
            let (status, answer) = try await client.post("/v1/notifications", ["signedPayload": notification])
            #expect(status == .ok, "\(answer)")
            #expect(answer["status"] as? String == "applied")

            let xcode = String(
                decoding: try SharedTestData.bytes("jws/applelib-xcode-signed-transaction.jws"), as: UTF8.self)
            let (recorded, entitlements) = try await client.post("/v1/transactions", ["signedTransaction": xcode])
            #expect(recorded == .ok, "\(entitlements)")
            #expect(entitlements["bundleId"] as? String == "com.example.naturelab.backyardbirds.example")

            let receipt = Data(try SharedTestData.bytes(ReceiptAPITests.revenueCatReceipt)).base64EncodedString()
            let (_, legacy) = try await client.post(
                "/sandbox/verifyReceipt", ["receipt-data": receipt, "password": "revenuecat-secret"])
            #expect(legacy["status"] as? Int == 0, "\(legacy)")
            // A document for an app this server does not serve is refused, naming the app.
            let other = String(
                decoding: try SharedTestData.bytes("jws/applelib-mock-transactionInfo.jws"), as: UTF8.self)
            let (refused, why) = try await client.post("/v1/transactions", ["signedTransaction": other])
            #expect(refused == .unprocessableContent)
            #expect(why["code"] as? String == "unknownApp")
        }
    }

    /// The simulated `/inApps` accepts keys given as `KEYID=FILE`: a `.p8` from App Store Connect or its public key.
    @Test func developmentModeIsOnlyTheBareLocalSetUp() {
        var settings = ServerSettings(databaseURL: ":memory:")
        #expect(settings.developmentMode && settings.operatorAccess == .open)
        settings.server.allowedHosts = ["iap.example.com"]
        #expect(!settings.developmentMode && settings.operatorAccess == .refused, "a public name means a deployment")
        settings.server.allowedHosts = []
        settings.server.host = "192.0.2.10"  // TEST-NET-1: an address beyond loopback, never bound here
        #expect(!settings.developmentMode)
        settings.adminToken = "an-admin-token-0123456789"
        #expect(settings.operatorAccess == .token("an-admin-token-0123456789"))
    }

    @Test func serverAPIKeysAreReadFromP8AndPublicKeyFiles() async throws {
        let folder = TestFiles.url("keys")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = P256.Signing.PrivateKey()
        let second = P256.Signing.PrivateKey()
        try first.pemRepresentation.write(
            to: folder.appendingPathComponent("SubscriptionKey_KEY1.p8"), atomically: true, encoding: .utf8)
        try second.publicKey.pemRepresentation.write(
            to: folder.appendingPathComponent("key2.pem"), atomically: true, encoding: .utf8)
        let settings = try await Self.settings(
            """
            {"simulator": {"serverApiKeys": ["KEY1=\(folder.path)/SubscriptionKey_KEY1.p8", "KEY2=\(folder.path)/key2.pem"],
              "serverApiIssuerId": "issuer-1"}}
            """)
        let simulator = try #require(settings.simulator)
        #expect(simulator.serverAPIKeys["KEY1"]?.rawRepresentation == first.publicKey.rawRepresentation)
        #expect(simulator.serverAPIKeys["KEY2"]?.rawRepresentation == second.publicKey.rawRepresentation)
        #expect(simulator.serverAPIIssuerID == "issuer-1")
    }

    /// `app.NAME.serverApi`: the key `POST /v1/customers/{id}/refresh` calls Apple's API with, checked at start-up.
    @Test func anAppsServerAPIKeyIsReadAndCheckedAtStartUp() async throws {
        let folder = TestFiles.url("app-key")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try SimulatorTestKeys.pki.export(to: folder)
        try P256.Signing.PrivateKey().pemRepresentation.write(
            to: folder.appendingPathComponent("SubscriptionKey_KEY1.p8"), atomically: true, encoding: .utf8)
        func configuration(_ serverAPI: String) -> String {
            """
            {"apps": ["shop"], "app": {"shop": {"bundleId": "com.example.florist", "environments": ["Sandbox"],
              "roots": ["\(folder.path)/\(SimulatorPKI.FileName.jwsRoot)"], "serverApi": {\(serverAPI)}}}}
            """
        }
        let key = #""keyId": "KEY1", "issuerId": "issuer-1", "key": "\#(folder.path)/SubscriptionKey_KEY1.p8""#
        let configured = try await Self.settings(configuration(key + #", "baseUrl": "http://127.0.0.1:8080""#))
        #expect(configured.apps.first?.serverAPI != nil)
        #expect(try await Self.settings(configuration("")).apps.first?.serverAPI == nil)
        let bad: [(String, String)] = [
            (#""keyId": "KEY1", "key": "\#(folder.path)/SubscriptionKey_KEY1.p8""#, "app.shop.serverApi.issuerId"),
            (#""keyId": "KEY1", "issuerId": "i", "key": "\#(folder.path)/missing.p8""#, "app.shop.serverApi.key"),
            (#""keyId": "KEY1", "issuerId": "i", "key": "/etc/hostname""#, "app.shop.serverApi.key"),
            (key + #", "baseUrl": "ftp://apple""#, "app.shop.serverApi.baseUrl"),
        ]
        for (serverAPI, name) in bad {
            do {
                _ = try await Self.settings(configuration(serverAPI))
                Issue.record("accepted: \(serverAPI)")
            } catch let problem as ConfigurationProblem {
                #expect(problem.key == name, "\(problem.reason)")
            }
        }
    }

    @Test func webhooksTransferPolicyAndDeliveryAreRead() async throws {
        let settings = try await Self.settings(
            """
            {
              "simulator": {
                "webhooks": { "urls": ["http://127.0.0.1:9000/hooks", "https://backend.example/iap"],
                              "secret": "0123456789abcdef" },
                "transferPolicy": "transfer"
              },
              "events": { "firstRetry": 30, "retryFor": 86400, "lease": 120, "timeout": 5, "pollInterval": 250,
                          "concurrency": 4 }
            }
            """, environment: ["IAPKIT_EVENTS_CONCURRENCY": "8"])
        let simulator = try #require(settings.simulator)
        #expect(
            simulator.webhooks
                == Webhooks(
                    endpoints: ["http://127.0.0.1:9000/hooks", "https://backend.example/iap"],
                    secret: "0123456789abcdef"))
        #expect(simulator.transferPolicy == .transfer)
        #expect(settings.delivery.firstRetry == .seconds(30))
        #expect(settings.delivery.retryFor == .seconds(86_400))
        #expect(settings.delivery.lease == .seconds(120))
        #expect(settings.delivery.timeout == .seconds(5))
        #expect(settings.delivery.pollInterval == .milliseconds(250))
        #expect(settings.delivery.concurrency == 8, "the environment wins")
    }

    @Test func environmentVariablesOverrideTheFile() async throws {
        let settings = try await Self.settings(
            #"{"server": {"port": 8080}, "database": {"url": "a.sqlite"}}"#,
            environment: ["IAPKIT_SERVER_PORT": "9090", "IAPKIT_DATABASE_URL": "postgres://db/iapkit"])
        #expect(settings.server.port == 9090)
        #expect(settings.databaseURL == "postgres://db/iapkit")
        #expect(settings.simulator != nil, "with no app configured the simulator runs")
    }

    /// The variable the server's own messages name for the admin token (a new operator set the one a message named
    /// before, `IAPKIT_ADMINTOKEN`, and it was ignored).
    @Test func theAdminTokenComesFromTheVariableTheMessagesName() async throws {
        let token = "operator-token-0123456789"
        let settings = try await Self.settings("{}", environment: ["IAPKIT_ADMIN_TOKEN": token])
        #expect(settings.adminToken == token)
        let ignored = try await Self.settings("{}", environment: ["IAPKIT_ADMINTOKEN": token])
        #expect(ignored.adminToken == nil)
    }

    @Test(
        "a bad configuration names its key",
        arguments: [
            (#"{"server": {"port": "eighty"}}"#, "server.port"),
            (#"{"server": {"port": 70000}}"#, "server.port"),
            (#"{"apiKeys": ["short"]}"#, "apiKeys"),
            (#"{"apps": ["shop"], "app": {"shop": {"environments": ["Sandbox"]}}}"#, "app.shop.bundleId"),
            (
                #"{"apps": ["shop"], "app": {"shop": {"bundleId": "a.b", "environments": ["Prod"]}}}"#,
                "app.shop.environments"
            ),
            (#"{"apps": ["shop"], "app": {"shop": {"bundleId": "a.b"}}}"#, "app.shop.appAppleId"),
            (
                #"{"apps": ["shop"], "app": {"shop": {"bundleId": "a.b", "environments": ["Sandbox"]}}}"#,
                "app.shop.roots"
            ),
            (
                #"{"apps": ["shop"], "app": {"shop": {"bundleId": "a.b", "environments": ["Sandbox"], "roots": ["missing.cer"]}}}"#,
                "app.shop.roots"
            ),
            (
                #"{"apps": ["shop"], "app": {"shop": {"bundleId": "a.b", "environments": ["Xcode"], "roots": []}}}"#,
                "app.shop.roots"
            ),
            (#"{"simulator": {"enabled": false}}"#, "apps"),
            (#"{"adminToken": "short"}"#, "adminToken"),
            (#"{"simulator": {"serverApiKeys": ["no-file-named"]}}"#, "simulator.serverApiKeys"),
            (#"{"simulator": {"serverApiKeys": ["KEY1=missing.p8"]}}"#, "simulator.serverApiKeys"),
            (#"{"simulator": {"serverApiKeys": ["KEY1=/etc/hostname"]}}"#, "simulator.serverApiKeys"),
            (#"{"simulator": {"appKeys": ["nokey"]}}"#, "simulator.appKeys"),
            (#"{"answerSigning": {"keyId": "k1", "key": "missing.pem"}}"#, "answerSigning.key"),
            (#"{"answerSigning": {"key": "/etc/hostname"}}"#, "answerSigning.keyId"),
            (#"{"answerSigning": {"keyId": "k1", "key": "/etc/hostname"}}"#, "answerSigning.key"),
            (#"{"answerSigning": {"keyId": "bad id", "key": "/etc/hostname"}}"#, "answerSigning.keyId"),
            (#"{"simulator": {"appKeys": ["a=short"]}}"#, "simulator.appKeys"),
            (#"{"simulator": {"appKeys": ["bad id=0123456789abcdef"]}}"#, "simulator.appKeys"),
            (
                #"{"simulator": {"appKeys": ["a=0123456789abcdef"], "secretKeys": ["a=fedcba9876543210"]}}"#,
                "simulator.secretKeys"
            ),
            (
                #"{"apiKeys": ["0123456789abcdef"], "simulator": {"appKeys": ["a=0123456789abcdef"]}}"#,
                "simulator.appKeys"
            ),
            (
                #"{"simulator": {"webhooks": {"urls": ["ftp://x/y"], "secret": "0123456789abcdef"}}}"#,
                "simulator.webhooks.urls"
            ),
            (#"{"simulator": {"webhooks": {"urls": ["http://127.0.0.1/h"]}}}"#, "simulator.webhooks.secret"),
            (
                #"{"simulator": {"webhooks": {"urls": ["http://127.0.0.1/h"], "secret": "short"}}}"#,
                "simulator.webhooks.secret"
            ),
            (#"{"simulator": {"transferPolicy": "steal"}}"#, "simulator.transferPolicy"),
            (#"{"events": {"firstRetry": 0}}"#, "events.firstRetry"),
            (#"{"events": {"lease": 5, "timeout": 10}}"#, "events.lease"),
        ])
    func badConfigurationNamesTheKey(_ text: String, key: String) async throws {
        do {
            _ = try await Self.settings(text)
            Issue.record("accepted: \(text)")
        } catch let problem as ConfigurationProblem {
            #expect(problem.key == key, "\(problem.reason)")
            #expect(problem.reason.contains("'\(key)'"))
        }
    }
}
