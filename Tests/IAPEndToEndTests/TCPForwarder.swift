import Foundation
import IAPTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `Scripts/tcp-forward.py` on loopback in front of a port: frozen (SIGSTOP), it is a network partition between its
/// clients and what it forwards to (connections are taken, nothing comes back); thawed, the partition ends.
final class TCPForwarder: @unchecked Sendable {
    let process = Process()
    private(set) var port = 0
    private let output = Pipe()

    /// Starts a forwarder to loopback port `target` and waits (at most 30 s) for the port it listens on.
    static func start(to target: Int) async throws -> TCPForwarder {
        try await offThePool { try TCPForwarder(target: target) }
    }

    private init(target: Int) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["Scripts/tcp-forward.py", "\(target)"]
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var text = ""
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, !text.contains("\n") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            stop()
            throw NoPort(printed: text)
        }
        self.port = port
    }

    /// The forwarder did not say its port.
    struct NoPort: Error {
        let printed: String
    }

    /// The partition starts.
    func freeze() { kill(process.processIdentifier, SIGSTOP) }

    /// The partition ends.
    func thaw() { kill(process.processIdentifier, SIGCONT) }

    /// Stops it, by SIGKILL: a process started from the test runner inherits its blocked signals (SIGTERM among them),
    /// and a frozen one could not act on another.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
