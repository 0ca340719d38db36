import ArgumentParser
import Foundation

/// The four commands that take any number of paths (`receipt verify`, `receipt inspect`, `jws verify`,
/// `jws decode`).
protocol BulkCommand: AsyncParsableCommand {
    var input: BulkInputOptions { get set }
}

extension ReceiptVerifyCommand: BulkCommand {}
extension ReceiptInspectCommand: BulkCommand {}
extension JWSVerifyCommand: BulkCommand {}
extension JWSDecodeCommand: BulkCommand {}

/// A bulk command line with its paths set apart, so ArgumentParser never sees more than one of them.
///
/// ArgumentParser 1.8's parsing of a positional array is quadratic in its length (each value taken is looked up
/// from the front of what is left: `SplitArguments.remove(at:)`): 8,000 paths took 12 s to parse in a debug build,
/// 32,000 took 18 s in a release one, while walking a folder of the same files took 1.6 s. What a shell makes of
/// `*.jws` must cost what the folder costs, so the command line is split here, once, in linear time: which tokens
/// are options that take a value comes from the command's own definition (ArgumentParser's help dump), so every
/// option keeps its meaning and nothing is listed twice.
struct BulkCommandLine: Equatable {
    /// The arguments for ArgumentParser: everything but the paths after the first.
    let arguments: [String]
    /// The paths after the first, in order, for the parsed command to take.
    let laterPaths: [String]

    /// Splitting is for long command lines only; shorter ones are parsed as they are.
    static let threshold = 64

    /// The command names that lead to a bulk command.
    static let commandPaths: Set<[String]> = [
        ["receipt", "verify"], ["receipt", "inspect"], ["jws", "verify"], ["jws", "decode"],
    ]

    /// Splits `arguments` (without the program name) when they name a bulk command and more than ``threshold``
    /// tokens; nil otherwise, or when the command's definition cannot be read (then ArgumentParser parses all).
    init?(_ arguments: [String], root: any ParsableCommand.Type = IAPKitCommand.self, threshold: Int = threshold) {
        guard arguments.count > threshold, arguments.count >= 2,
            Self.commandPaths.contains(Array(arguments.prefix(2))),
            let valueOptions = Self.optionsTakingValues(Array(arguments.prefix(2)), root: root)
        else { return nil }
        var kept = Array(arguments.prefix(2))
        var paths: [String] = []
        var index = 2
        var afterTerminator = false
        while index < arguments.count {
            let token = arguments[index]
            index += 1
            if afterTerminator || token == "-" || !token.hasPrefix("-") {
                paths.append(token)
                continue
            }
            if token == "--" {
                afterTerminator = true
                continue
            }
            kept.append(token)
            if valueOptions.contains(token), index < arguments.count {
                kept.append(arguments[index])
                index += 1
            }
        }
        guard let first = paths.first else { return nil }
        // The first path stays, after a terminator so it is never read as an option, and the command's own
        // validation sees that paths were given.
        self.arguments = kept + ["--", first]
        self.laterPaths = Array(paths.dropFirst())
    }

    /// The spellings (`--root`, `-r`) of the options of the command at `path` that take a value.
    static func optionsTakingValues(_ path: [String], root: any ParsableCommand.Type) -> Set<String>? {
        let dump: String
        do {
            _ = try root.parseAsRoot(path + ["--experimental-dump-help"])
            return nil
        } catch {
            dump = root.fullMessage(for: error)
        }
        guard let json = try? JSONSerialization.jsonObject(with: Data(dump.utf8)) as? [String: Any],
            let command = json["command"] as? [String: Any], let arguments = command["arguments"] as? [[String: Any]]
        else { return nil }
        var spellings: Set<String> = []
        for argument in arguments where argument["kind"] as? String == "option" {
            for name in argument["names"] as? [[String: Any]] ?? [] {
                guard let text = name["name"] as? String, let kind = name["kind"] as? String else { continue }
                spellings.insert(kind == "short" ? "-\(text)" : "--\(text)")
            }
        }
        return spellings
    }

    /// Parses the reduced command line and hands the parsed command the later paths.
    func parse(root: any ParsableCommand.Type = IAPKitCommand.self) throws -> any ParsableCommand {
        let parsed = try root.parseAsRoot(arguments)
        guard var bulk = parsed as? any BulkCommand else { return parsed }
        bulk.input.paths += laterPaths
        // What ArgumentParser validated with one path, validated again with all of them (standard input once).
        try bulk.input.validate()
        try bulk.validate()
        return bulk
    }
}

extension IAPKitCommand {
    /// Runs the tool on the process's arguments, as `main()` does, but with a bulk command's paths set apart from
    /// ArgumentParser (``BulkCommandLine`` says why).
    public static func mainSplittingPaths() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let suggestion = SubcommandSuggestion(arguments) {
            FileHandle.standardError.write(Data("Error: \(suggestion.message)\n".utf8))
            Foundation.exit(ExitCode.validationFailure.rawValue)
        }
        guard let line = BulkCommandLine(arguments) else {
            await main(arguments)
            return
        }
        do {
            let command = try line.parse()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                var command = command
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
