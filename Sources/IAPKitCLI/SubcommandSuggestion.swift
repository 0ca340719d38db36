import ArgumentParser

/// A mistyped subcommand (`iapkit recipt verify`) and the nearest one that exists, so the user reads "did you mean
/// 'receipt'?" rather than ArgumentParser's "3 unexpected arguments".
struct SubcommandSuggestion {
    let message: String

    /// The suggestion for `arguments` (without the program name), or nil when every subcommand named exists.
    init?(_ arguments: [String], root: any ParsableCommand.Type = IAPKitCommand.self) {
        var command = root
        var path = [root.configuration.commandName ?? "iapkit"]
        for token in arguments {
            let subcommands = command.configuration.subcommands
            guard !subcommands.isEmpty, !token.hasPrefix("-"), token != "help" else { return nil }
            let names = subcommands.map { $0.configuration.commandName ?? "\($0)" }
            guard let index = names.firstIndex(of: token) else {
                let listed = names.joined(separator: ", ")
                let nearest = names.map { ($0, Self.distance($0, token)) }.min { $0.1 < $1.1 }
                let guess = nearest.flatMap { $0.1 <= max(2, token.count / 3) ? " Did you mean '\($0.0)'?" : nil }
                message = "'\(path.joined(separator: " ")) \(token)' is no command.\(guess ?? "") Commands: \(listed)."
                return
            }
            command = subcommands[index]
            path.append(token)
        }
        return nil
    }

    /// The Levenshtein distance between two short words.
    static func distance(_ lhs: String, _ rhs: String) -> Int {
        let a = Array(lhs.prefix(64)), b = Array(rhs.prefix(64))
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
