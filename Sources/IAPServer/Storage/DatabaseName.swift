import Foundation

/// What a server's database setting (`--database`, `IAPKIT_DATABASE_URL`, `database.url`) names: an SQLite file,
/// `:memory:`, or a PostgreSQL server by a `postgres://` or `postgresql://` URL.
public enum DatabaseName: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)
    case postgres(url: String)

    /// Reads `text`, with the spaces and line ends around it dropped (a URL kept in a file often ends with one). The
    /// scheme is read in any case (`Postgres://` too). Refused: a URL of any other scheme, as `postgress://` (it was
    /// opened as an SQLite file of that name, and failed naming SQLite, an operator's trial).
    public init(_ text: String) throws(StorageError) {
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let scheme = Self.scheme(of: text) else {
            self = .sqlite(path: text)
            return
        }
        // SQLite's own URI filenames (`file:/path?mode=ro`), which Debian's SQLite opens as such.
        if scheme.lowercased() == "file" {
            self = .sqlite(path: text)
            return
        }
        guard ["postgres", "postgresql"].contains(scheme.lowercased()) else {
            throw StorageError(
                code: "badDatabaseURL",
                reason: "'\(Self.redacted(text))' is neither a postgres:// (or postgresql://) URL nor an SQLite file's "
                    + "path ('\(scheme):' is not a scheme IAPKit knows)")
        }
        self = .postgres(url: scheme.lowercased() + text.dropFirst(scheme.count))
    }

    /// The scheme of a URL such as `scheme:/...` (RFC 3986's letters), nil for a path, including one with a colon in
    /// a file's name (`backup:2026.sqlite`).
    private static func scheme(of text: String) -> String? {
        guard let colon = text.firstIndex(of: ":"), text[text.index(after: colon)...].hasPrefix("/") else { return nil }
        let scheme = text[..<colon]
        guard let first = scheme.first, first.isASCII, first.isLetter,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+.-".contains($0)) })
        else { return nil }
        return String(scheme)
    }

    /// `text` with a URL's password replaced by `***`, for banners, logs and error messages (the start banner showed
    /// it, and under systemd that goes to the journal). A path is as given. The user's part ends at the last `@`
    /// before the query, or at the last `@` of all when none comes before it (a password with a `?` or `#` not
    /// percent-encoded); a password with unusual characters hides more than itself, never less.
    public static func redacted(_ text: String) -> String {
        guard let scheme = scheme(of: text) else { return text }
        let rest = text.dropFirst(scheme.count + 1).drop { $0 == "/" }
        let query = rest.firstIndex { $0 == "?" || $0 == "#" } ?? rest.endIndex
        guard let at = rest[..<query].lastIndex(of: "@") ?? rest.lastIndex(of: "@"),
            let colon = rest[..<at].firstIndex(of: ":")
        else { return text }
        return String(text[..<rest.index(after: colon)]) + "***" + String(text[at...])
    }

    /// What the banner and logs show: the path, or the URL without its password.
    public var description: String {
        switch self {
        case .sqlite(let path): path
        case .postgres(let url): Self.redacted(url)
        }
    }
}
