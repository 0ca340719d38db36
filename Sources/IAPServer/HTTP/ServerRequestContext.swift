public import Hummingbird

/// The request context of every route: Hummingbird's core storage, with the upload limit the server was configured
/// with (bodies past it are answered 413), and answers written by ``ServerJSONEncoder``.
public struct ServerRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Who the request comes from, when it presented a key the server knows (set by the access-key middleware).
    public var caller: Caller?

    public init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
    }

    /// Routes read bodies with the configured `ServerConfiguration/maximumBodySize`; this is Hummingbird's own ceiling.
    public var maxUploadSize: Int { 4 << 20 }

    /// Answer values are written by the server's own JSON writer.
    public var responseEncoder: ServerJSONEncoder { ServerJSONEncoder() }
}
