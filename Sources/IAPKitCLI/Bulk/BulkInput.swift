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
        if path == "-" { return try readAll(STDIN_FILENO, name: "standard input", size: nil) }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure(path) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw failure(path) }
        if (status.st_mode & S_IFMT) == S_IFDIR {
            throw BulkInputError(code: "unreadableFile", reason: "'\(path)' is a directory")
        }
        let regular = (status.st_mode & S_IFMT) == S_IFREG
        return try readAll(descriptor, name: path, size: regular ? Int(status.st_size) : nil)
    }

    /// Reads to the end: into one buffer of the file's size (one more byte to see the end) when the size is known.
    private static func readAll(_ descriptor: Int32, name: String, size: Int?) throws(BulkInputError) -> [UInt8] {
        /// Up to `room` bytes, fewer only at the end.
        func chunk(_ room: Int) throws(BulkInputError) -> [UInt8] {
            var failed = false
            let bytes = [UInt8](unsafeUninitializedCapacity: room) { buffer, count in
                count = 0
                while count < room {
                    let got = read(descriptor, buffer.baseAddress! + count, room - count)
                    if got < 0, errno == EINTR { continue }
                    if got < 0 { failed = true }
                    if got <= 0 { break }
                    count += got
                    if count == size { break }  // all the file said it held: no read just to see the end
                }
            }
            if failed { throw failure(name) }
            return bytes
        }
        var capacity = min((size ?? (64 << 10)) + 1, maximumSize + 1)
        var bytes = try chunk(capacity)
        while bytes.count == capacity, capacity <= maximumSize {  // full: there may be more
            let extra = min(capacity, maximumSize + 1 - capacity)
            bytes += try chunk(extra)
            capacity += extra
        }
        guard bytes.count <= maximumSize else {
            throw BulkInputError(code: "inputTooLarge", reason: "'\(name)' is larger than \(maximumSize >> 20) MiB")
        }
        return bytes
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
    /// Directories being walked: the entries left in each (last first), deepest last.
    private var walking: [[Entry]] = []
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
            if !walking.isEmpty {
                // Popped in place: a copy of the listing per file would make a walk quadratic.
                guard let entry = walking[walking.count - 1].popLast() else {
                    walking.removeLast()
                    continue
                }
                if let item = item(for: entry.path, isDirectory: entry.isDirectory) { return item }
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

    /// A name in a directory being walked; whether it is a directory, when the listing said.
    private struct Entry {
        let path: String
        let isDirectory: Bool?
    }

    /// A file to read, or nil after starting to walk a directory.
    private func item(for path: String, isDirectory: Bool? = nil) -> BulkItem? {
        guard path != "-", isDirectory ?? Self.isDirectory(path) else {
            return BulkItem(name: path, content: .file(path))
        }
        guard let entries = Self.list(path) else {
            return BulkItem(
                name: path, content: .unreadable(code: "unreadableFile", reason: "'\(path)' cannot be listed"))
        }
        walking.append(entries.reversed())
        return nil
    }

    /// A directory's entries in name order (by bytes), names starting with a dot left out, each with its type when the
    /// system gives it (so a walk does not look up every file again). This runs before any document of the folder is
    /// read, so it is kept cheap: the names are gathered in one buffer and sorted by ``NameOrder``.
    private static func list(_ path: String) -> [Entry]? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var names = NameOrder()
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                UnsafeRawBufferPointer(start: raw.baseAddress, count: strnlen(raw.baseAddress!, raw.count))
            }
            guard let first = name.first, first != UInt8(ascii: ".") else { continue }
            // d_type: 4 a directory, 8 a regular file, anything else (links, unknown) looked up.
            let type = entry.pointee.d_type
            names.append(name, type == 4 ? true : type == 8 ? false : nil)
        }
        let base = path.hasSuffix("/") ? path : path + "/"
        return names.sorted { name, isDirectory in Entry(path: base + name, isDirectory: isDirectory) }
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

/// The names of one directory in byte order. Sorting thousands of names one comparison at a time costs milliseconds
/// before the first document can start; here each name gets a number made of its first eight bytes after the prefix all
/// names share (for numbered files, the number), names are sorted by that, and only equal numbers compare their bytes.
struct NameOrder {
    private var bytes: [UInt8] = []
    private var names: [(start: Int, count: Int, isDirectory: Bool?)] = []

    mutating func append(_ name: UnsafeRawBufferPointer, _ isDirectory: Bool?) {
        names.append((bytes.count, name.count, isDirectory))
        bytes.append(contentsOf: name)
    }

    /// Every name in byte order, made into an element with `make`.
    func sorted<Element>(_ make: (String, Bool?) -> Element) -> [Element] {
        guard let first = names.first else { return [] }
        return bytes.withUnsafeBufferPointer { bytes in
            func name(_ index: Int) -> UnsafeBufferPointer<UInt8> {
                UnsafeBufferPointer(rebasing: bytes[names[index].start..<names[index].start + names[index].count])
            }
            // The prefix every name shares.
            var shared = first.count
            let firstName = name(0)
            for index in names.indices.dropFirst() {
                let other = name(index)
                var common = 0
                let limit = min(shared, other.count)
                while common < limit, firstName[common] == other[common] { common += 1 }
                shared = common
            }
            // Each name's next eight bytes, big-endian (a shorter name pads with zeros, and zero sorts first).
            var keys: [(key: UInt64, index: Int)] = names.indices.map { index in
                let bytes = name(index)
                var key: UInt64 = 0
                for offset in shared..<shared + 8 {
                    key = key << 8 | UInt64(offset < bytes.count ? bytes[offset] : 0)
                }
                return (key, index)
            }
            keys.sort { left, right in
                if left.key != right.key { return left.key < right.key }
                let (a, b) = (name(left.index), name(right.index))
                let order = memcmp(a.baseAddress!, b.baseAddress!, min(a.count, b.count))
                return order != 0 ? order < 0 : a.count < b.count
            }
            return keys.map { make(String(decoding: name($0.index), as: UTF8.self), names[$0.index].isDirectory) }
        }
    }
}
