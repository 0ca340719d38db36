import Foundation

/// Runs the independent tools the cross-check tests compare IAPKit with (openssl, Apple's Python library).
public enum ExternalTool {
    /// Runs `executable` to the end; returns its exit status and its standard output and error together. The
    /// waiting happens on a thread of its own (see ``offThePool(_:)``), so a slow tool never stalls other tests.
    public static func run(_ executable: String, _ arguments: [String]) async throws -> (
        status: Int32, output: String
    ) {
        try await offThePool { try runBlocking(executable, arguments) }
    }

    /// ``run(_:_:)`` for a caller outside Swift concurrency (a static check evaluated while tests are planned).
    static func runBlocking(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Whether openssl is installed where the tests look for it.
    public static let hasOpenSSL = FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")

    /// Whether python3 with Apple's app-store-server-library is here (`.ci/run` installs it).
    public static let hasAppleLibrary: Bool = {
        (try? runBlocking("/usr/bin/env", ["python3", "-c", "import appstoreserverlibrary"]))?.status == 0
    }()

    /// Whether a headless browser can be driven here: Debian's chromium and chromium-driver, and selenium with
    /// axe-selenium-python from PyPI (`.ci/run` installs them).
    public static let hasBrowser: Bool = {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver")
            && (try? runBlocking("/usr/bin/env", ["python3", "-c", "import selenium, axe_selenium_python"]))?.status
                == 0
    }()

    /// `Scripts/apple-verify.py`, our driver of Apple's library.
    public static let appleVerifyScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Scripts/apple-verify.py").path
}

/// Runs blocking work (waiting for a child process, reading a pipe) on a thread of its own and awaits its result.
///
/// Tests run in parallel on Swift's cooperative pool, which is as wide as the machine: two threads here. Work that
/// blocks one of them halves every other test's share, and two such waits stop them all; a test waiting for an
/// event with a deadline then fails for want of a thread, not for a bug. Blocking calls in tests go through here.
public func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}
