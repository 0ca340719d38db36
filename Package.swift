// swift-tools-version: 6.2
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "IAPKit",
    // The app side (IAPCore, IAPTrust, IAPReceipts, IAPSignedData, IAPCatalog, IAPEntitlements, IAPStoreClient,
    // IAPStoreKitBackend) runs from iOS 16, tvOS 16, watchOS 9 and visionOS 1 (Scripts/check-app-platforms.sh). macOS
    // stays at 15: the server and simulator targets use Synchronization's Mutex, and `swift run iapkit serve` must
    // build on a Mac; the app side itself uses nothing newer than macOS 13.
    platforms: [.macOS(.v15), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "IAPCore", targets: ["IAPCore"]),
        .library(name: "IAPTrust", targets: ["IAPTrust"]),
        .library(name: "IAPReceipts", targets: ["IAPReceipts"]),
        .library(name: "IAPSignedData", targets: ["IAPSignedData"]),
        .library(name: "IAPCatalog", targets: ["IAPCatalog"]),
        .library(name: "IAPEntitlements", targets: ["IAPEntitlements"]),
        .library(name: "IAPSimulator", targets: ["IAPSimulator"]),
        .library(name: "IAPSimulatorDelivery", targets: ["IAPSimulatorDelivery"]),
        .library(name: "IAPScenarios", targets: ["IAPScenarios"]),
        .library(name: "IAPServer", targets: ["IAPServer"]),
        .library(name: "IAPSimulatorServer", targets: ["IAPSimulatorServer"]),
        .library(name: "IAPStoreClient", targets: ["IAPStoreClient"]),
        .library(name: "IAPStoreClientTesting", targets: ["IAPStoreClientTesting"]),
        .library(name: "IAPStoreKit", targets: ["IAPStoreKit"]),
        .library(name: "IAPStoreKitBackend", targets: ["IAPStoreKitBackend"]),
        .library(name: "IAPServerAPI", targets: ["IAPServerAPI"]),
        .executable(name: "iapkit", targets: ["iapkit"]),
        .executable(name: "florist", targets: ["florist"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        // Exact: IAPTrust imports swift-certificates' `DisableValidityCheck` SPI, which semver does not cover.
        .package(url: "https://github.com/apple/swift-certificates.git", exact: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.34.1"),
        .package(url: "https://github.com/apple/swift-async-algorithms.git", from: "1.1.4"),
    ],
    // The targets in layers, lowest first; each depends only on those before it (docs/setup.md#layout):
    //   Core; Trust; Receipts, SignedData; Catalog; Entitlements     what every side shares
    //   Simulator (+ SimulatorDelivery, Scenarios)                  the local App Store
    //   ServerAPI; Server; SimulatorServer                          the validation server, and the local App Store beside it
    //   StoreClient; StoreClientTesting                             the app side, and its backends for tests and tools
    //   KitCLI, iapkit, florist                                      the executables
    targets: [
        // Core: the coded-error pattern every module's errors follow, epoch milliseconds, the rows the local App Store is
        // saved as, and the work meter of the linear-time tests.
        .target(
            name: "IAPCore",
            swiftSettings: strictSettings
        ),
        // Trust: roots, Apple's marker OIDs, the chain policy, the verified-chain cache, minting test PKIs.
        .target(
            name: "IAPTrust",
            dependencies: [
                "IAPCore",
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        // Receipts: PKCS#7 and receipt wire types, the AppReceipt model, the verifier and the signer.
        .target(
            name: "IAPReceipts",
            dependencies: [
                "IAPCore", "IAPTrust",
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        // Signed data: compact JWS, the StoreKit 2 and notification payload models, the App Store Server API's JSON, the
        // verifier and the signer.
        .target(
            name: "IAPSignedData",
            dependencies: [
                "IAPCore", "IAPTrust",
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        // Catalog: products, subscription groups, offers and settings from .storekit files and Products.plist.
        .target(
            name: "IAPCatalog",
            dependencies: ["IAPCore"],
            swiftSettings: strictSettings
        ),
        // Entitlements: one purchase-record type for every source, and the pure engine that says what a customer owns.
        .target(
            name: "IAPEntitlements",
            dependencies: ["IAPCore", "IAPCatalog", "IAPReceipts", "IAPSignedData"],
            swiftSettings: strictSettings
        ),
        // The local App Store: its own PKI, clock, accounts and purchase flows, signing every artifact for real.
        .target(
            name: "IAPSimulator",
            dependencies: [
                "IAPCore", "IAPTrust", "IAPReceipts", "IAPSignedData", "IAPCatalog", "IAPEntitlements",
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        // Delivery over HTTP: the simulator's notifications posted to a webhook with Apple's retry schedule.
        .target(
            name: "IAPSimulatorDelivery",
            dependencies: [
                "IAPCore", "IAPSimulator", "IAPCatalog",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        // Scenarios: YAML stories of customers and the clock, run against the simulator with expectations checked.
        .target(
            name: "IAPScenarios",
            dependencies: [
                "IAPCore", "IAPCatalog", "IAPEntitlements", "IAPSignedData", "IAPSimulator",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        // A client of Apple's App Store Server API (every core endpoint) over IAPSignedData's `AppStoreServerAPI` types.
        .target(
            name: "IAPServerAPI",
            dependencies: [
                "IAPCore", "IAPSignedData",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        // The system's SQLite, for the server's SQLite storage (Debian: libsqlite3-dev).
        .systemLibrary(
            name: "CSQLite3",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // The validation server: Hummingbird routes over the verifiers, the engine and SQL storage (SQLite, PostgreSQL),
        // in folders that point one way (Service, Storage, Encoding, HTTP, Console, Settings); no simulator.
        .target(
            name: "IAPServer",
            dependencies: [
                "IAPCore", "IAPTrust", "IAPReceipts", "IAPSignedData", "IAPCatalog", "IAPEntitlements", "IAPServerAPI",
                "CSQLite3",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            resources: [.copy("Pages"), .copy("OpenAPI/openapi.yaml")],
            swiftSettings: strictSettings
        ),
        // The local App Store's HTTP face: `/simulator` and its update streams, `/inApps`, the store and manager pages,
        // its notifications applied by the server, its state saved in the server's database. `iapkit serve` adds it
        // beside the validation server when the simulator is on.
        .target(
            name: "IAPSimulatorServer",
            dependencies: [
                "IAPCore", "IAPSignedData", "IAPCatalog", "IAPEntitlements", "IAPSimulator", "IAPSimulatorDelivery",
                "IAPServer", "IAPServerAPI",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
            ],
            resources: [.copy("Pages"), .copy("DefaultCatalog/Florist.storekit")],
            swiftSettings: strictSettings
        ),
        // The app side: the Store (products, purchase flow, updates, restore, counts, offline cache) over a StoreKit-shaped
        // backend protocol, three validation modes, and a validation server reached through URLSession. Nothing of
        // the simulator or of a server's networking stack: this is what an app links.
        .target(
            name: "IAPStoreClient",
            dependencies: [
                "IAPCore", "IAPCatalog", "IAPEntitlements", "IAPSignedData", "IAPReceipts", "IAPTrust",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        // Beside the app side, as HummingbirdTesting sits beside Hummingbird: the Store's backends over the local App
        // Store, in process and over `iapkit serve`'s `/simulator`, the simulated customer, and an AsyncHTTPClient
        // transport. For tests, tools and development, not for a shipped app.
        .target(
            name: "IAPStoreClientTesting",
            dependencies: [
                "IAPCore", "IAPCatalog", "IAPSignedData", "IAPSimulator", "IAPStoreClient",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        // StoreKit 2's API where StoreKit is not (Linux, Windows, Android): `Product`, `Transaction`,
        // `VerificationResult`, `AppStore`, `Storefront`, backed by the local App Store of a `StoreKitSession`, every
        // document verified against the store's own roots. Import it where `import StoreKit` is not available.
        .target(
            name: "IAPStoreKit",
            dependencies: [
                "IAPCore", "IAPCatalog", "IAPSignedData", "IAPSimulator", "IAPStoreClient", "IAPStoreClientTesting",
            ],
            swiftSettings: strictSettings
        ),
        // The Store's backend over StoreKit 2: one source that imports StoreKit on Apple platforms and the stand-in
        // (IAPStoreKit, over the local App Store) on Linux. What a shipped app sells with.
        .target(
            name: "IAPStoreKitBackend",
            dependencies: [
                "IAPCore", "IAPCatalog", "IAPSignedData", "IAPStoreClient",
                .target(name: "IAPStoreKit", condition: .when(platforms: [.linux])),
            ],
            swiftSettings: strictSettings
        ),
        // The command line: thin commands over the libraries, testable in process.
        .target(
            name: "IAPKitCLI",
            dependencies: [
                "IAPServerAPI",
                "IAPTrust",
                "IAPReceipts",
                "IAPSignedData",
                "IAPCatalog",
                "IAPEntitlements",
                "IAPSimulator",
                "IAPSimulatorDelivery",
                "IAPScenarios",
                "IAPServer",
                "IAPSimulatorServer",
                "IAPCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "iapkit",
            dependencies: [
                "IAPKitCLI",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        // The seeds' florist app in a terminal, over a running `iapkit serve` (README: the app side).
        .executableTarget(
            name: "florist",
            dependencies: [
                "IAPStoreClient", "IAPStoreClientTesting", "IAPCatalog", "IAPEntitlements", "IAPReceipts", "IAPSignedData",
                "IAPSimulator", "IAPTrust", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Examples/FloristTerminal",
            swiftSettings: strictSettings
        ),
        // Fixed keys, shared test data lookup and seeded randomness for the test targets.
        .target(
            name: "IAPTestSupport",
            dependencies: [
                "IAPTrust", "IAPSignedData", "IAPCatalog", "IAPSimulator",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/IAPTestSupport",
            swiftSettings: strictSettings
        ),
        // The harnesses the libFuzzer fuzzers (Scripts/fuzz.sh) and the regression tests share.
        .target(
            name: "IAPFuzzHarness",
            dependencies: [
                "IAPCore", "IAPTrust", "IAPReceipts", "IAPSignedData", "IAPCatalog", "IAPEntitlements", "IAPSimulator",
                "IAPScenarios",
            ],
            path: "Tests/IAPFuzzHarness",
            swiftSettings: strictSettings
        ),
        // Built with -sanitize=fuzzer,address it is a libFuzzer fuzzer; built normally, a replay tool.
        .executableTarget(
            name: "iapkit-fuzz",
            dependencies: ["IAPFuzzHarness"],
            path: "Fuzz/IAPKitFuzz",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "IAPFuzzRegressionTests",
            dependencies: ["IAPCore", "IAPFuzzHarness"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "IAPTrustTests",
            dependencies: [
                "IAPCore", "IAPTrust", "IAPTestSupport",
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "IAPReceiptsTests",
            dependencies: [
                "IAPCore", "IAPReceipts", "IAPTrust", "IAPTestSupport",
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "IAPSignedDataTests",
            dependencies: [
                "IAPCore", "IAPSignedData", "IAPTrust", "IAPTestSupport",
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "IAPCatalogTests",
            dependencies: ["IAPCore", "IAPCatalog", "IAPTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "IAPEntitlementsTests",
            dependencies: [
                "IAPCore", "IAPEntitlements", "IAPCatalog", "IAPReceipts", "IAPSignedData", "IAPTrust", "IAPTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "IAPSimulatorTests",
            dependencies: [
                "IAPCore", "IAPSimulator", "IAPTrust", "IAPReceipts", "IAPSignedData", "IAPTestSupport",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "IAPScenariosTests",
            dependencies: ["IAPCore", "IAPScenarios", "IAPSimulator", "IAPCatalog", "IAPTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "IAPSimulatorDeliveryTests",
            dependencies: [
                "IAPCore", "IAPSimulatorDelivery", "IAPSimulator", "IAPSignedData", "IAPTestSupport", "IAPCatalog", "IAPKitCLI",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "IAPServerTests",
            dependencies: [
                "IAPCore", "IAPServer", "IAPSimulatorServer", "IAPTestSupport", "IAPTrust", "IAPSignedData", "IAPCatalog", "IAPSimulator",
                "IAPEntitlements", "IAPReceipts",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        // End to end: the built `iapkit` and `florist` executables as users run them, Apple's Python library, nginx in
        // front, a real browser; each skips with a note where its tool is missing (`.ci/run` installs them all).
        .testTarget(
            name: "IAPEndToEndTests",
            dependencies: [
                "IAPCore", "IAPServer", "IAPSimulatorServer", "IAPSimulator", "IAPCatalog", "IAPSignedData",
                "IAPTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "IAPServerAPITests",
            dependencies: [
                "IAPCore", "IAPServerAPI", "IAPSignedData", "IAPTestSupport", "IAPSimulator", "IAPServer",
                "IAPSimulatorServer", "IAPCatalog",
                "IAPEntitlements",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "IAPStoreClientTests",
            dependencies: [
                "IAPCore", "IAPStoreClient", "IAPStoreClientTesting", "IAPServer", "IAPSimulatorServer", "IAPTestSupport", "IAPTrust", "IAPSignedData", "IAPCatalog",
                "IAPStoreKit", "IAPStoreKitBackend", "IAPServerAPI",
                "IAPSimulator", "IAPEntitlements", "IAPReceipts",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "IAPStoreKitTests",
            dependencies: [
                "IAPStoreKit", "IAPSimulator", "IAPTestSupport", "IAPCatalog", "IAPCore", "IAPServerAPI",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "IAPKitCLITests",
            dependencies: [
                "IAPCore", "IAPKitCLI", "IAPTestSupport", "IAPTrust", "IAPSignedData", "IAPCatalog", "IAPSimulator", "IAPReceipts",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
