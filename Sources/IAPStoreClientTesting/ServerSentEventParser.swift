/// Reads a `text/event-stream` (the WHATWG server-sent events format) as it arrives, chunk by chunk.
///
/// Lines end with LF, CR LF or CR; `event:`, `data:` and `id:` fields are kept (several `data:` lines join with LF),
/// comments (lines starting with `:`) and unknown fields are ignored, and a blank line dispatches the event. A line or
/// an event longer than ``maximumEventSize`` is an error, so a broken or hostile server cannot grow memory without
/// bound.
struct ServerSentEventParser {
    struct Event: Hashable, Sendable {
        var type: String
        var data: String
        var id: String?
    }

    struct Oversized: Error, CustomStringConvertible {
        let limit: Int
        var description: String { "a server-sent event is longer than \(limit) bytes" }
    }

    /// Far above a signed transaction (a few kilobytes).
    static let maximumEventSize = 1 << 20

    private var line: [UInt8] = []
    private var afterCarriageReturn = false
    private var type = ""
    private var data: [UInt8] = []
    private var hasData = false
    private var id: String?

    /// Feeds the next bytes; returns the events they complete.
    mutating func feed(_ bytes: some Sequence<UInt8>) throws(Oversized) -> [Event] {
        var events: [Event] = []
        for byte in bytes {
            if afterCarriageReturn {
                afterCarriageReturn = false
                if byte == 0x0A { continue }  // the LF of a CR LF
            }
            switch byte {
            case 0x0A, 0x0D:
                afterCarriageReturn = byte == 0x0D
                if let event = try endLine() { events.append(event) }
            default:
                guard line.count < Self.maximumEventSize else { throw Oversized(limit: Self.maximumEventSize) }
                line.append(byte)
            }
        }
        return events
    }

    private mutating func endLine() throws(Oversized) -> Event? {
        defer { line.removeAll(keepingCapacity: true) }
        if line.isEmpty {
            defer {
                type = ""
                data = []
                hasData = false
            }
            guard hasData else { return nil }
            return Event(type: type.isEmpty ? "message" : type, data: String(decoding: data, as: UTF8.self), id: id)
        }
        if line.first == UInt8(ascii: ":") { return nil }
        let colon = line.firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex
        let name = String(decoding: line[..<colon], as: UTF8.self)
        var valueStart = colon == line.endIndex ? colon : colon + 1
        if valueStart < line.endIndex, line[valueStart] == UInt8(ascii: " ") { valueStart += 1 }
        let value = line[valueStart...]
        switch name {
        case "event": type = String(decoding: value, as: UTF8.self)
        case "data":
            guard data.count + value.count < Self.maximumEventSize else {
                throw Oversized(limit: Self.maximumEventSize)
            }
            if hasData { data.append(0x0A) }
            data.append(contentsOf: value)
            hasData = true
        case "id": id = String(decoding: value, as: UTF8.self)
        default: break
        }
        return nil
    }
}
