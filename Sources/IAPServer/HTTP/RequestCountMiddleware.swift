import Hummingbird

/// Counts every request for the webhook sender, which keeps its deliveries behind requests while they come fast.
struct RequestCountMiddleware<Context: RequestContext>: RouterMiddleware {
    let signal: OutboxSignal

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        signal.countRequest()
        return try await next(request, context)
    }
}
