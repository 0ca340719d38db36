import Foundation
import IAPCore

/// Reads Apple's binary property-list format (`bplist00`) into ``ConfigurationNode``s, in time linear in the file's size.
///
/// Written here rather than left to Foundation's `PropertyListSerialization` for two measured reasons: on Linux that
/// reader crashes (SIGSEGV while bridging to `Set<AnyHashable>`) on any non-empty set, and it expands shared references
/// while bridging, so a 140-byte file that refers to one array twice at each of twenty levels stands for 2^20 values.
/// Here each object is read once and a second reference reuses the node read the first time; the values the file
/// stands for once expanded are counted without expanding them and bounded by ``ConfigurationNode/Limits``.
///
/// The format: the header `bplist00`; the objects, each a marker byte (type in the high nibble, a size or count in
/// the low one, 0xF meaning an integer object with the count follows); a table of object offsets; and a 32-byte
/// trailer giving the offsets' and references' widths, the object count, the top object and the table's offset.
/// Sets, ordered sets, keyed-archiver UIDs and the later formats' types are no catalog value and are refused.
struct BinaryPropertyListReader {
    let bytes: [UInt8]
    let file: String

    /// Whether `data` is a binary property list of any version (`bplist` then two version characters).
    static func isBinary(_ data: Data) -> Bool { data.starts(with: Array("bplist".utf8)) }

    func read() throws(CatalogError) -> ConfigurationNode {
        var state = try Reading(bytes: bytes, file: file)
        return try state.node(state.topObject, depth: 0, path: "")
    }
}

/// One read of a file: the trailer's facts and, per object, the node read and how many values it stands for.
private struct Reading {
    let bytes: [UInt8]
    let file: String
    let offsetSize: Int
    let referenceSize: Int
    let objectCount: Int
    let topObject: Int
    let offsetTable: Int

    /// Per object: the node once read, the values it stands for expanded, and its nesting height.
    var nodes: [ConfigurationNode?]
    var expandedSizes: [Int]
    var heights: [Int]
    var inProgress: [Bool]

    init(bytes: [UInt8], file: String) throws(CatalogError) {
        self.bytes = bytes
        self.file = file
        let trailerSize = 32
        guard bytes.count >= 8 + 1 + 1 + trailerSize else {
            throw CatalogError(.malformedFile, file: file, keyPath: "", "a binary property list too short to hold one")
        }
        guard bytes[6] == UInt8(ascii: "0"), bytes[7] == UInt8(ascii: "0") else {
            let version = String(decoding: bytes[6..<8], as: UTF8.self)
            throw CatalogError(
                .unsupportedVersion, file: file, keyPath: "",
                "binary property list version \"\(version)\" (IAPKit reads bplist00, what Xcode writes)")
        }
        let trailer = bytes.count - trailerSize
        offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
            throw CatalogError(.malformedFile, file: file, keyPath: "", "the trailer gives impossible field widths")
        }
        let count = Self.unsigned(bytes, at: trailer + 8, size: 8)
        let top = Self.unsigned(bytes, at: trailer + 16, size: 8)
        let table = Self.unsigned(bytes, at: trailer + 24, size: 8)
        // The table lies between the objects and the trailer, and holds one offset per object.
        guard table >= 9, table <= UInt64(trailer), count >= 1,
            count <= UInt64(trailer - Int(table)) / UInt64(offsetSize), top < count
        else {
            throw CatalogError(
                .malformedFile, file: file, keyPath: "", "the trailer's object count or offsets do not fit the file")
        }
        objectCount = Int(count)
        topObject = Int(top)
        offsetTable = Int(table)
        nodes = Array(repeating: nil, count: objectCount)
        expandedSizes = Array(repeating: 0, count: objectCount)
        heights = Array(repeating: 0, count: objectCount)
        inProgress = Array(repeating: false, count: objectCount)
    }

    /// A big-endian unsigned integer of `size` bytes (at most 8) at `offset`, which the caller has bounds-checked.
    static func unsigned(_ bytes: [UInt8], at offset: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in offset..<(offset + size) { value = value << 8 | UInt64(bytes[index]) }
        return value
    }

    func malformed(_ path: String, _ message: String) -> CatalogError {
        CatalogError(.malformedFile, file: file, keyPath: path, message)
    }

    /// The object `index` as a node, read once; `depth` is where this reference sits in the expanded tree.
    mutating func node(_ index: Int, depth: Int, path: String) throws(CatalogError) -> ConfigurationNode {
        WorkMeter.tick()
        if let node = nodes[index] {
            guard depth + heights[index] <= ConfigurationNode.Limits.depth else {
                throw ConfigurationNode.tooDeep(file: file, path: path)
            }
            return node
        }
        guard !inProgress[index] else { throw malformed(path, "an array or dictionary contains itself") }
        guard depth <= ConfigurationNode.Limits.depth else { throw ConfigurationNode.tooDeep(file: file, path: path) }
        inProgress[index] = true
        let (node, expanded, height) = try read(object: index, depth: depth, path: path)
        inProgress[index] = false
        nodes[index] = node
        expandedSizes[index] = expanded
        heights[index] = height
        return node
    }

    /// Reads one object's marker and content: the node, the values it stands for expanded, and its height.
    private mutating func read(
        object index: Int, depth: Int, path: String
    ) throws(CatalogError) -> (ConfigurationNode, Int, Int) {
        let offsetAt = offsetTable + index * offsetSize
        let offset = Self.unsigned(bytes, at: offsetAt, size: offsetSize)
        guard offset >= 8, offset < UInt64(offsetTable) else {
            throw malformed(path, "an object offset points outside the file")
        }
        let start = Int(offset)
        let marker = bytes[start]
        let low = Int(marker & 0x0F)
        var cursor = start + 1
        defer { WorkMeter.tick(cursor - start) }

        /// `length` bytes from the cursor, bounds-checked against the object area.
        func take(_ length: Int) throws(CatalogError) -> ArraySlice<UInt8> {
            guard length >= 0, length <= offsetTable - cursor else {
                throw malformed(path, "an object runs past the end of the object area")
            }
            defer { cursor += length }
            return bytes[cursor..<(cursor + length)]
        }
        /// The element count: the low nibble, or an integer object after the marker when it is 0xF.
        func count() throws(CatalogError) -> Int {
            guard low == 0xF else { return low }
            let intMarker = try take(1).first!
            guard intMarker >> 4 == 0x1, intMarker & 0x0F <= 3 else {
                throw malformed(path, "a count that is not an integer")
            }
            let size = 1 << Int(intMarker & 0x0F)
            let raw = try take(size)
            let value = Self.unsigned(bytes, at: raw.startIndex, size: size)
            guard value <= UInt64(offsetTable) else { throw malformed(path, "a count larger than the file") }
            return Int(value)
        }

        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x00: return (.null, 1, 0)
            case 0x08: return (.bool(false), 1, 0)
            case 0x09: return (.bool(true), 1, 0)
            default: throw unsupported(path, "marker 0x\(String(marker, radix: 16)), which bplist00 does not define")
            }
        case 0x1:
            guard low <= 4 else { throw malformed(path, "an integer of impossible width") }
            let size = 1 << low
            let raw = try take(size)
            if size == 16 {
                // What Apple's writer uses for unsigned values above Int64.max: the high half is zero.
                let high = Self.unsigned(bytes, at: raw.startIndex, size: 8)
                let lowHalf = Self.unsigned(bytes, at: raw.startIndex + 8, size: 8)
                guard high == 0, let value = Int(exactly: lowHalf) else {
                    throw unsupported(path, "an integer wider than 64 bits")
                }
                return (.integer(value), 1, 0)
            }
            let value = Self.unsigned(bytes, at: raw.startIndex, size: size)
            // One, two and four bytes are unsigned; eight bytes are signed.
            return (.integer(size == 8 ? Int(Int64(bitPattern: value)) : Int(value)), 1, 0)
        case 0x2:
            guard low == 2 || low == 3 else { throw malformed(path, "a real of impossible width") }
            let raw = try take(1 << low)
            let bits = Self.unsigned(bytes, at: raw.startIndex, size: 1 << low)
            let value = low == 2 ? Double(Float(bitPattern: UInt32(bits))) : Double(bitPattern: bits)
            return (.real(value), 1, 0)
        case 0x3:
            guard marker == 0x33 else { throw malformed(path, "a date of impossible width") }
            let raw = try take(8)
            let seconds = Double(bitPattern: Self.unsigned(bytes, at: raw.startIndex, size: 8))
            guard seconds.isFinite else { throw malformed(path, "a date that is not a finite number") }
            return (.date(Date(timeIntervalSinceReferenceDate: seconds)), 1, 0)
        case 0x4:
            let length = try count()
            _ = try take(length)
            return (.data(count: length), 1, 0)
        case 0x5:
            let raw = try take(try count())
            guard raw.allSatisfy({ $0 < 0x80 }) else { throw malformed(path, "an ASCII string with a non-ASCII byte") }
            return (.string(String(decoding: raw, as: UTF8.self)), 1, 0)
        case 0x6:
            let units = try count()
            guard units <= (offsetTable - cursor) / 2 else {
                throw malformed(path, "a string runs past the object area")
            }
            let raw = try take(units * 2)
            var utf16: [UInt16] = []
            utf16.reserveCapacity(units)
            var at = raw.startIndex
            while at < raw.endIndex {
                utf16.append(UInt16(raw[at]) << 8 | UInt16(raw[at + 1]))
                at += 2
            }
            return (.string(String(decoding: utf16, as: UTF16.self)), 1, 0)
        case 0x8:
            throw unsupported(path, "a keyed-archiver UID, which no catalog uses")
        case 0xA:
            let elements = try count()
            let references = try referenceList(elements, from: &cursor, path: path)
            var children: [ConfigurationNode] = []
            children.reserveCapacity(elements)
            var expanded = 1
            var height = 0
            for (position, reference) in references.enumerated() {
                let childPath = "\(path)[\(position)]"
                children.append(try node(reference, depth: depth + 1, path: childPath))
                expanded = try add(expanded, expandedSizes[reference])
                height = max(height, heights[reference] + 1)
            }
            return (.array(children), expanded, height)
        case 0xB:
            throw unsupported(path, "an ordered set, which no catalog uses")
        case 0xC:
            throw unsupported(path, "a set, which no catalog uses")
        case 0xD:
            let entries = try count()
            guard entries <= (offsetTable - cursor) / 2 else {
                throw malformed(path, "a dictionary runs past the file")
            }
            let references = try referenceList(entries * 2, from: &cursor, path: path)
            var children: [String: ConfigurationNode] = [:]
            children.reserveCapacity(entries)
            var expanded = 1
            var height = 0
            for entry in 0..<entries {
                let keyReference = references[entry]
                guard case .string(let key) = try node(keyReference, depth: depth + 1, path: path) else {
                    throw malformed(path, "a dictionary key that is not a string")
                }
                let valueReference = references[entries + entry]
                let childPath = path.isEmpty ? key : "\(path).\(key)"
                let value = try node(valueReference, depth: depth + 1, path: childPath)
                guard children.updateValue(value, forKey: key) == nil else {
                    throw malformed(path, "the key \"\(key)\" appears twice")
                }
                expanded = try add(expanded, try add(expandedSizes[keyReference], expandedSizes[valueReference]))
                height = max(height, heights[valueReference] + 1)
            }
            return (.dictionary(children), expanded, height)
        default:
            throw unsupported(
                path, "marker 0x\(String(marker, radix: 16)), a type of the later binary formats no catalog uses")
        }
    }

    /// `count` object references from `cursor`, each checked to name an object of the file.
    private func referenceList(_ count: Int, from cursor: inout Int, path: String) throws(CatalogError) -> [Int] {
        guard count <= (offsetTable - cursor) / referenceSize else {
            throw malformed(path, "an array or dictionary runs past the object area")
        }
        var references: [Int] = []
        references.reserveCapacity(count)
        for position in 0..<count {
            let reference = Self.unsigned(bytes, at: cursor + position * referenceSize, size: referenceSize)
            guard reference < UInt64(objectCount) else { throw malformed(path, "a reference to no object") }
            references.append(Int(reference))
        }
        cursor += count * referenceSize
        return references
    }

    /// Adds expanded sizes, refusing past the budget (so the sum never overflows either).
    private func add(_ lhs: Int, _ rhs: Int) throws(CatalogError) -> Int {
        let sum = lhs + rhs
        guard sum <= ConfigurationNode.Limits.expandedValues else { throw ConfigurationNode.tooManyValues(file: file) }
        return sum
    }

    private func unsupported(_ path: String, _ message: String) -> CatalogError {
        CatalogError(.unsupportedValue, file: file, keyPath: path, message)
    }
}
