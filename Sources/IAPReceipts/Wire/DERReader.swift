import IAPCore

/// A minimal reader of definite-length DER elements over a buffer, allocating nothing: the hot path of receipts.
///
/// swift-asn1 builds a node tree for every element of its input. For a receipt that is the three certificates' few
/// hundred nodes (which the trust layer parses again, once per distinct chain) and a few hundred tiny attributes.
/// Measured (release build, one core, the 8.4 KB RevenueCat receipt): parsing it entirely through swift-asn1 took
/// 217 us (39 MB/s), two thirds of it in retain/release of node arrays; docs/benchmarks.md has the figures
/// with this reader, which walks the signed-data skeleton and the attribute sets and leaves the small structures
/// (algorithm identifiers, signer infos) to swift-asn1. BER input (indefinite lengths, as Xcode writes) makes it
/// report ``Failure/indefiniteLength`` and the caller falls back to swift-asn1 for everything.
///
/// It accepts exactly what DER does for the elements it reads: low tag numbers, definite minimal lengths, nothing
/// after the last element.
struct DERReader {
    /// An error of swift-asn1 (or any other) as a reason a client may read: swift-asn1 ends its description with the
    /// library's own source file and line, which say nothing to a client and name the server's internals.
    static func message(_ error: any Error) -> String {
        let text = "\(error)"
        guard let place = text.firstMatch(of: /\s\S+\.swift:[0-9]+$/) else { return text }
        return String(text[..<place.range.lowerBound])
    }

    enum Failure: Error, Equatable {
        /// BER's indefinite length: not DER, read it with swift-asn1.
        case indefiniteLength
        /// Not well-formed: truncated, a length past the end, a non-minimal length, trailing bytes.
        case malformed(String)
        /// Well-formed, but not the structure expected.
        case unexpected(String)
    }

    struct Element {
        /// The identifier octet (class, constructed bit and a tag number below 31).
        let tag: UInt8
        /// Where the content octets are in the buffer.
        let content: Range<Int>
        /// Where the whole element (identifier, length, content) is in the buffer.
        let encoded: Range<Int>
    }

    let buffer: UnsafeBufferPointer<UInt8>
    private var position: Int
    private let end: Int

    /// A reader of the elements in `range` of `buffer` (all of it by default).
    init(_ buffer: UnsafeBufferPointer<UInt8>, range: Range<Int>? = nil) {
        self.buffer = buffer
        self.position = range?.lowerBound ?? 0
        self.end = range?.upperBound ?? buffer.count
    }

    var isAtEnd: Bool { position == end }

    /// The next element, or nil at the end.
    @inline(__always)
    mutating func next() throws(Failure) -> Element? {
        guard position < end else { return nil }
        let start = position
        let tag = buffer[position]
        guard tag & 0x1f != 0x1f else { throw .malformed("a high tag number") }
        guard position + 1 < end else { throw .malformed("truncated length") }
        let first = buffer[position + 1]
        var index = position + 2
        var length: Int
        if first < 0x80 {
            length = Int(first)
        } else if first == 0x80 {
            throw .indefiniteLength
        } else {
            let count = Int(first & 0x7f)
            guard count <= 4 else { throw .malformed("a length of \(count) octets") }
            guard end - index >= count else { throw .malformed("truncated length") }
            guard buffer[index] != 0 else { throw .malformed("non-minimal length") }
            length = 0
            for offset in 0..<count { length = length << 8 | Int(buffer[index + offset]) }
            guard length >= 0x80 else { throw .malformed("non-minimal length") }
            index += count
        }
        guard end - index >= length else { throw .malformed("a length past the end") }
        position = index + length
        return Element(tag: tag, content: index..<position, encoded: start..<position)
    }

    /// The next element, which must exist and carry `tag`.
    mutating func expect(_ tag: UInt8, _ what: StaticString) throws(Failure) -> Element {
        guard let element = try next() else { throw .unexpected("\(what) is missing") }
        guard element.tag == tag else { throw .unexpected("\(what) has tag \(element.tag), not \(tag)") }
        return element
    }

    /// The next element if it carries `tag`; otherwise nothing is consumed.
    mutating func optional(_ tag: UInt8) throws(Failure) -> Element? {
        var lookahead = self
        guard let element = try lookahead.next(), element.tag == tag else { return nil }
        self = lookahead
        return element
    }

    /// A reader of an element's content.
    func children(of element: Element) -> DERReader {
        DERReader(buffer, range: element.content)
    }

    /// Copies bytes out of the buffer.
    func bytes(_ range: Range<Int>) -> [UInt8] {
        Array(UnsafeBufferPointer(rebasing: buffer[range]))
    }

    /// The part of `input` at `range`, a range of a buffer over `input` (which starts at index 0).
    static func slice(_ input: ArraySlice<UInt8>, _ range: Range<Int>) -> ArraySlice<UInt8> {
        input[(input.startIndex + range.lowerBound)..<(input.startIndex + range.upperBound)]
    }

    /// The value of a minimally encoded INTEGER element that fits in `Int`.
    func int(_ element: Element) throws(Failure) -> Int {
        guard element.tag == 0x02 else { throw .unexpected("not an integer") }
        return try Self.int(UnsafeBufferPointer(rebasing: buffer[element.content]))
    }

    /// The value of minimally encoded INTEGER content octets that fit in `Int`.
    static func int(_ content: UnsafeBufferPointer<UInt8>) throws(Failure) -> Int {
        guard !content.isEmpty, content.count <= 8 else { throw .unexpected("not an integer that fits in Int") }
        if content.count > 1 {
            guard !(content[0] == 0 && content[1] & 0x80 == 0), !(content[0] == 0xff && content[1] & 0x80 != 0) else {
                throw .malformed("non-minimal integer")
            }
        }
        var value = content[0] & 0x80 != 0 ? -1 : 0
        for byte in content { value = value << 8 | Int(byte) }
        return value
    }
}

extension ReceiptAttribute {
    /// Walks a DER `SET OF ReceiptAttribute` in place, handing each attribute to `visit`.
    ///
    /// Returns false, having visited nothing it could not finish, when the set uses indefinite lengths (BER); the
    /// caller then normalises it with swift-asn1. `offset` is where `buffer` starts in the bytes the views' ranges
    /// refer to. Structural problems become `failure(problem)`.
    static func walkSet(
        _ buffer: UnsafeBufferPointer<UInt8>,
        offset: Int = 0,
        failure: (String) -> ReceiptParsingError,
        _ visit: (AttributeView) throws(ReceiptParsingError) -> Void
    ) throws(ReceiptParsingError) -> Bool {
        var views: [AttributeView] = []
        do throws(DERReader.Failure) {
            var outer = DERReader(buffer)
            let set = try outer.expect(0x31, "the attribute set")
            guard outer.isAtEnd else { throw .malformed("bytes after the attribute set") }
            var reader = outer.children(of: set)
            views.reserveCapacity(set.content.count / 16)  // an attribute takes 11 bytes or more
            while let element = try reader.next() {
                WorkMeter.tick()
                guard element.tag == 0x30 else { throw .unexpected("an attribute is not a SEQUENCE") }
                var fields = reader.children(of: element)
                let type = try fields.expect(0x02, "attribute type")
                let version = try fields.expect(0x02, "attribute version")
                let value = try fields.expect(0x04, "attribute value")
                guard fields.isAtEnd else { throw .unexpected("an attribute has extra fields") }
                views.append(
                    AttributeView(
                        type: try reader.int(type), version: try reader.int(version),
                        value: UnsafeBufferPointer(rebasing: buffer[value.content]),
                        range: (offset + value.content.lowerBound)..<(offset + value.content.upperBound)))
            }
        } catch {
            switch error {
            case .indefiniteLength: return false
            case .malformed(let problem), .unexpected(let problem): throw failure(problem)
            }
        }
        for view in views { try visit(view) }
        return true
    }
}
