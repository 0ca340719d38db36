import Foundation
import IAPCore
import PostgresNIO

/// Which queries each connection has prepared. PostgreSQL parses and plans an unnamed statement every time it runs,
/// which was half of its time under the server benchmark; a statement prepared once per connection (`PREPARE`) and run
/// as `EXECUTE name(...)` is planned once (connections ask for generic plans), then runs from its cached plan.
///
/// A plan is only as good as what PostgreSQL knew of the tables when it was made: one made while they were nearly
/// empty may filter a whole index where it should look a row up. So each statement is prepared again on its 64th,
/// 1,024th and 16,384th use on a connection, then every 262,144 uses or 10 minutes, whichever comes first.
///
/// Bounded: at most 512 distinct texts get names, and a connection's set goes when it closes. The set is exact (a
/// statement is remembered once PostgreSQL prepared it), so neither `PREPARE` nor `DEALLOCATE` can fail inside a
/// write's transaction for a name it does or does not know.
final class PreparedStatements: Sendable {
    enum Lookup: Equatable {
        /// Run the text as it is.
        case unprepared
        /// Run `EXECUTE name` with the first `parameters` values.
        case prepared(String, parameters: Int)
        /// Prepare the text under this name on this connection first (`DEALLOCATE` it first when `again`).
        case prepare(String, parameters: Int, again: Bool)
    }

    private struct Use {
        var count = 0
        /// When it was last prepared on the connection; nil while it is not.
        var preparedAt: ContinuousClock.Instant?
    }
    private struct Named {
        var name: String
        /// The highest `$n` the text names: PREPARE counts those, and values past it are left out of `EXECUTE`.
        var parameters: Int
    }
    private struct State {
        var names: [String: Named] = [:]
        var refused: Set<String> = []
        var preparedOn: [Int: [String: Use]] = [:]
    }
    private let state = Locked(State())
    private let clock = ContinuousClock()
    static let maximumTexts = 512

    func lookup(_ text: String, connection: Int) -> Lookup {
        let now = clock.now
        return state.withLock { state in
            let named: Named
            if let known = state.names[text] {
                named = known
            } else {
                guard !state.refused.contains(text) else { return .unprepared }
                guard Self.isQuery(text), state.names.count < Self.maximumTexts else {
                    if state.refused.count < Self.maximumTexts { state.refused.insert(text) }
                    return .unprepared
                }
                named = Named(name: "iap_\(state.names.count + 1)", parameters: Self.parameterCount(text))
                state.names[text] = named
            }
            let name = named.name
            var use = state.preparedOn[connection]?[name] ?? Use()
            use.count += 1
            state.preparedOn[connection, default: [:]][name] = use
            guard let preparedAt = use.preparedAt else {
                return .prepare(name, parameters: named.parameters, again: false)
            }
            let replan =
                [64, 1_024, 16_384].contains(use.count) || use.count % 262_144 == 0
                || now - preparedAt > .seconds(600)
            return replan
                ? .prepare(name, parameters: named.parameters, again: true)
                : .prepared(name, parameters: named.parameters)
        }
    }

    /// Notes that `name` is prepared on `connection`; the first time a connection prepares anything, its set is set
    /// to go when it closes.
    func remember(_ name: String, on connection: PostgresConnection) {
        let now = clock.now
        let first = state.withLock { state in
            let first = state.preparedOn[connection.id]?.values.allSatisfy { $0.preparedAt == nil } ?? true
            state.preparedOn[connection.id, default: [:]][name, default: Use()].preparedAt = now
            return first
        }
        if first {
            let id = connection.id
            connection.closeFuture.whenComplete { [self] _ in state.withLock { $0.preparedOn[id] = nil } }
        }
    }

    func forget(_ name: String, connection: Int) {
        state.withLock { $0.preparedOn[connection]?[name]?.preparedAt = nil }
    }

    func refuse(_ text: String) {
        state.withLock { state in
            state.names[text] = nil
            state.refused.insert(text)
        }
    }

    /// `EXECUTE name(...)` with the values as literals (PostgreSQL does not pass a statement's parameters on to an
    /// `EXECUTE`): integers in digits, text in an escape string (`E'...'`, quotes and backslashes doubled, so no
    /// setting changes how it reads). Nil when a value cannot be written as a literal (text holding NUL, which
    /// PostgreSQL's text never holds anyway: the statement then runs as it is and fails there).
    static func execute(_ name: String, _ values: ArraySlice<SQLValue>) -> String? {
        var bytes: [UInt8] = Array("EXECUTE \(name)".utf8)
        guard !values.isEmpty else { return String(decoding: bytes, as: UTF8.self) }
        bytes.reserveCapacity(
            values.reduce(bytes.count + 2) { total, value in
                if case .text(let text) = value { return total + text.utf8.count + 8 }
                return total + 22
            })
        bytes.append(UInt8(ascii: "("))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes += [UInt8(ascii: ","), UInt8(ascii: " ")] }
            switch value {
            case .null: bytes += Array("NULL".utf8)
            case .integer(let number): bytes += Array(String(number).utf8)
            case .text(let text):
                bytes += [UInt8(ascii: "E"), UInt8(ascii: "'")]
                for byte in text.utf8 {
                    switch byte {
                    case 0: return nil
                    case UInt8(ascii: "'"), UInt8(ascii: "\\"): bytes += [byte, byte]
                    default: bytes.append(byte)
                    }
                }
                bytes.append(UInt8(ascii: "'"))
            }
        }
        bytes.append(UInt8(ascii: ")"))
        return String(decoding: bytes, as: UTF8.self)
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
