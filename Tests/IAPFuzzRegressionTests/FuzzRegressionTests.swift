import Foundation
import IAPFuzzHarness
import Testing

/// Every input the fuzzers or a review ever found troublesome, kept in Tests/Regressions/TARGET/, runs through the
/// same harness the fuzzer drives: each must come back (no trap, no hang) with the outcome it has today.
struct FuzzRegressionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Regressions")

    static func files(_ target: FuzzTarget) -> [URL] {
        let folder = root.appendingPathComponent(target.rawValue)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { !$0.hasPrefix(".") && $0 != "README.md" }.sorted().map {
            folder.appendingPathComponent($0)
        }
    }

    @Test(arguments: FuzzTarget.allCases)
    func everyRegressionInputComesBack(target: FuzzTarget) async throws {
        let files = Self.files(target)
        #expect(!files.isEmpty, "Tests/Regressions/\(target.rawValue) holds at least one input")
        for file in files {
            let outcome = await FuzzHarness.run(target, Array(try Data(contentsOf: file)))
            #expect(!outcome.isEmpty, "\(file.lastPathComponent)")
        }
    }
}
