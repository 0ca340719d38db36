public import Foundation

/// Where tests put the files and folders they make: one folder of this test process under the system's temporary
/// folder, removed when the process exits, so `swift test` leaves nothing behind however a test ends (a test cannot
/// always remove an SQLite file itself: a storage it hands to the code under test may still have it open).
///
/// A process that was killed before it could remove its folder leaves it; the next test process removes the folders
/// of test processes no longer running.
public enum TestFiles {
    /// The folder of this process: `iapkit-tests-PID` in the system's temporary folder, made on first use.
    public static let folder: URL = {
        let temporary = FileManager.default.temporaryDirectory
        removeFoldersOfEndedProcesses(in: temporary)
        let folder = temporary.appendingPathComponent("\(prefix)\(getpid())", isDirectory: true)
        try? FileManager.default.removeItem(at: folder)  // an earlier process with the same id
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: TestFiles.folder) }
        return folder
    }()

    /// A new path in the folder, nothing there yet: `name` with a unique part before its extension
    /// (`url("store.sqlite")` gives `store-<UUID>.sqlite`).
    public static func url(_ name: String) -> URL {
        let base = (name as NSString).deletingPathExtension
        let pathExtension = (name as NSString).pathExtension
        let unique = "\(base)-\(UUID().uuidString)" + (pathExtension.isEmpty ? "" : ".\(pathExtension)")
        return folder.appendingPathComponent(unique)
    }

    /// The same as `url(name).path`.
    public static func path(_ name: String) -> String { url(name).path }

    static let prefix = "iapkit-tests-"

    /// Removes `iapkit-tests-PID` folders whose process has ended (killed before its exit could remove them).
    static func removeFoldersOfEndedProcesses(in temporary: URL) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
        for name in names where name.hasPrefix(prefix) {
            guard let pid = pid_t(name.dropFirst(prefix.count)), pid != getpid() else { continue }
            // kill(pid, 0) fails with ESRCH when no such process runs.
            if kill(pid, 0) != 0 && errno == ESRCH {
                try? FileManager.default.removeItem(at: temporary.appendingPathComponent(name))
            }
        }
    }
}
