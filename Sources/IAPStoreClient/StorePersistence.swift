public import Foundation
import IAPCore

/// Where the ``Store`` keeps its fallback cache (with the consumable counts) between launches: the keychain on Apple
/// platforms (`KeychainStorePersistence`, as StoreHelper), a file elsewhere (``FileStorePersistence``), or memory.
public protocol StorePersistence: Sendable {
    /// The cache last saved, nil when there is none.
    func load() async throws(StoreError) -> StoreCache?
    func save(_ cache: StoreCache) async throws(StoreError)
}

/// The cache as a JSON file, replaced atomically on each save.
public struct FileStorePersistence: StorePersistence {
    public let url: URL

    public init(url: URL) { self.url = url }

    public func load() async throws(StoreError) -> StoreCache? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        do {
            return try JSONDecoder().decode(StoreCache.self, from: Data(contentsOf: url))
        } catch {
            throw StoreError(.persistenceFailed, "cannot read the store cache at \(url.path): \(error)")
        }
    }

    public func save(_ cache: StoreCache) async throws(StoreError) {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try encoder.encode(cache).write(to: url, options: .atomic)
        } catch {
            throw StoreError(.persistenceFailed, "cannot write the store cache at \(url.path): \(error)")
        }
    }
}

/// The cache in memory: for tests and for apps that want no cache. Two stores given the same instance share it, as
/// two launches of one app share a file.
public final class MemoryStorePersistence: StorePersistence {
    private let stored: Locked<StoreCache?>

    public init(_ cache: StoreCache? = nil) { stored = Locked(cache) }

    public var cache: StoreCache? { stored.withLock { $0 } }

    public func load() async throws(StoreError) -> StoreCache? { stored.withLock { $0 } }

    public func save(_ cache: StoreCache) async throws(StoreError) { stored.withLock { $0 = cache } }
}
