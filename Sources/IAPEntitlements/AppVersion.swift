/// A version string compared the way people read versions: component by component, numbers as numbers.
///
/// "1.10" comes after "1.9", "2" equals "2.0", and "3.3.1b4" comes before "3.3.1b10" (a component's digits compare
/// as a number, whatever follows compares as text).
public struct AppVersion: Comparable, Hashable, Sendable, CustomStringConvertible {
    public let description: String
    private let components: [Component]

    private struct Component: Hashable {
        var number: Int
        var suffix: Substring
        static let zero = Component(number: 0, suffix: "")
    }

    public init(_ text: String) {
        description = text
        var parts = text.split(separator: ".", omittingEmptySubsequences: false).map(Self.component)
        while let last = parts.last, last.number == 0, last.suffix.isEmpty { parts.removeLast() }
        components = parts
    }

    private static func component(_ part: Substring) -> Component {
        let digits = part.prefix { $0.isASCII && $0.isNumber }
        // Capped so a long run of digits cannot overflow; versions never come near it.
        let number = digits.prefix(18).reduce(0) { $0 * 10 + Int($1.asciiValue! - 48) }
        return Component(number: number, suffix: part.dropFirst(digits.count))
    }

    public static func < (lhs: AppVersion, rhs: AppVersion) -> Bool {
        for index in 0..<max(lhs.components.count, rhs.components.count) {
            let left = index < lhs.components.count ? lhs.components[index] : .zero
            let right = index < rhs.components.count ? rhs.components[index] : .zero
            if left.number != right.number { return left.number < right.number }
            if left.suffix == right.suffix { continue }
            // "1.0b2" < "1.0": a suffix marks a pre-release of the bare number.
            if left.suffix.isEmpty || right.suffix.isEmpty { return right.suffix.isEmpty }
            // "b4" < "b10" < "rc1": the label as text, then its number, then what is left as text.
            let leftLabel = left.suffix.prefix { !$0.isNumber }
            let rightLabel = right.suffix.prefix { !$0.isNumber }
            if leftLabel != rightLabel { return leftLabel < rightLabel }
            let leftRest = component(left.suffix.dropFirst(leftLabel.count))
            let rightRest = component(right.suffix.dropFirst(rightLabel.count))
            if leftRest.number != rightRest.number { return leftRest.number < rightRest.number }
            return leftRest.suffix < rightRest.suffix
        }
        return false
    }

    public static func == (lhs: AppVersion, rhs: AppVersion) -> Bool { !(lhs < rhs) && !(rhs < lhs) }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(components)
    }
}

/// What to change in a locally cached list of unlocked product ids so it matches a verified snapshot.
public struct Reconciliation: Hashable, Sendable, Codable {
    /// Entitled but missing from the cache: unlock them.
    public var grant: [String]
    /// Cached but no longer entitled (expired, refunded, revoked, never bought): lock them.
    public var remove: [String]
    /// Cached and entitled.
    public var keep: [String]
    /// Cached, bought, but of a type nothing states: leave them as they are until a catalog says.
    public var undetermined: [String]
}

extension EntitlementSnapshot {
    /// Compares a cached list of unlocked product ids (what an app kept for offline start-up) with this snapshot.
    public func reconcile(cachedProductIDs: some Sequence<String>) -> Reconciliation {
        let cached = Set(cachedProductIDs)
        let entitled = entitledProductIDs
        let unknown = Set(unclassified.map(\.productID)).subtracting(entitled)
        return Reconciliation(
            grant: entitled.subtracting(cached).sorted(),
            remove: cached.subtracting(entitled).subtracting(unknown).sorted(),
            keep: cached.intersection(entitled).sorted(),
            undetermined: cached.intersection(unknown).sorted()
        )
    }
}
