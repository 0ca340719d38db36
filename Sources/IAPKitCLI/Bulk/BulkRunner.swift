import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What one document came to: the text printed for it, and the failure codes it counts under (none: it passed).
struct BulkResult: Sendable {
    let text: String
    let failureCodes: [String]

    static func passed(_ text: String) -> BulkResult { BulkResult(text: text, failureCodes: []) }
}

/// The counts a bulk run ends with.
struct BulkSummary: Sendable, Equatable {
    var documents = 0
    var passed = 0
    /// How many documents failed with each code (a document with two codes counts under both).
    var failures: [String: Int] = [:]

    var failed: Int { documents - passed }

    mutating func count(_ result: BulkResult) {
        documents += 1
        if result.failureCodes.isEmpty {
            passed += 1
        } else {
            for code in Set(result.failureCodes) { failures[code, default: 0] += 1 }
        }
    }

    /// `3 files: 2 valid, 1 invalid (signatureInvalid 1)`, failure codes most frequent first; `documents` instead
    /// of `files` when some came from lines.
    func line(passed passedWord: String, failed failedWord: String, lines: Bool = false) -> String {
        let noun = lines ? (documents == 1 ? "document" : "documents") : (documents == 1 ? "file" : "files")
        var text = "\(documents) \(noun): \(passed) \(passedWord), \(failed) \(failedWord)"
        if !failures.isEmpty {
            let codes = failures.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            text += " (" + codes.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")"
        }
        return text
    }
}

/// Runs a bulk command's work over every document of a source on several workers, and prints each result in input
/// order as soon as it and everything before it are done.
///
/// Each of `jobs` workers takes the next chunk of documents from the source, works on it, and hands the results over;
/// whoever completes the chunk the output is waiting for prints it and every finished chunk after it. No worker ever
/// waits for another to hand out work. A worker more than `2 * jobs` chunks ahead of the output waits, so memory stays
/// bounded whatever the number of documents. The work for one document must not throw: a document that fails is a
/// result like any other.
struct BulkRunner {
    var jobs: Int
    var chunkSize = 32
    /// Progress on standard error; nil for none.
    var progress: BulkProgress?

    func run(
        _ source: sending DocumentSource, output: some CommandOutput,
        _ work: @escaping @Sendable (BulkItem) async -> BulkResult
    ) async -> BulkSummary {
        let line = BulkLine(
            source: source, chunkSize: chunkSize, window: 2 * jobs, output: output, progress: progress)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<jobs {
                group.addTask {
                    while let (index, chunk) = await line.take() {
                        var results: [BulkResult] = []
                        results.reserveCapacity(chunk.count)
                        for item in chunk { results.append(await work(item)) }
                        line.finish(index, results)
                    }
                }
            }
        }
        progress?.finish()
        return line.summary
    }
}

/// What the workers of a run share: the source, handed out in numbered chunks, and the output, printed in chunk order.
final class BulkLine<Output: CommandOutput>: Sendable {
    private struct Feed {
        let source: DocumentSource
        var taken = 0
        var exhausted = false
    }

    private struct Printing {
        var printed = 0
        var finished: [Int: [BulkResult]] = [:]
        var waiting: [CheckedContinuation<Void, Never>] = []
        var summary = BulkSummary()
    }

    private let feed: Mutex<Feed>
    private let printing = Mutex(Printing())
    /// How many chunks are printed: what a worker compares with the window before taking another.
    private let printedCount = Atomic<Int>(0)
    private let chunkSize: Int
    private let window: Int
    private let output: Output
    private let progress: BulkProgress?

    init(source: sending DocumentSource, chunkSize: Int, window: Int, output: Output, progress: BulkProgress?) {
        feed = Mutex(Feed(source: source))
        self.chunkSize = chunkSize
        self.window = window
        self.output = output
        self.progress = progress
    }

    var summary: BulkSummary { printing.withLock { $0.summary } }

    private enum Take: Sendable {
        case chunk(Int, [BulkItem])
        case wait
        case done
    }

    /// The next chunk and its number; nil when the source is exhausted. Waits while the output is a window behind.
    func take() async -> (Int, [BulkItem])? {
        while true {
            let printed = printedCount.load(ordering: .acquiring)
            let next: Take = feed.withLock { feed in
                if feed.exhausted { return .done }
                if feed.taken >= printed + window { return .wait }
                var chunk: [BulkItem] = []
                chunk.reserveCapacity(chunkSize)
                while chunk.count < chunkSize, let item = feed.source.next() { chunk.append(item) }
                if chunk.isEmpty {
                    feed.exhausted = true
                    return .done
                }
                feed.taken += 1
                return .chunk(feed.taken - 1, chunk)
            }
            switch next {
            case .done: return nil
            case .chunk(let index, let chunk): return (index, chunk)
            case .wait:
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let goOn = printing.withLock { state in
                        guard state.printed == printed else { return true }  // it moved meanwhile
                        state.waiting.append(continuation)
                        return false
                    }
                    if goOn { continuation.resume() }
                }
            }
        }
    }

    /// Hands over a chunk's results; prints them, and the finished chunks after them, when the output reaches them.
    func finish(_ index: Int, _ results: [BulkResult]) {
        let woken = printing.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.finished[index] = results
            let before = state.printed
            while let ready = state.finished.removeValue(forKey: state.printed) {
                output.lines(ready.map(\.text))
                for result in ready { state.summary.count(result) }
                state.printed += 1
            }
            guard state.printed > before else { return [] }
            printedCount.store(state.printed, ordering: .releasing)
            if let progress {
                progress.update(
                    done: state.summary.documents, fraction: feed.withLock { $0.source.fractionRead })
            }
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in woken { continuation.resume() }
    }
}

/// A line on standard error, rewritten a few times a second, saying how far a bulk run is: documents done, the rate,
/// and the time left when the total is known. Made only when standard error is a terminal.
final class BulkProgress: Sendable {
    private struct State {
        var lastDraw: ContinuousClock.Instant
        var drawn = false
    }
    private let start = ContinuousClock.now
    private let total: Int?
    private let state: Mutex<State>

    /// A progress line when standard error is a terminal; nil otherwise.
    static func onTerminal(total: Int?) -> BulkProgress? {
        isatty(STDERR_FILENO) == 1 ? BulkProgress(total: total) : nil
    }

    private init(total: Int?) {
        self.total = total
        state = Mutex(State(lastDraw: start))
    }

    func update(done: Int, fraction: Double?) {
        let now = ContinuousClock.now
        let due = state.withLock { state in
            guard now - state.lastDraw >= .milliseconds(200) else { return false }
            state.lastDraw = now
            state.drawn = true
            return true
        }
        guard due else { return }
        let elapsed = Double((now - start).components.seconds) + Double((now - start).components.attoseconds) / 1e18
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        var text = "\(done) done, \(Int(rate))/s"
        let share = total.map { Double(done) / Double(max($0, 1)) } ?? fraction
        if let share, share > 0.001 {
            text += ", \(Self.duration(elapsed / share - elapsed)) left"
        }
        draw("\r\u{1B}[K" + text)
    }

    func finish() {
        if state.withLock({ $0.drawn }) { draw("\r\u{1B}[K") }
    }

    private func draw(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    static func duration(_ seconds: Double) -> String {
        let whole = Int(max(0, seconds.rounded()))
        return whole >= 3600
            ? "\(whole / 3600)h\(String(format: "%02d", whole / 60 % 60))m"
            : "\(whole / 60):\(String(format: "%02d", whole % 60))"
    }
}

extension BulkInputOptions {
    /// Runs `work` over every document these options name and prints the summary: after the results, or on standard
    /// error with `summaryToStandardError` (JSON Lines output, and commands whose output is the documents themselves).
    /// Returns the exit status: 0 when every document passed, 1 otherwise, 2 when the input cannot be opened.
    func run(
        output: some CommandOutput, passed: String, failed: String, summaryToStandardError: Bool,
        _ work: @escaping @Sendable (BulkItem) async -> BulkResult
    ) async -> Int32 {
        guard let source = source(output: output) else { return 2 }
        let runner = BulkRunner(jobs: workerCount, progress: BulkProgress.onTerminal(total: source.knownCount))
        let summary = await runner.run(source, output: output, work)
        OutputBuffer.standardOutput.flush()
        let line = summary.line(passed: passed, failed: failed, lines: lines != nil)
        if summaryToStandardError { output.diagnostic(line) } else { output.line(line) }
        return summary.failed == 0 ? 0 : 1
    }
}

extension CommandText {
    /// What `body` makes of a document's bytes; a document that cannot be read, or that `body` throws on, becomes its
    /// coded error in place: `NAME: FAILURE` and `  code: reason`, or `errorJSON`'s line with `json`.
    static func result(
        of item: BulkItem, json: Bool, failure: String, expecting expected: DocumentKind? = nil,
        errorJSON: (String, ErrorReport.Detail) -> String = { JSONLine.encode(ErrorReport(file: $0, error: $1)) },
        _ body: ([UInt8]) async throws -> BulkResult
    ) async -> BulkResult {
        var bytes: [UInt8] = []
        do {
            bytes = try item.bytes()
            return try await body(bytes)
        } catch {
            var (code, reason) = codeAndReason(of: error)
            if let expected, let hint = DocumentKind.hint(for: bytes, expected: expected) { reason += "; \(hint)" }
            let text =
                json
                ? errorJSON(item.name, .init(code: code, reason: reason))
                : "\(item.name): \(failure)\n  \(code): \(reason)"
            return BulkResult(text: text, failureCodes: [code])
        }
    }
}

/// The two kinds of document the bulk commands read, told apart by their first bytes, so a document given to the
/// wrong command gets a pointer to the right one.
enum DocumentKind {
    case receipt
    case jws

    /// What `bytes` look like: a DER SEQUENCE or its base64 (`MII...`) is a receipt; compact JWS text or a
    /// notification body is a JWS.
    static func guess(_ bytes: [UInt8]) -> DocumentKind? {
        if JWSInput.text(from: bytes) != nil { return .jws }
        if bytes.count > 2, bytes[0] == 0x30, [0x80, 0x81, 0x82, 0x83].contains(bytes[1]) { return .receipt }
        let start = bytes.prefix(64).drop { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 || $0 == 0x22 }
        if start.starts(with: Array("MII".utf8)) { return .receipt }
        return nil
    }

    /// The command to use instead, when a document given where `expected` was wanted looks like the other kind.
    static func hint(for bytes: [UInt8], expected: DocumentKind) -> String? {
        switch (expected, guess(bytes)) {
        case (.jws, .receipt?): "this looks like an App Store receipt: try `iapkit receipt inspect` or `receipt verify`"
        case (.receipt, .jws?): "this looks like a signed document (JWS): try `iapkit jws decode` or `jws verify`"
        default: nil
        }
    }
}
