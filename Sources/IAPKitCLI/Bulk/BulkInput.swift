import ArgumentParser
import Foundation

#if canImport(Glibc)
    import CoreFoundation  // where Foundation on Linux takes `stat` from
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where the bulk commands (`receipt verify`, `receipt inspect`, `jws verify`, `jws decode`) read documents from, and
/// how many cores they use.
struct BulkInputOptions: ParsableArguments {
    @Argument(
        help: """
            Files, or directories searched recursively (names starting with a dot are skipped); - reads one document \
            from standard input.
            """)
    var paths: [String] = []

    @Option(
        name: .customLong("files-from"),
        help: "A file listing one path per line (- for standard input), read as it is used.")
    var filesFrom: String?

    @Option(
        name: .customLong("lines"),
        help: """
            A file holding one document per line (- for standard input): base64 receipts, compact JWS or notification \
            bodies, as exported from a database table. Each is named FILE:LINE in the output.
            """)
    var lines: String?

    @Option(help: "How many documents to work on at once (default: one per core).")
    var jobs: Int?

    func validate() throws {
        guard !paths.isEmpty || filesFrom != nil || lines != nil else {
            throw ValidationError("Name at least one file or directory, or give --files-from or --lines.")
        }
        if let jobs, !(1...1024).contains(jobs) { throw ValidationError("--jobs must be between 1 and 1024.") }
        let readers = paths.filter { $0 == "-" }.count + (filesFrom == "-" ? 1 : 0) + (lines == "-" ? 1 : 0)
        if readers > 1 { throw ValidationError("Standard input (-) can be read only once.") }
    }

    /// How many workers to run.
    var workerCount: Int { jobs ?? max(1, ProcessInfo.processInfo.activeProcessorCount) }

    /// The documents, in order, read lazily; or nil after reporting a list file that cannot be opened.
    func source(output: some CommandOutput) -> DocumentSource? {
        do {
            return try DocumentSource(paths: paths, filesFrom: filesFrom, lines: lines)
        } catch {
            output.diagnostic("error: \(error.reason) [\(error.code)]")
            return nil
        }
    }
}

/// One document to work on: a file to read, a line already read, or a place in the input that could not be read.
struct BulkItem: Sendable {
    enum Content: Sendable {
        case file(String)
        case bytes([UInt8])
        case unreadable(code: String, reason: String)
    }

    /// How the document is named in the output: its path, or `FILE:LINE`.
    let name: String
    let content: Content

    /// The document's bytes; throws ``BulkInputError`` when they cannot be had.
    func bytes() throws(BulkInputError) -> [UInt8] {
        switch content {
        case .bytes(let bytes): return bytes
        case .unreadable(let code, let reason): throw BulkInputError(code: code, reason: reason)
        case .file(let path): return try FileReader.contents(of: path)
        }
    }
}

/// A place in the input that gave no document: a missing file, a line too long.
struct BulkInputError: Error, Sendable {
    let code: String
    let reason: String
}

/// Whole files as bytes, through POSIX calls (no `Data`, no `String`), bounded in size.
enum FileReader {
    /// The largest document file read (receipts and notification bodies are kilobytes).
    static let maximumSize = 16 << 20

    static func contents(of path: String) throws(BulkInputError) -> [UInt8] {
        if path == "-" { return try readAll(STDIN_FILENO, name: "standard input") }
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw failure(path) }
        defer { close(descriptor) }
        return try readAll(descriptor, name: path)
    }

    private static func readAll(_ descriptor: Int32, name: String) throws(BulkInputError) -> [UInt8] {
        var status = stat()
        if fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR {
            throw BulkInputError(code: "unreadableFile", reason: "'\(name)' is a directory")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(status.st_size > 0 ? min(Int(status.st_size) + 1, maximumSize + 1) : 64 << 10)
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure(name)
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > maximumSize {
                throw BulkInputError(
                    code: "inputTooLarge", reason: "'\(name)' is larger than \(maximumSize >> 20) MiB")
            }
        }
    }

    private static func failure(_ path: String) -> BulkInputError {
        BulkInputError(code: "unreadableFile", reason: "'\(path)' cannot be read: \(String(cString: strerror(errno)))")
    }
}

/// The documents a bulk command works on, in input order: the named paths (directories walked in name order), then
/// the paths `--files-from` lists, then the lines of `--lines`. Nothing is read ahead beyond one buffer, so a million
/// lines take no more memory than ten.
final class DocumentSource {
    private var pending: [String]
    /// Directories being walked: the entries left in each, deepest last.
    private var walking: [[String]] = []
    private var fileList: LineReader?
    private let fileListName: String
    private var documentLines: LineReader?
    private let documentLinesName: String

    /// The number of documents, when it is known before they are read (plain files named on the command line).
    let knownCount: Int?

    init(paths: [String], filesFrom: String?, lines: String?) throws(BulkInputError) {
        pending = paths.reversed()
        fileList = try filesFrom.map { path throws(BulkInputError) in try LineReader(path: path) }
        fileListName = filesFrom == "-" ? "stdin" : filesFrom ?? ""
        documentLines = try lines.map { path throws(BulkInputError) in try LineReader(path: path) }
        documentLinesName = lines == "-" ? "stdin" : lines ?? ""
        let plainFiles = filesFrom == nil && lines == nil && !paths.contains { Self.isDirectory($0) }
        knownCount = plainFiles ? paths.count : nil
    }

    /// How far through `--lines` the reading is (0 to 1), when it reads a regular file.
    var fractionRead: Double? { documentLines?.fractionRead }

    func next() -> BulkItem? {
        if let item = nextPath() { return item }
        if let reader = documentLines {
            while let line = reader.next() {
                let name = "\(documentLinesName):\(line.number)"
                switch line.content {
                case .text(let bytes):
                    if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
                    return BulkItem(name: name, content: .bytes(bytes))
                case .tooLong:
                    return BulkItem(
                        name: name,
                        content: .unreadable(
                            code: "inputTooLarge", reason: "the line is longer than \(LineReader.maximumLine >> 20) MiB"
                        ))
                case .failed(let reason):
                    return BulkItem(name: name, content: .unreadable(code: "unreadableFile", reason: reason))
                }
            }
            documentLines = nil
        }
        return nil
    }

    /// The next file from the named paths, the walks under them, and `--files-from`.
    private func nextPath() -> BulkItem? {
        while true {
            if var entries = walking.last {
                guard let path = entries.popLast() else {
                    walking.removeLast()
                    continue
                }
                walking[walking.count - 1] = entries
                if let item = item(for: path) { return item }
                continue
            }
            if let path = pending.popLast() {
                if let item = item(for: path) { return item }
                continue
            }
            guard let reader = fileList else { return nil }
            guard let line = reader.next() else {
                fileList = nil
                return nil
            }
            switch line.content {
            case .text(let bytes):
                let path = String(decoding: bytes, as: UTF8.self)
                if path.allSatisfy(\.isWhitespace) { continue }
                if let item = item(for: path) { return item }
            case .tooLong:
                return BulkItem(
                    name: "\(fileListName):\(line.number)",
                    content: .unreadable(code: "unreadableFile", reason: "the listed path is too long"))
            case .failed(let reason):
                return BulkItem(
                    name: "\(fileListName):\(line.number)", content: .unreadable(code: "unreadableFile", reason: reason)
                )
            }
        }
    }

    /// A file to read, or nil after starting to walk a directory.
    private func item(for path: String) -> BulkItem? {
        guard path != "-", Self.isDirectory(path) else { return BulkItem(name: path, content: .file(path)) }
        do {
            let names = try FileManager.default.contentsOfDirectory(atPath: path)
                .filter { !$0.hasPrefix(".") }
                .sorted()
            let base = path.hasSuffix("/") ? path : path + "/"
            walking.append(names.reversed().map { base + $0 })
            return nil
        } catch {
            return BulkItem(
                name: path, content: .unreadable(code: "unreadableFile", reason: "'\(path)' cannot be listed"))
        }
    }

    private static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }
}

/// Lines of a file or of standard input, read in blocks; a line past ``maximumLine`` is skipped, not kept.
final class LineReader {
    struct Line {
        enum Content {
            case text([UInt8])
            case tooLong
            case failed(String)
        }
        let number: Int
        let content: Content
    }

    static let maximumLine = 16 << 20
    private static let blockSize = 256 << 10

    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private var buffer: [UInt8] = []
    private var start = 0
    private var finished = false
    private var number = 0
    private var bytesRead = 0
    private let size: Int?

    init(path: String) throws(BulkInputError) {
        if path == "-" {
            descriptor = STDIN_FILENO
            ownsDescriptor = false
        } else {
            descriptor = open(path, O_RDONLY)
            guard descriptor >= 0 else {
                throw BulkInputError(
                    code: "unreadableFile", reason: "'\(path)' cannot be read: \(String(cString: strerror(errno)))")
            }
            ownsDescriptor = true
        }
        var status = stat()
        let isRegular = fstat(descriptor, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG
        if (status.st_mode & S_IFMT) == S_IFDIR {
            if ownsDescriptor { close(descriptor) }
            throw BulkInputError(code: "unreadableFile", reason: "'\(path)' is a directory")
        }
        size = isRegular && status.st_size > 0 ? Int(status.st_size) : nil
    }

    deinit { if ownsDescriptor { close(descriptor) } }

    var fractionRead: Double? { size.map { min(1, Double(bytesRead) / Double($0)) } }

    func next() -> Line? {
        var skipping = false
        while true {
            if let newline = buffer[start...].firstIndex(of: 0x0A) {
                var end = newline
                if end > start, buffer[end - 1] == 0x0D { end -= 1 }
                let text = Array(buffer[start..<end])
                start = newline + 1
                number += 1
                return Line(number: number, content: skipping ? .tooLong : .text(text))
            }
            if finished {
                guard start < buffer.count || skipping else { return nil }
                let text = Array(buffer[start...])
                start = buffer.count
                number += 1
                return Line(number: number, content: skipping ? .tooLong : .text(text))
            }
            if buffer.count - start > Self.maximumLine {
                skipping = true
                start = buffer.count
            }
            if let failure = fill() {
                finished = true
                number += 1
                return Line(number: number, content: .failed(failure))
            }
        }
    }

    /// Reads one more block, dropping what has been consumed; returns a reason when reading failed.
    private func fill() -> String? {
        if start > 0 {
            buffer.removeFirst(start)
            start = 0
        }
        let old = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: Self.blockSize))
        while true {
            let count = buffer.withUnsafeMutableBytes { raw in
                read(descriptor, raw.baseAddress! + old, Self.blockSize)
            }
            if count < 0, errno == EINTR { continue }
            buffer.removeLast(Self.blockSize - max(count, 0))
            if count < 0 { return String(cString: strerror(errno)) }
            if count == 0 { finished = true }
            bytesRead += count
            return nil
        }
    }
}
