import Foundation
import IAPCore
import IAPReceipts
import IAPSignedData
import IAPTrust
import Synchronization
import X509

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `write(2)`, named apart from the methods called write.
private func unistd_write(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}

/// Where a command writes: standard output and error in the tool, memory in tests.
public protocol CommandOutput: Sendable {
    /// Writes one line of results.
    func line(_ text: String)
    /// Writes one line of diagnostics (summaries in JSON mode, warnings).
    func diagnostic(_ text: String)
    /// Writes several lines of results at once.
    func lines(_ texts: [String])
}

extension CommandOutput {
    public func lines(_ texts: [String]) { for text in texts { line(text) } }
}

/// The process's standard output and standard error.
///
/// Results go through one buffer, written out in large blocks (a bulk run prints megabytes) and whenever a single
/// line or a diagnostic is written, so what a person sees stays in order.
public struct StandardOutput: CommandOutput {
    public init() {}

    public func line(_ text: String) {
        OutputBuffer.standardOutput.append(text + "\n", flush: true)
    }

    public func lines(_ texts: [String]) {
        var block = texts.joined(separator: "\n")
        block.append("\n")
        OutputBuffer.standardOutput.append(block, flush: false)
    }

    public func diagnostic(_ text: String) {
        OutputBuffer.standardOutput.flush()
        OutputBuffer.write(Array((text + "\n").utf8), to: STDERR_FILENO)
    }
}

/// Bytes on their way to a file descriptor, written when a block is full or when asked.
final class OutputBuffer: Sendable {
    static let standardOutput = OutputBuffer(descriptor: STDOUT_FILENO)
    private static let blockSize = 256 << 10

    private let descriptor: Int32
    private let pending = Mutex<[UInt8]>([])

    private init(descriptor: Int32) { self.descriptor = descriptor }

    func append(_ text: String, flush: Bool) {
        pending.withLock { pending in
            pending.append(contentsOf: text.utf8)
            if flush || pending.count >= Self.blockSize {
                Self.write(pending, to: descriptor)
                pending.removeAll(keepingCapacity: true)
            }
        }
    }

    func flush() {
        pending.withLock { pending in
            Self.write(pending, to: descriptor)
            pending.removeAll(keepingCapacity: true)
        }
    }

    /// Writes everything, going on after partial writes; gives up silently on an error (a closed pipe).
    static func write(_ bytes: [UInt8], to descriptor: Int32) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = unistd_write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if written < 0, errno == EINTR { continue }
                if written <= 0 { return }
                offset += written
            }
        }
    }
}

/// Lines kept in memory, for tests.
public final class CapturedOutput: CommandOutput {
    private let storage = Mutex<(lines: [String], diagnostics: [String])>(([], []))
    public init() {}
    public func line(_ text: String) { storage.withLock { $0.lines.append(text) } }
    public func diagnostic(_ text: String) { storage.withLock { $0.diagnostics.append(text) } }
    public var lines: [String] { storage.withLock { $0.lines } }
    public var diagnostics: [String] { storage.withLock { $0.diagnostics } }
    /// The lines parsed as JSON objects (JSON Lines output).
    public func jsonObjects() throws -> [[String: Any]] {
        try lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:] }
    }
}

/// Reads a command's input file; `-` is standard input.
enum InputFile {
    static func read(_ path: String) throws -> [UInt8] {
        if path == "-" {
            return Array(FileHandle.standardInput.readDataToEndOfFile())
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        return Array(data)
    }
}

/// One JSON object on one line, keys sorted so output is stable.
enum JSONLine {
    static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        guard let data = try? encoder.encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// The value as indented JSON, keys sorted, for people.
    static func pretty(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        guard let data = try? encoder.encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}

/// Text every command shows the same way: an error as code and reason, a chain as people read it.
enum CommandText {
    static func codeAndReason(of error: any Error) -> (String, String) {
        switch error {
        case let error as any CodedError: ("\(error.code)", error.reason)
        case let error as BulkInputError: (error.code, error.reason)
        case let error as CocoaError: ("unreadableFile", error.localizedDescription)
        default: ("unreadableFile", "\(error)")
        }
    }

    /// The checks not made and their line, last described: the same in every document of a run.
    private static let lastSkipped = Mutex<(checks: [SkippedCheck], text: String)>(([], ""))

    /// Checks not made, as one line: `code (reason); ...`.
    static func skipped(_ checks: [SkippedCheck]) -> String {
        let last = lastSkipped.withLock { $0 }
        if last.checks == checks { return last.text }
        let text = checks.map { $0.code.rawValue + " (" + $0.reason + ")" }.joined(separator: "; ")
        lastSkipped.withLock { $0 = (checks, text) }
        return text
    }

    /// The chains described last, with their text: the documents of a run share a handful of chains, and naming one
    /// costs more than the rest of a verdict's text.
    private static let recentChains = Mutex<[(kind: ChainKind?, certificates: [Certificate], text: String)]>([])

    /// What a verified chain rests on: Apple's chain by name, leaf first, Xcode's test certificate, or nothing.
    static func chain(_ kind: ChainKind?, _ certificates: [Certificate]) -> String {
        // A chain from the verifier's cache is the same array every time: its storage is compared, not its
        // certificates (whose bytes, compared on several cores at once, cost more than naming them). The arrays kept
        // here stay alive, so no other array can take their storage's place.
        let storage = certificates.withUnsafeBufferPointer { $0.baseAddress }
        let recent = recentChains.withLock { $0 }
        if let known = recent.first(where: {
            $0.kind == kind && $0.certificates.withUnsafeBufferPointer { $0.baseAddress } == storage
        }) {
            return known.text
        }
        let text = describeChain(kind, certificates)
        recentChains.withLock { recent in
            if recent.count == 8 { recent.removeFirst() }
            recent.append((kind, certificates, text))
        }
        return text
    }

    private static func describeChain(_ kind: ChainKind?, _ certificates: [Certificate]) -> String {
        switch kind {
        case .apple:
            "Apple chain (\(certificates.map { $0.subject.commonName ?? $0.subject.description }.joined(separator: " <- ")))"
        case .xcodeTest: "Xcode StoreKit test certificate (INSECURE)"
        case nil: "untrusted"
        }
    }
}
