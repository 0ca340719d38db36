/// Runs `operation` and returns what it returns, unless `deadline` comes first: then `operation` is cancelled and
/// ``DeadlinePassed`` is thrown. For waits a library does not bound itself, such as an HTTP answer's body, which
/// AsyncHTTPClient's request deadline does not cover (a server sending its head and then nothing held a read for the
/// connection's 90 s read timeout). `operation` must end when cancelled: the deadline can only ask it to, and this
/// returns once it has.
public func withDeadline<T: Sendable>(
    _ deadline: ContinuousClock.Instant, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(until: deadline, clock: .continuous)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw DeadlinePassed() }
        return value
    }
}

/// What ``withDeadline(_:_:)`` throws when its deadline came before the operation ended.
public struct DeadlinePassed: Error, CustomStringConvertible {
    public init() {}
    public var description: String { "the deadline passed" }
}
