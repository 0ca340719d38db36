import Crypto
import Foundation

/// A key a client presents (`Authorization: Bearer KEY` or `X-API-Key: KEY`), with an id that names it in logs and
/// rotation, and what it may do.
///
/// - An **app key** is safe to ship inside an app: it records the purchases a request carries and reads or acts for
///   the one customer a request names (entitlements, consumptions), and nothing that lists or searches.
/// - A **secret key** belongs on the app's backend: everything of its app (listings, refresh).
///
/// Either kind reaches one app only. The server-wide keys of `apiKeys` are secret keys of every app served (an
/// operator's). Several keys of a kind may be valid at once, so a key is rotated by adding the new one, moving clients
/// to it, then removing the old.
public struct AccessKey: Sendable, Hashable {
    /// What a key may do.
    public enum Scope: String, Sendable, Hashable {
        case app, secret
    }

    /// Names the key (logs, metrics, rotation); never secret.
    public var id: String
    public var scope: Scope
    /// The key itself: at least 16 characters.
    public var value: String

    public init(id: String, scope: Scope, value: String) {
        self.id = id
        self.scope = scope
        self.value = value
    }
}

/// Who a request comes from, as the key it presented says.
public struct Caller: Sendable, Hashable {
    /// The id of the key presented.
    public var keyID: String
    public var scope: AccessKey.Scope
    /// The app the key belongs to; nil for a server-wide key, which reaches every app.
    public var bundleID: String?

    public init(keyID: String, scope: AccessKey.Scope, bundleID: String?) {
        self.keyID = keyID
        self.scope = scope
        self.bundleID = bundleID
    }

    /// Whether this caller may reach `bundleID`'s data.
    func reaches(_ bundleID: String) -> Bool { self.bundleID == nil || self.bundleID == bundleID }
}

/// Every key the server accepts, found by the SHA-256 digest of what a request presents (so the time a lookup takes
/// says nothing of how much of a guess was right).
struct KeyRing: Sendable {
    private let callers: [SHA256.Digest: Caller]

    /// The server-wide keys (`apiKeys`, secret keys of every app, ids `server-1`, `server-2`, ...) and each app's keys.
    /// A key given twice (for two apps, or as two kinds) names nobody: it is refused rather than read as either
    /// (`ServerSettings` refuses such a configuration at start).
    init(serverKeys: [String], apps: [AppConfiguration]) {
        var entries: [(value: String, caller: Caller)] = []
        for (index, key) in serverKeys.enumerated() {
            entries.append((key, Caller(keyID: "server-\(index + 1)", scope: .secret, bundleID: nil)))
        }
        for app in apps {
            for key in app.accessKeys {
                entries.append((key.value, Caller(keyID: key.id, scope: key.scope, bundleID: app.bundleID)))
            }
        }
        var callers: [SHA256.Digest: Caller] = [:]
        var ambiguous: Set<SHA256.Digest> = []
        for (value, caller) in entries where !value.isEmpty {
            let digest = SHA256.hash(data: Array(value.utf8))
            if callers.updateValue(caller, forKey: digest) != nil { ambiguous.insert(digest) }
        }
        for digest in ambiguous { callers[digest] = nil }
        self.callers = callers
    }

    /// The caller a presented key names, nil for a key the server does not know.
    func caller(presenting key: String) -> Caller? { callers[SHA256.hash(data: Array(key.utf8))] }
}
