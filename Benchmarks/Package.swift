// swift-tools-version: 6.1
// IAPKit's benchmarks, kept in their own package so `swift test` in the main package never builds them.
// Run from this folder: swift package --disable-sandbox benchmark
import PackageDescription

let package = Package(
    name: "IAPKitBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "IAPKit", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
    ],
    targets: [
        .executableTarget(
            name: "ReceiptBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "IAPReceipts", package: "IAPKit"),
                .product(name: "IAPTrust", package: "IAPKit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            path: "Benchmarks/ReceiptBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "SignedDataBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "IAPSignedData", package: "IAPKit"),
                .product(name: "IAPTrust", package: "IAPKit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            path: "Benchmarks/SignedDataBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "EntitlementBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "IAPEntitlements", package: "IAPKit"),
                .product(name: "IAPCatalog", package: "IAPKit"),
                .product(name: "IAPReceipts", package: "IAPKit"),
            ],
            path: "Benchmarks/EntitlementBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "SimulatorYear",
            dependencies: [
                .product(name: "IAPSimulator", package: "IAPKit"),
                .product(name: "IAPCatalog", package: "IAPKit"),
                .product(name: "IAPReceipts", package: "IAPKit"),
                .product(name: "IAPSignedData", package: "IAPKit"),
            ],
            path: "Benchmarks/SimulatorYear"
        ),
        .executableTarget(
            name: "BulkBaseline",
            dependencies: [
                .product(name: "IAPReceipts", package: "IAPKit"),
                .product(name: "IAPSignedData", package: "IAPKit"),
                .product(name: "IAPTrust", package: "IAPKit"),
            ],
            path: "Benchmarks/BulkBaseline"
        ),
    ]
)
