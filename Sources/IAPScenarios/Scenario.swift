import Foundation

/// A scenario file: a readable script of store steps with expectations, in JSON or YAML.
///
/// ```yaml
/// name: Ana's first month
/// catalog: Florist.storekit        # relative to this file; `--catalog` overrides it
/// start: 2026-01-01T09:00:00Z
/// steps:
///   - createAccount: ana
///   - buy: vip.gold                # a product id, or its unique last part(s)
///     account: ana
///   - advance: P1M                 # P3D, P2W, P1M, P1Y, or 90s, 15m, 2h, 3d
///   - expect: ana
///     entitled: [vip.gold]
///     subscription: { group: VIP, state: subscribed }
/// ```
public struct Scenario: Sendable, Decodable {
    public var name: String
    public var description: String?
    /// The catalog file, relative to the scenario file.
    public var catalog: String?
    /// When the simulation starts (ISO 8601); 2026-01-01T00:00:00Z when absent.
    public var start: String?
    public var bundleID: String?
    /// `Sandbox` (default), `Production` or `Xcode`.
    public var environment: String?
    /// A StoreKitTest time-rate name (`realTime` by default).
    public var timeRate: String?
    /// Whether failed renewals get a grace period; the catalog's setting when absent.
    public var gracePeriod: Bool?
    public var seed: UInt64?
    /// Offer codes customers may redeem: code -> product and offer id.
    public var offerCodes: [String: ScenarioOfferCode]?
    /// Promotional-offer keys by key id, as PEM private keys: the scenario signs the offers it uses with them, and
    /// the simulator checks those signatures with their public halves.
    public var promotionalOfferKeys: [String: String]?
    public var steps: [ScenarioStep]

    /// Reads a scenario from JSON or YAML text (YAML is a superset of JSON, so one parser reads both), in time linear
    /// in the text's size: aliases are bounded in number and expansion, complex and duplicate keys are refused, each
    /// refusal a ``ScenarioError`` naming the line.
    public static func parse(_ text: String) throws(ScenarioError) -> Scenario {
        let root = try YAMLNode.parse(text)
        do {
            return try Scenario(from: YAMLTreeDecoder(root))
        } catch let error as ScenarioError {
            throw error
        } catch let DecodingError.keyNotFound(key, context) {
            throw ScenarioError(.unreadable, "missing '\(key.stringValue)' at \(Self.path(context.codingPath))")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            throw ScenarioError(
                .unreadable, "wrong type at \(Self.path(context.codingPath)): \(context.debugDescription)")
        } catch let DecodingError.dataCorrupted(context) {
            // Errors thrown while decoding a step come back wrapped; unwrap ours.
            if let ours = context.underlyingError as? ScenarioError { throw ours }
            throw ScenarioError(.unreadable, "\(Self.path(context.codingPath)): \(context.debugDescription)")
        } catch {
            throw ScenarioError(.unreadable, "not a readable scenario: \(error)")
        }
    }

    /// Reads a scenario file.
    public static func load(contentsOfFile path: String) throws(ScenarioError) -> Scenario {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ScenarioError(.unreadable, "cannot read \(path)")
        }
        guard data.count <= 4 << 20 else { throw ScenarioError(.unreadable, "\(path) is larger than 4 MiB") }
        return try parse(String(decoding: data, as: UTF8.self))
    }

    static func path(_ codingPath: [any CodingKey]) -> String {
        let text = codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return text.isEmpty ? "the top level" : String(text.drop { $0 == "." })
    }
}

/// An offer code's grant in a scenario file.
public struct ScenarioOfferCode: Sendable, Decodable {
    public var product: String
    public var offer: String
}
