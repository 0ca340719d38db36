import Foundation
import IAPTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A real `iapkit serve` process (the binary `swift test` built beside the tests), on loopback with a free port,
/// stopped by its process id.
final class ServerProcess: @unchecked Sendable {
    /// The built `iapkit` executable, when present.
    static let executable = builtExecutable("iapkit")

    /// An executable of this package that `swift build` put beside the test binary, when present.
    static func builtExecutable(_ name: String) -> URL? {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var folder = testBinary.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = folder.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            folder = folder.deletingLastPathComponent()
        }
        return nil
    }

    static let skipMessage = "the iapkit executable is not built beside the tests (swift build first)"

    let process = Process()
    private(set) var port = 0
    private let output = Pipe()

    /// Starts `iapkit serve ARGUMENTS --port 0` (in `folder`, or this process's working directory) and waits (at
    /// most 60 s, off the cooperative pool: see `offThePool`) for its banner with the address.
    /// `openFiles` lowers the server's file limit (through util-linux's `prlimit`, which then execs the server in
    /// the same process); `environment` adds variables (`IAPKIT_...` settings).
    static func start(
        _ arguments: [String], in folder: URL? = nil, openFiles: Int? = nil, environment: [String: String] = [:]
    ) async throws -> ServerProcess {
        try await offThePool {
            try ServerProcess(arguments, in: folder, openFiles: openFiles, environment: environment)
        }
    }

    private init(_ arguments: [String], in folder: URL?, openFiles: Int?, environment: [String: String]) throws {
        let executable = try #require(Self.executable)
        let serve = ["serve", "--host", "127.0.0.1", "--port", "0"] + arguments
        if let openFiles {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
            process.arguments = ["--nofile=\(openFiles):\(openFiles)", executable.path] + serve
        } else {
            process.executableURL = executable
            process.arguments = serve
        }
        if let folder { process.currentDirectoryURL = folder }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var text = ""
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
            if let range = text.range(of: #"http://127\.0\.0\.1:(\d+)"#, options: .regularExpression) {
                port = Int(text[range].split(separator: ":").last!)!
                // Keep reading what the server writes (its logs), so a full pipe never blocks it; with
                // IAPKIT_TEST_SERVER_LOGS set to a folder, they are kept there, one file per server.
                let kept = ProcessInfo.processInfo.environment["IAPKIT_TEST_SERVER_LOGS"].flatMap { folder in
                    let file = URL(fileURLWithPath: folder).appendingPathComponent("serve-\(port).log")
                    _ = FileManager.default.createFile(atPath: file.path, contents: Data(text.utf8))
                    return try? FileHandle(forWritingTo: file)
                }
                _ = try? kept?.seekToEnd()
                output.fileHandleForReading.readabilityHandler = { handle in
                    let data = handle.availableData
                    kept?.write(data)
                }
                return
            }
        }
        process.terminate()
        throw ServerProcessError(message: "no address in the server's output: \(text)")
    }

    /// SIGKILL: no chance to flush or close anything.
    func kill() async throws {
        try await offThePool { self.killNow() }
    }

    /// SIGTERM, then waits for a clean exit.
    func stop() async throws {
        try await offThePool {
            self.output.fileHandleForReading.readabilityHandler = nil
            self.process.terminate()
            self.process.waitUntilExit()
        }
    }

    /// SIGTERM, then waits at most `limit` for the exit; a server still running then is killed. Returns whether it
    /// exited in time, and its status.
    func stop(within limit: Duration) async throws -> (inTime: Bool, status: Int32) {
        output.fileHandleForReading.readabilityHandler = nil
        process.terminate()
        let deadline = ContinuousClock.now + limit
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        let inTime = !process.isRunning
        if !inTime { killNow() }
        return (inTime, process.terminationStatus)
    }

    private func killNow() {
        output.fileHandleForReading.readabilityHandler = nil
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Posts JSON and returns the status and the JSON answer.
    func post(_ path: String, _ body: [String: Any], headers: [String: String] = [:]) async throws -> (
        Int, [String: Any]
    ) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        return try await send(request)
    }

    func get(_ path: String, headers: [String: String] = [:]) async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return try await send(request)
    }

    /// GET from whatever serves on loopback `port`: the status and the JSON answer.
    static func get(port: Int, _ path: String, headers: [String: String] = [:]) async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        return (status, (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:])
    }

    private func send(_ request: URLRequest) async throws -> (Int, [String: Any]) {
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        return (status, (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:])
    }

    deinit {
        if process.isRunning { killNow() }
    }
}

struct ServerProcessError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
