import IAPCore

/// How the HTTP server runs: where it listens, how large a body it reads, and who may read customers.
public struct ServerConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// Request bodies past this many bytes are answered 413 without being read further.
    public var maximumBodySize: Int
    /// Keys accepted for the customer endpoints (`Authorization: Bearer KEY` or `X-API-Key: KEY`). With none, those
    /// endpoints refuse everyone.
    public var apiKeys: [String]
    /// How often an idle `/simulator/accounts/{account}/updates` stream sends a heartbeat comment.
    public var updatesHeartbeat: Duration
    /// The public names requests may carry in `Host` besides the loopback names and the listening address (the
    /// names a proxy in front serves, for example `iap.example.com`); any other `Host` is refused (421), against DNS
    /// rebinding.
    public var allowedHosts: [String]
    /// Header, body and idle timeouts and the ceiling on open connections.
    public var connectionLimits: ConnectionLimits
    /// The key answers are signed with for apps that send a nonce (`SignedAnswer`); nil: answers are not signed.
    public var answerSigner: AnswerSigner?

    public init(
        host: String = "127.0.0.1", port: Int = 8080, maximumBodySize: Int = 1 << 20, apiKeys: [String] = [],
        updatesHeartbeat: Duration = .seconds(15), allowedHosts: [String] = [],
        connectionLimits: ConnectionLimits = ConnectionLimits()
    ) {
        self.connectionLimits = connectionLimits
        self.host = host
        self.port = port
        self.maximumBodySize = maximumBodySize
        self.apiKeys = apiKeys
        self.updatesHeartbeat = updatesHeartbeat
        self.allowedHosts = allowedHosts
    }
}

extension ServerConfiguration {
    /// Whether the server listens on loopback only (so what is open to every caller is open to this machine only).
    public var listensOnLoopbackOnly: Bool {
        isLoopbackHost(host)
    }
}
