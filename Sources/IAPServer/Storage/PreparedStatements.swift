import Foundation
import IAPCore
import PostgresNIO

/// Which queries each connection has prepared. PostgreSQL parses and plans an unnamed statement every time it runs,
/// which was half of its time under the server benchmark; a statement prepared once per connection (the protocol's
/// Parse under a name) is planned once (connections ask for generic plans), then each run only binds its values and
/// executes the cached plan. The values travel as binary parameters: nothing is parsed again, not even a document.
///
/// A statement is prepared per text and per kind of value in each place (integer or text): each parameter is cast to
/// the type its value has (`CAST($1 AS BIGINT)`, `CAST($2 AS TEXT)`), as an unnamed statement declares them. A NULL
/// takes the kind its place had before; in a place that has only had NULLs, its type is left to PostgreSQL to infer.
///
/// A plan is only as good as what PostgreSQL knew of the tables when it was made: one made while they were nearly
/// empty may filter a whole index where it should look a row up. So each statement is prepared again on its 64th use
/// on a connection and each time its uses double (128th, 256th, ...), then every 262,144 uses or 10 minutes, whichever
/// comes first.
///
/// Bounded: at most 512 distinct statements get prepared (texts and kinds of values; 1,024 texts are remembered), and a
/// connection's set goes when it closes. The set is exact (a statement is remembered once PostgreSQL prepared it).
final class PreparedStatements: Sendable {
    /// A statement's text (by its number among the texts seen) with the kinds of its values: what one prepared
    /// statement serves. Cheap to hash: a text is hashed once per run, to find its number.
    struct Key: Hashable, Sendable {
        var text: Int
        var kinds: [UInt8]

        /// The kind of each value: `i` an integer, `t` text, `n` NULL.
        static func kinds(of values: ArraySlice<SQLValue>) -> [UInt8] {
            values.map { value in
                switch value {
                case .null: UInt8(ascii: "n")
                case .integer: UInt8(ascii: "i")
                case .text: UInt8(ascii: "t")
                }
            }
        }
    }

    /// Whether a statement is prepared again at its `use`th use on a connection: each time its uses double from 64
    /// (the tables it reads grow fastest while they are young), then every 262,144 uses.
    static func replans(atUse use: Int) -> Bool {
        use >= 64 && (use.nonzeroBitCount == 1 || use % 262_144 == 0)
    }

    enum Lookup {
        /// Run the text as it is (an unnamed statement).
        case unprepared
        /// Run the prepared statement with the first `parameters` values.
        case prepared(PreparedQuery, parameters: Int)
        /// Prepare `text` on this connection first (deallocating `replacing`, the plan it had until now).
        case prepare(String, parameters: Int, replacing: PreparedQuery?)
    }

    private struct Use {
        var count = 0
        var query: PreparedQuery?
        /// When it was last prepared on the connection; nil while it is not.
        var preparedAt: ContinuousClock.Instant?
    }
    /// A text seen: its number, the highest `$n` it names, whether it runs unprepared, and the kind of value each
    /// parameter was first given other than NULL (`n` while it has only had NULLs).
    private struct Text {
        var number: Int
        var parameters: Int
        var refused: Bool
        var kinds: [UInt8]
    }
    private struct State {
        var texts: [String: Text] = [:]
        var known: Set<Key> = []
        var preparedOn: [Int: [Key: Use]] = [:]
    }
    private let state = Locked(State())
    private let clock = ContinuousClock()
    static let maximumStatements = 512

    /// What to do with `statement` on `connection`, and the key it is remembered under.
    func lookup(_ statement: SQLStatement, connection: Int) -> (Key?, Lookup) {
        let now = clock.now
        return state.withLock { state in
            let text = statement.text
            var known: Text
            if let seen = state.texts[text] {
                known = seen
            } else {
                guard state.texts.count < Self.maximumStatements * 2 else { return (nil, .unprepared) }
                let parameters = Self.parameterCount(text)
                known = Text(
                    number: state.texts.count, parameters: parameters, refused: !Self.isQuery(text),
                    kinds: Array(repeating: UInt8(ascii: "n"), count: parameters))
                state.texts[text] = known
            }
            guard !known.refused, statement.binds.count >= known.parameters else { return (nil, .unprepared) }
            // A NULL takes the type its place had before (a NULL binds to any type), so the places a value is
            // sometimes missing from do not multiply the statements.
            var kinds = Key.kinds(of: statement.binds.prefix(known.parameters))
            var learned = false
            for (place, kind) in kinds.enumerated() {
                if kind == UInt8(ascii: "n") {
                    kinds[place] = known.kinds[place]
                } else if known.kinds[place] == UInt8(ascii: "n") {
                    known.kinds[place] = kind
                    learned = true
                }
            }
            if learned { state.texts[text] = known }
            let key = Key(text: known.number, kinds: kinds)
            var use: Use
            if let existing = state.preparedOn[connection]?[key] {
                use = existing
            } else {
                if !state.known.contains(key) {
                    guard state.known.count < Self.maximumStatements else { return (nil, .unprepared) }
                    state.known.insert(key)
                }
                use = Use()
            }
            use.count += 1
            state.preparedOn[connection, default: [:]][key] = use
            guard let query = use.query, let preparedAt = use.preparedAt else {
                return (key, .prepare(Self.typed(text, kinds: key.kinds), parameters: known.parameters, replacing: nil))
            }
            let replan = Self.replans(atUse: use.count) || now - preparedAt > .seconds(600)
            return replan
                ? (key, .prepare(Self.typed(text, kinds: key.kinds), parameters: known.parameters, replacing: query))
                : (key, .prepared(query, parameters: known.parameters))
        }
    }

    /// Notes that `query` serves `key` on `connection`; the first time a connection prepares anything, its set is set
    /// to go when it closes.
    func remember(_ query: PreparedQuery, as key: Key, on connection: PostgresConnection) {
        let now = clock.now
        let first = state.withLock { state in
            let first = state.preparedOn[connection.id]?.values.allSatisfy { $0.query == nil } ?? true
            state.preparedOn[connection.id, default: [:]][key, default: Use()].query = query
            state.preparedOn[connection.id]?[key]?.preparedAt = now
            return first
        }
        if first {
            let id = connection.id
            connection.closeFuture.whenComplete { [self] _ in state.withLock { $0.preparedOn[id] = nil } }
        }
    }

    /// Notes that `key` is not prepared on `connection` (it is prepared afresh at its next use).
    func forget(_ key: Key, connection: Int) {
        state.withLock { state in
            state.preparedOn[connection]?[key]?.query = nil
            state.preparedOn[connection]?[key]?.preparedAt = nil
        }
    }

    /// Runs `text` unprepared from now on: PostgreSQL cannot prepare it on its own (the type of a parameter it cannot
    /// tell).
    func refuse(_ text: String) {
        state.withLock { state in
            if state.texts[text] != nil {
                state.texts[text]?.refused = true
            } else if state.texts.count < Self.maximumStatements * 2 {
                state.texts[text] = Text(number: state.texts.count, parameters: 0, refused: true, kinds: [])
            }
        }
    }

    /// The values as the protocol's binary parameters, each of the type its cast in ``typed(_:kinds:)`` names.
    static func binds(_ values: ArraySlice<SQLValue>) -> [PostgresData] {
        values.map { value in
            switch value {
            case .null: .null
            case .integer(let number): PostgresData(int64: number)
            case .text(let text): PostgresData(string: text)
            }
        }
    }

    /// The text with each parameter cast to its value's type: `$n` becomes `CAST($n AS BIGINT)` for an integer and
    /// `CAST($n AS TEXT)` for text; a NULL's stays as it is. The storage's texts hold `$` only in parameters.
    static func typed(_ text: String, kinds: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + kinds.count * 24)
        var bytes = text.utf8[...]
        while let dollar = bytes.firstIndex(of: UInt8(ascii: "$")) {
            out += bytes[..<dollar]
            let rest = bytes[bytes.index(after: dollar)...]
            let digits = rest.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            bytes = rest[digits.endIndex...]
            let parameter = [UInt8(ascii: "$")] + digits
            guard let number = Int(String(decoding: digits, as: UTF8.self)), number >= 1, number <= kinds.count
            else {
                out += parameter
                continue
            }
            switch kinds[number - 1] {
            case UInt8(ascii: "i"): out += Array("CAST(".utf8) + parameter + Array(" AS BIGINT)".utf8)
            case UInt8(ascii: "t"): out += Array("CAST(".utf8) + parameter + Array(" AS TEXT)".utf8)
            default: out += parameter
            }
        }
        out += bytes
        return String(decoding: out, as: UTF8.self)
    }

    /// The highest `$n` the text names.
    static func parameterCount(_ text: String) -> Int {
        var highest = 0
        var bytes = text.utf8[...]
        while let dollar = bytes.firstIndex(of: UInt8(ascii: "$")) {
            bytes = bytes[bytes.index(after: dollar)...]
            let digits = bytes.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            if let number = Int(String(decoding: digits, as: UTF8.self)) { highest = max(highest, number) }
            bytes = bytes[digits.endIndex...]
        }
        return highest
    }

    /// Whether PostgreSQL can prepare the text: one SELECT, INSERT, UPDATE, DELETE or WITH query.
    static func isQuery(_ text: String) -> Bool {
        let start = text.drop { $0.isWhitespace }.prefix(6).uppercased()
        return ["SELECT", "INSERT", "UPDATE", "DELETE"].contains(start) || start.hasPrefix("WITH")
    }
}
