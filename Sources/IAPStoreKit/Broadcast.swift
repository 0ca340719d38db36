import Synchronization

/// Values handed to every listener that subscribed before them. With `holdsUntilHeard`, values sent while nobody
/// listens wait for the first listener (as StoreKit holds a purchase intent until the app asks for intents).
final class Broadcast<Value: Sendable>: Sendable {
    private struct State {
        var listeners: [Int: AsyncStream<Value>.Continuation] = [:]
        var next = 0
        var held: [Value] = []
    }

    private let state = Mutex(State())
    private let holdsUntilHeard: Bool

    init(holdsUntilHeard: Bool = false) { self.holdsUntilHeard = holdsUntilHeard }

    /// A listener from now on; dropping the stream ends it.
    func subscribe() -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self)
        let key = state.withLock { state in
            defer { state.next += 1 }
            state.listeners[state.next] = continuation
            for value in state.held { continuation.yield(value) }
            state.held = []
            return state.next
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.listeners.removeValue(forKey: key) }
        }
        return stream
    }

    /// Hands `value` to every listener (or holds it, when nobody listens and the broadcast holds).
    func send(_ value: Value) {
        state.withLock { state in
            if state.listeners.isEmpty, holdsUntilHeard { state.held.append(value) }
            for continuation in state.listeners.values { continuation.yield(value) }
        }
    }
}
