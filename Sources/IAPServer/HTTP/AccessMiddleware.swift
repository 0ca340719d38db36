import Crypto
import Foundation
package import HTTPTypes
package import Hummingbird

/// Who may use the operator surfaces (`/simulator`, `/console`, `/metrics`): decided by configuration, never by the
/// address a request comes from (behind a proxy on the same host every request comes from 127.0.0.1).
public enum OperatorAccess: Sendable, Equatable {
    /// Development mode: no real app is configured and the server listens on loopback only; no token needed.
    case open
    /// Every request must present the admin token (`Authorization: Bearer TOKEN`).
    case token(String)
    /// Real apps are served and no admin token is configured: the operator surfaces refuse everyone.
    case refused

    /// The access a configuration gives: development mode is open, anything else needs the admin token.
    public static func from(developmentMode: Bool, adminToken: String?) -> OperatorAccess {
        if let adminToken { return .token(adminToken) }
        return developmentMode ? .open : .refused
    }
}

/// The guard of a route group that only the operator may use (`/simulator`, `/console`, `/metrics`); placed on the
/// group, so a route added to it cannot be left open. 401 without the admin token, 403 with another or when the
/// server has none.
package struct OperatorMiddleware<Context: RequestContext>: RouterMiddleware {
    private let digest: SHA256.Digest?
    private let refused: Bool

    package init(_ access: OperatorAccess) {
        switch access {
        case .open: (digest, refused) = (nil, false)
        case .token(let token): (digest, refused) = (SHA256.hash(data: Data(token.utf8)), false)
        case .refused: (digest, refused) = (nil, true)
        }
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws
        -> Response
    {
        try check(request)
        return try await next(request, context)
    }

    /// Whether a header is one that proxies and load balancers add to say who the client was or how it came
    /// (`Forwarded`, `Via`, any `X-Forwarded-*`, and the client-address headers of common proxies and CDNs).
    static func isSetByProxies(_ name: HTTPField.Name) -> Bool {
        let name = name.canonicalName
        return name.hasPrefix("x-forwarded-") || name.hasPrefix("x-original-forwarded")
            || [
                "forwarded", "via", "x-real-ip", "x-client-ip", "x-cluster-client-ip", "true-client-ip",
                "cf-connecting-ip", "fastly-client-ip", "x-proxyuser-ip", "x-envoy-external-address",
            ].contains(name)
    }

    func check(_ request: Request) throws(APIError) {
        if refused {
            throw APIError(
                403, "adminTokenNotConfigured",
                "this server serves real apps: set adminToken (IAPKIT_ADMIN_TOKEN) to use its operator routes")
        }
        guard let digest else {
            // Development mode is for this machine: a request a proxy passed on, or one a page of another site
            // made (a GET can change things here: an update stream ends the account's oldest), is not.
            if let field = request.headers.first(where: { Self.isSetByProxies($0.name) }) {
                throw APIError(
                    403, "proxiedRequestRefused",
                    "development mode serves this machine only (\(field.name.canonicalName.prefix(64)) says a proxy "
                        + "passed this on); behind a proxy, configure an adminToken")
            }
            if let site = request.headers[.secFetchSite],
                !["same-origin", "none"].contains(site.lowercased())
            {
                throw APIError(403, "crossOriginRefused", "a \(site) request cannot use the operator routes")
            }
            return
        }
        guard let given = BearerToken.of(request) else {
            throw APIError(401, "adminTokenMissing", "this needs the admin token (Authorization: Bearer)")
        }
        guard SHA256.hash(data: Data(given.utf8)) == digest else {
            throw APIError(403, "adminTokenInvalid", "the admin token is not this server's")
        }
    }
}

/// Reads the key a request presents (`Authorization: Bearer KEY` or `X-API-Key: KEY`) into the context's ``Caller``:
/// 403 for a key the server does not know; without a key, 401 where one is `required` (the customer routes), else the
/// request goes on without a caller (posting a document, which the service allows for apps configured without keys).
/// What each kind of key may reach is the service's decision.
struct AccessKeyMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let ring: KeyRing
    let required: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var context = context
        context.caller = try caller(of: request)
        return try await next(request, context)
    }

    func caller(of request: Request) throws(APIError) -> Caller? {
        let presented = BearerToken.of(request) ?? HTTPField.Name("X-API-Key").flatMap { request.headers[$0] }
        guard let presented, !presented.isEmpty else {
            guard !required else {
                throw APIError(401, "apiKeyMissing", "send a key: Authorization: Bearer KEY, or X-API-Key: KEY")
            }
            return nil
        }
        guard let caller = ring.caller(presenting: presented) else {
            throw APIError(403, "apiKeyInvalid", "the key is not one this server accepts")
        }
        return caller
    }
}

/// The token of an `Authorization: Bearer TOKEN` header.
package enum BearerToken {
    package static func of(_ request: Request) -> String? {
        guard let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer ") else { return nil }
        let token = header.dropFirst(7).trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }
}

/// What every request must be before any route sees it, against DNS rebinding and cross-site requests:
/// - its `Host` is one of the server's names (loopback names, the listening address, and the configured public
///   names), else 421 `hostNotAllowed`;
/// - a browser's request that changes something comes from the server's own pages: an `Origin` other than the
///   server's own, or `Sec-Fetch-Site` other than `same-origin`/`none`, is refused with 403 `crossOriginRefused`;
/// - a POST, PUT or PATCH carries a JSON body (`Content-Type: application/json`, not empty), else 415 or 400, so no
///   HTML form or `fetch` without a CORS preflight can make one. Apple's own interfaces keep their shape:
///   `/verifyReceipt` takes any content type (Apple's clients send several), and `/inApps` (authenticated by Apple's
///   JWT in a header a cross-site request cannot send without a preflight) takes PNG images and empty bodies.
///
/// The server sends no CORS headers, so browsers refuse every preflight.
package struct RequestGuardMiddleware<Context: RequestContext>: RouterMiddleware {
    let allowedHosts: Set<String>

    /// The names a `Host` header may carry: the loopback names, the listening host, and `extra` (public names), each
    /// with or without a port; compared in lower case.
    init(listeningHost: String, extra: [String]) {
        var names: Set<String> = ["localhost", "127.0.0.1", "[::1]"]
        let host = listeningHost.lowercased()
        if !["0.0.0.0", "::", "[::]"].contains(host) { names.insert(host.contains(":") ? "[\(host)]" : host) }
        // A trailing dot names the same host.
        for name in extra {
            names.insert(name.lowercased().hasSuffix(".") ? String(name.lowercased().dropLast()) : name.lowercased())
        }
        allowedHosts = names
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws
        -> Response
    {
        try check(request)
        return try await next(request, context)
    }

    func check(_ request: Request) throws(APIError) {
        // A request without a Host (HTTP/1.0, or a router under test) names no host to check; every browser sends one.
        let authority = request.head.authority ?? ""
        // The first Host is the authority; another one left among the fields names a second host (RFC 9112: 400).
        if request.headers.contains(where: { $0.name.canonicalName == "host" }) {
            throw APIError(400, "duplicateHost", "the request names more than one Host")
        }
        let name = Self.hostName(authority)
        guard authority.isEmpty || name.map(allowedHosts.contains) == true else {
            throw APIError(
                421, "hostNotAllowed",
                "'\(authority.prefix(100))' is not one of this server's names: add it to server.allowedHosts")
        }
        guard Self.changesState(request.method) else { return }
        if let fetchSite = request.headers[.secFetchSite],
            !["same-origin", "none"].contains(fetchSite.lowercased())
        {
            throw APIError(403, "crossOriginRefused", "a \(fetchSite) request cannot change this server's state")
        }
        if let origin = request.headers[.origin] {
            let originAuthority = URL(string: origin).map(Self.authority(of:)) ?? ""
            guard Self.hostName(originAuthority) == name, Self.port(originAuthority) == Self.port(authority) else {
                throw APIError(
                    403, "crossOriginRefused", "a request from \(origin.prefix(100)) cannot change this server's state")
            }
        }
        // DELETE has no body to type, and like PUT and PATCH no browser sends it across sites without a preflight.
        guard Self.needsBody(request.method) else { return }
        let path = request.uri.path
        if path.hasPrefix("/inApps/") || path == "/verifyReceipt" || path == "/sandbox/verifyReceipt" { return }
        if let refusal = JSONBody.contentTypeRefusal(request.headers[.contentType]) { throw refusal }
        if request.headers[.contentLength] == "0" {
            throw APIError(400, "emptyBody", "the body is empty: send a JSON object")
        }
    }

    static func changesState(_ method: HTTPRequest.Method) -> Bool {
        ![.get, .head, .options].contains(method)
    }

    /// Whether a request of this method must carry a JSON body.
    package static func needsBody(_ method: HTTPRequest.Method) -> Bool { [.post, .put, .patch].contains(method) }

    /// The host of an authority (`name:port`, `[v6]:port`), in lower case, or nil when there is none.
    static func hostName(_ authority: String) -> String? {
        let text = authority.lowercased()
        if text.hasPrefix("[") {
            guard let end = text.firstIndex(of: "]") else { return nil }
            return String(text[...end])
        }
        let host = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
        return host?.isEmpty == false ? host : nil
    }

    /// The port of an authority, if it names one.
    static func port(_ authority: String) -> String? {
        let text = authority.hasPrefix("[") ? String(authority.drop { $0 != "]" }.dropFirst()) : authority
        guard let colon = text.lastIndex(of: ":") else { return nil }
        return String(text[text.index(after: colon)...])
    }

    /// The authority (`host[:port]`) of a URL, as a `Host` header would carry it.
    static func authority(of url: URL) -> String {
        let host = url.host.map { $0.contains(":") && !$0.hasPrefix("[") ? "[\($0)]" : $0 } ?? ""
        return url.port.map { "\(host):\($0)" } ?? host
    }
}

extension HTTPField.Name {
    /// `Sec-Fetch-Site`: where a browser's request comes from, relative to the server.
    static let secFetchSite = HTTPField.Name("Sec-Fetch-Site")!
}
