public import Foundation

/// The real-world corpus in `../shared/testdata` (receipts, certificates, JWS published by other projects).
///
/// Tests read it in place and skip with a message when it is absent; it is never copied into the project.
public enum SharedTestData {
    /// The corpus folder: `IAPKIT_TESTDATA` if set, else `../shared/testdata` beside the package.
    public static let root: URL = {
        if let path = ProcessInfo.processInfo.environment["IAPKIT_TESTDATA"] {
            return URL(fileURLWithPath: path)
        }
        // This file is Tests/IAPTestSupport/SharedTestData.swift: the package is three levels up.
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return package.deletingLastPathComponent().appendingPathComponent("shared/testdata")
    }()

    /// Whether the corpus is present.
    public static let isAvailable: Bool = FileManager.default.fileExists(
        atPath: root.appendingPathComponent("MANIFEST.md").path)

    /// The message tests give when they skip.
    public static let skipMessage = "the shared corpus (../shared/testdata) is absent"

    /// The path of a corpus file, e.g. `path("receipts/kvitto-receipt.der")`.
    public static func path(_ relative: String) -> String {
        root.appendingPathComponent(relative).path
    }

    /// The bytes of a corpus file.
    public static func bytes(_ relative: String) throws -> [UInt8] {
        Array(try Data(contentsOf: root.appendingPathComponent(relative)))
    }
}

/// A small, fast, seedable generator (SplitMix64) so fuzzing and property tests are reproducible.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { self.state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
