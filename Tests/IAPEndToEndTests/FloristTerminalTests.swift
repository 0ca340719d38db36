import Foundation
import IAPTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The florist example as a person uses it: a real `iapkit serve` process, the `florist` app in a pseudo-terminal,
/// commands typed in and screens read back, and the App Store changing things while the app waits for input.
@Suite(
    "florist in a terminal", .serialized,
    .enabled(
        if: ServerProcess.executable != nil && ServerProcess.builtExecutable("florist") != nil,
        "the iapkit and florist executables are not built beside the tests (swift build first)"))
struct FloristTerminalTests {
    @Test func aPersonBuysConsumesSwitchesModesAndSeesARefundArrive() async throws {
        let folder = try ServerProcessTests.pkiFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // The florist carries an app key, as an app in customers' hands would: it records its purchases and reads its
        // own customer, nothing more.
        let key = "florist-app-key-0123456789"
        let server = try await ServerProcess.start([
            "--database", ":memory:", "--pki", folder.path, "--api-key", ServerProcessTests.key, "--app-key",
            "florist-2026=\(key)",
        ])
        let terminal = try Terminal(
            try #require(ServerProcess.builtExecutable("florist")),
            [
                "--server", "http://127.0.0.1:\(server.port)", "--account", "ana", "--create-account", "--pki",
                folder.path, "--catalog", "Examples/Florist/Florist.storekit", "--app-key", key,
            ])

        var screen = try await terminal.screen(after: nil, showing: "» Welcome.")
        #expect(terminal.output.contains("\u{1B}[2J"), "a terminal gets a cleared screen each time")
        #expect(screen.contains("Florist · ana · signed transactions, verified on this device · verified"))
        #expect(screen.contains("Flowers and gifts") && screen.contains("Services") && screen.contains("VIP"))
        #expect(screen.line(with: "1. Flowers")?.contains("$2.99") == true)
        #expect(screen.line(with: "1. Flowers")?.contains("✓ owned") == false)

        screen = try await terminal.screen(after: "buy 1", showing: "» Flowers: purchased.")
        #expect(screen.line(with: "1. Flowers")?.contains("✓ owned") == true)
        for _ in 0..<3 {
            screen = try await terminal.screen(after: "buy 3", showing: "» Plant installation: purchased.")
        }
        #expect(screen.line(with: "Plant installation")?.contains("× 3") == true)
        screen = try await terminal.screen(after: "consume 3", showing: "» Used one Plant installation; 2 left.")
        #expect(screen.line(with: "Plant installation")?.contains("× 2") == true)
        screen = try await terminal.screen(after: "buy 6", showing: "» VIP Silver: purchased.")
        screen = try await terminal.screen(after: "buy 4", showing: "» VIP Gold: purchased.")
        #expect(screen.contains("VIP: VIP Gold, subscribed, renews "))
        #expect(screen.line(with: "VIP Silver")?.contains("✓ owned") == false, "the upgrade replaced silver")
        screen = try await terminal.screen(after: "buy 99", showing: "» Failed: no product '99'")

        screen = try await terminal.screen(after: "mode receipt", showing: "» Now: app receipt")
        #expect(screen.contains("· app receipt, verified on this device · verified"))
        #expect(screen.line(with: "1. Flowers")?.contains("✓ owned") == true)
        #expect(screen.contains("VIP: VIP Gold, subscribed, paid until "))
        #expect(screen.line(with: "Plant installation")?.contains("× 2") == true, "counts survive a change of mode")
        screen = try await terminal.screen(after: "mode server", showing: "» Now: validated by the server.")
        #expect(screen.line(with: "1. Flowers")?.contains("✓ owned") == true)
        #expect(screen.line(with: "4. VIP Gold")?.contains("✓ owned") == true)
        #expect(
            screen.line(with: "Plant installation")?.contains("× 2") == true, "the server is told the device's uses")
        screen = try await terminal.screen(after: "consume 3", showing: "» Used one Plant installation; 1 left.")
        screen = try await terminal.screen(after: "mode signed", showing: "» Now: signed transactions")
        #expect(screen.line(with: "Plant installation")?.contains("× 1") == true, "and the device keeps the server's")
        screen = try await terminal.screen(after: "restore", showing: "» Restored: 2 products owned.")

        // The App Store refunds the flowers while the app waits for input: the screen changes on its own.
        let (status, answer) = try await server.get("/simulator/accounts/ana/transactions")
        #expect(status == 200)
        let flowers = try #require(
            (answer["transactions"] as? [[String: Any]])?.first {
                $0["productId"] as? String == "com.example.florist.flowers"
            }?[
                "transactionId"] as? String)
        let beforeRefund = terminal.mark
        let (refunded, _) = try await server.post("/simulator/transactions/\(flowers)/refund", [:])
        #expect(refunded == 200)
        screen = try await terminal.screen(
            after: nil, showing: "» Refunded: com.example.florist.flowers", since: beforeRefund)
        #expect(screen.line(with: "1. Flowers")?.contains("✓ owned") == false)

        #expect(try await terminal.finish(after: "quit") == 0)
        try await server.stop()
    }
}

/// A program in a pseudo-terminal: it sees a real terminal (`isatty`), the test types into it and reads it.
final class Terminal: Sendable {
    private let process: Process
    private let master: Int32
    private final class Written: Sendable { let text = Mutex("") }
    private let buffer = Written()

    /// `TIOCSPTLCK` and `TIOCGPTN` (Linux's `_IOW('T', 0x31, int)` and `_IOR('T', 0x30, unsigned int)`), which the C
    /// headers define as macros Swift cannot import.
    private static let setLock: UInt = 0x4004_5431
    private static let getNumber: UInt = 0x8004_5430

    init(_ executable: URL, _ arguments: [String]) throws {
        // The Linux pseudo-terminal multiplexer: unlock the new pair's other side and ask for its number.
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        var unlock: CInt = 0
        var number: CInt = 0
        guard master >= 0, ioctl(master, Self.setLock, &unlock) == 0, ioctl(master, Self.getNumber, &number) == 0 else {
            throw TerminalError(message: "no pseudo-terminal: errno \(errno)")
        }
        let side = try #require(FileHandle(forUpdatingAtPath: "/dev/pts/\(number)"))
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        process.standardInput = side
        process.standardOutput = side
        process.standardError = side
        try process.run()
        try side.close()
        let master = self.master
        let buffer = self.buffer
        Thread.detachNewThread {
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(master, &chunk, chunk.count)
                guard count > 0 else { return }
                let text = String(decoding: chunk[0..<count], as: UTF8.self)
                buffer.text.withLock { $0 += text }
            }
        }
    }

    /// Everything the program wrote so far, escape sequences included.
    var output: String { buffer.text.withLock { $0 } }

    /// Where the output stands now: screens drawn after this point are the ones a later ``screen(after:showing:since:)``
    /// looks at.
    var mark: Int { output.utf8.count }

    /// Types `line` (when given) and returns the last screen drawn since `mark` (by default, since this call) that
    /// contains `text`, escape sequences removed. Waits up to 60 s: the program runs on its own threads, so a slow machine only makes this slower.
    func screen(after line: String?, showing text: String, since mark: Int? = nil) async throws -> ScreenText {
        let start = mark ?? self.mark
        if let line { type(line) }
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let written = String(output.utf8.dropFirst(start)) ?? ""
            for screen in written.components(separatedBy: "\u{1B}[2J\u{1B}[H").reversed() where screen.contains(text) {
                // Only a whole screen: it ends with the prompt.
                if screen.hasSuffix("> ") { return ScreenText(text: screen) }
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TerminalError(
            message: "no screen showing '\(text)' after '\(line ?? "")'; the terminal shows:\n\(output)")
    }

    /// Types `line`, then waits for the program to exit and returns its status.
    func finish(after line: String) async throws -> Int32 {
        type(line)
        let process = self.process
        return try await offThePool {
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    private func type(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
    }

    deinit {
        if process.isRunning { process.terminate() }
        close(master)
    }
}

/// One screen of the program's output.
struct ScreenText {
    let text: String
    func contains(_ piece: String) -> Bool { text.contains(piece) }
    /// The first line containing `piece` (a terminal ends lines with CR LF, one Character in Swift).
    func line(with piece: String) -> String? {
        text.split(whereSeparator: \.isNewline).first { $0.contains(piece) }.map(String.init)
    }
}

struct TerminalError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
