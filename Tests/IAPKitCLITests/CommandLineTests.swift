import ArgumentParser
import Foundation
import IAPTestSupport
import Testing

@testable import IAPKitCLI

/// The command line as a shell hands it over: tens of thousands of paths (what `*.jws` expands to), mistyped
/// subcommands, documents given to the wrong command.
struct CommandLineTests {
    /// ArgumentParser's positional parsing is quadratic in the paths' count; the split hands it one path and gives
    /// the parsed command the rest, with every option (before, between and after the paths) parsed as before.
    @Test func fortyThousandPathsAreSplitOnceAndParsedAsAWholeLineWouldBe() throws {
        let paths = (0..<40_000).map { "documents/\($0).jws" }
        let arguments =
            ["jws", "verify", "--root", "apple.der"] + paths[..<100] + ["--json", "--jobs", "2", "-"] + paths[100...]
            + ["--bundle-id=com.example.florist", "--", "--a-file-named-like-a-flag.jws"]
        let line = try #require(BulkCommandLine(arguments))
        #expect(line.arguments.count < 16, "ArgumentParser sees the options and one path: \(line.arguments.count)")
        let command = try #require(try line.parse() as? JWSVerifyCommand)
        #expect(
            command.input.paths == Array(paths[..<100]) + ["-"] + paths[100...] + ["--a-file-named-like-a-flag.jws"])
        #expect(command.json && command.input.jobs == 2)
        #expect(command.trust.roots == ["apple.der"])
        #expect(command.bundleID == "com.example.florist")

        // The same line, short enough for ArgumentParser alone, parses to the same command.
        let short = ["jws", "verify", "--root", "apple.der", "a.jws", "--json", "--jobs", "2", "-", "b.jws"]
        #expect(BulkCommandLine(short) == nil)
        let whole = try #require(try IAPKitCommand.parseAsRoot(short) as? JWSVerifyCommand)
        let splitLine = try #require(BulkCommandLine(short, threshold: 0))
        let split = try #require(try splitLine.parse() as? JWSVerifyCommand)
        #expect(
            whole.input.paths == split.input.paths && whole.json == split.json && whole.input.jobs == split.input.jobs)

        // What ArgumentParser would refuse is still refused: standard input twice, a bad option value.
        #expect(throws: (any Error).self) { try BulkCommandLine(["jws", "decode", "-"] + paths + ["-"])?.parse() }
        #expect(throws: (any Error).self) {
            try BulkCommandLine(["receipt", "verify", "--jobs", "0"] + paths)?.parse()
        }
        // Every bulk command takes the split.
        for command in BulkCommandLine.commandPaths {
            let roots = command.last == "verify" ? ["--root", "apple.der"] : []
            let parsed = try #require(try BulkCommandLine(command + roots + paths)?.parse() as? any BulkCommand)
            #expect(parsed.input.paths.count == paths.count, "\(command)")
        }
    }

    @Test func aMistypedSubcommandGetsTheNearestName() {
        #expect(SubcommandSuggestion(["recipt", "verify", "x"])?.message.contains("Did you mean 'receipt'?") == true)
        #expect(SubcommandSuggestion(["jws", "verfy"])?.message.contains("Did you mean 'verify'?") == true)
        #expect(SubcommandSuggestion(["frobnicate"])?.message.contains("Commands: serve, receipt") == true)
        #expect(SubcommandSuggestion(["jws", "verify", "verfy.jws"]) == nil, "paths are no subcommands")
        #expect(SubcommandSuggestion(["help", "jws"]) == nil && SubcommandSuggestion(["--help"]) == nil)
    }

    @Test func aDocumentGivenToTheWrongCommandPointsAtTheRightOne() {
        let der: [UInt8] = [0x30, 0x82, 0x01, 0x00, 0x06, 0x09]
        #expect(DocumentKind.hint(for: der, expected: .jws)?.contains("iapkit receipt inspect") == true)
        #expect(DocumentKind.hint(for: Array("MIIT2AYJKoZIhvcNAQcCoIITyTCCE8UCAQEx".utf8), expected: .jws) != nil)
        let jws = Array("eyJhbGciOiJFUzI1NiJ9.eyJ9.c2ln".utf8)
        #expect(DocumentKind.hint(for: jws, expected: .receipt)?.contains("iapkit jws decode") == true)
        #expect(DocumentKind.hint(for: jws, expected: .jws) == nil)
        #expect(DocumentKind.hint(for: Array("hello".utf8), expected: .jws) == nil)
    }

    /// A configuration file that is missing, broken or not an object is named with what is wrong, in serve's own words
    /// (the configuration library's errors were Foundation's domain and code), and a setting it holds that is refused
    /// is said the same way.
    @Test func aBrokenConfigurationFileIsRefusedWithWhatIsWrong() async throws {
        let folder = TestFiles.url("config")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func refusal(_ content: String?) async throws -> String {
            let file = folder.appendingPathComponent("config.json")
            try? FileManager.default.removeItem(at: file)
            if let content { try Data(content.utf8).write(to: file) }
            let command = try #require(
                try IAPKitCommand.parseAsRoot(["serve", "--config", file.path, "--no-simulator"]) as? ServeCommand)
            do {
                _ = try await command.loadSettings()
                return "accepted"
            } catch {
                return String(describing: error)
            }
        }
        let missing = try await refusal(nil)
        #expect(missing.hasSuffix("config.json: no such file"), "\(missing)")
        let truncated = try await refusal(#"{"apps": [{"bundleId": "com.example.florist", "#)
        #expect(truncated.contains("config.json is not valid JSON: "), "\(truncated)")
        #expect(!truncated.contains("NSCocoaErrorDomain") && !truncated.contains("3840"), "\(truncated)")
        let fragment = try await refusal(#""a string""#)
        #expect(fragment.hasSuffix("the file must hold one JSON object (its keys are the settings)"), "\(fragment)")
        let array = try await refusal("[1, 2]")
        #expect(array.hasSuffix("the file must hold one JSON object (its keys are the settings)"), "\(array)")
        let shortKey = try await refusal(#"{"apiKeys": ["short"]}"#)
        #expect(shortKey.contains("shorter than 16 characters"), "\(shortKey)")
    }
}
