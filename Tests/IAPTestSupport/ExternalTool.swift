import Foundation

/// Runs the independent tools the cross-check tests compare IAPKit with (openssl, Apple's Python library).
public enum ExternalTool {
    /// Runs `executable` to the end; returns its exit status and its standard output and error together.
    public static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
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
        (try? run("/usr/bin/env", ["python3", "-c", "import appstoreserverlibrary"]))?.status == 0
    }()

    /// `Scripts/apple-verify.py`, our driver of Apple's library.
    public static let appleVerifyScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Scripts/apple-verify.py").path
}
