public import Foundation
import Synchronization

/// Where tests put the files and folders they make: one folder of this test process under the system's temporary
/// folder, removed when the process exits, so `swift test` leaves nothing behind however a test ends (a test cannot
/// always remove an SQLite file itself: a storage it hands to the code under test may still have it open).
///
/// The process holds a lock on its folder's `.lock` file while it runs. A process killed before it could remove its
/// folder leaves it, and the next test process removes every such folder whose lock it can take (the lock, not a
/// process id: test runs in other PID namespaces may share the temporary folder).
public enum TestFiles {
    /// The folder of this process: `iapkit-tests-<random>` in the system's temporary folder, made on first use.
    public static let folder: URL = {
        let temporary = FileManager.default.temporaryDirectory
        removeAbandonedFolders(in: temporary)
        let folder = temporary.appendingPathComponent(
            prefix + String(UInt64.random(in: 0...UInt64.max), radix: 36), isDirectory: true)
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // Held until the process ends: its descriptor is never closed.
        let lock = open(folder.appendingPathComponent(".lock").path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        if lock >= 0 { _ = flock(lock, LOCK_EX | LOCK_NB) }
        atexit { try? FileManager.default.removeItem(at: TestFiles.folder) }
        return folder
    }()

    /// A new path in the folder, nothing there yet: `name` with a number of its own before its extension
    /// (`url("store.sqlite")` gives `store-1.sqlite`, then `store-2.sqlite`). Short, as a Unix socket's path must be.
    public static func url(_ name: String) -> URL {
        let number = made.add(1, ordering: .relaxed).newValue
        let base = (name as NSString).deletingPathExtension
        let pathExtension = (name as NSString).pathExtension
        return folder.appendingPathComponent(
            "\(base)-\(number)" + (pathExtension.isEmpty ? "" : ".\(pathExtension)"))
    }

    /// The same as `url(name).path`.
    public static func path(_ name: String) -> String { url(name).path }

    static let prefix = "iapkit-tests-"
    private static let made = Atomic<Int>(0)

    /// Removes the `iapkit-tests-` folders no process holds the lock of (their process was killed). A folder without a
    /// lock file is left: its process may be making it right now.
    static func removeAbandonedFolders(in temporary: URL) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
        for name in names where name.hasPrefix(prefix) {
            let folder = temporary.appendingPathComponent(name)
            let lock = open(folder.appendingPathComponent(".lock").path, O_RDWR | O_CLOEXEC)
            guard lock >= 0 else { continue }
            defer { close(lock) }
            if flock(lock, LOCK_EX | LOCK_NB) == 0 { try? FileManager.default.removeItem(at: folder) }
        }
    }
}
