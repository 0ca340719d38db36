import Foundation

/// A value behind a lock, for the targets an app links: `Synchronization.Mutex` needs iOS 18 and macOS 15, and the
/// app side runs from iOS 16 and macOS 13. Same shape as `Mutex.withLock`.
package final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, alone.
    package func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
