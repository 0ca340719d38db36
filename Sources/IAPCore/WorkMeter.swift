/// Counts the steps of the loops that read untrusted input, so tests check linear-time claims by counting work rather
/// than by timing it: a parser's steps for an input four times larger must be at most about four times as many.
///
/// Counting happens only in debug builds and only inside ``measure(_:)``; in release builds ``tick(_:)`` is empty.
package enum WorkMeter {
    /// A running count, shared by the tasks of one measurement.
    package final class Counter: Sendable {
        let steps = Locked(0)
    }

    #if DEBUG
        @TaskLocal static var current: Counter?
    #endif

    /// Adds `steps` to the running measurement, if any.
    @inline(__always)
    package static func tick(_ steps: Int = 1) {
        #if DEBUG
            current?.steps.withLock { $0 += steps }
        #endif
    }

    /// Runs `body` and returns its result with the steps it counted (always 0 in release builds).
    package static func measure<T>(_ body: () throws -> T) rethrows -> (result: T, steps: Int) {
        let counter = Counter()
        #if DEBUG
            let result = try $current.withValue(counter) { try body() }
        #else
            let result = try body()
        #endif
        return (result, counter.steps.withLock { $0 })
    }

    /// Runs `body` and returns its result with the steps it counted (always 0 in release builds).
    package static func measure<T>(_ body: () async throws -> T) async rethrows -> (result: T, steps: Int) {
        let counter = Counter()
        #if DEBUG
            let result = try await $current.withValue(counter) { try await body() }
        #else
            let result = try await body()
        #endif
        return (result, counter.steps.withLock { $0 })
    }
}
