import Foundation
import IAPTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// HTTP/1.1 over a plain loopback socket, byte for byte as a test writes it: any `Host`, any header, half a request.
/// Blocking; call it through `offThePool`.
struct RawHTTP {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// An answer: the status line's code, the header block and the body as text.
    struct Answer {
        let status: Int
        let head: String
        let body: String

        var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
        }
    }

    let descriptor: Int32

    /// Connects to `127.0.0.1:port`; reads wait at most `timeout`.
    init(port: Int, timeout: Duration = .seconds(10)) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var wait = timeval(
            tv_sec: Int(timeout.components.seconds),
            tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw Failure(description: "connect: errno \(code)")
        }
    }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == bytes.count else { throw Failure(description: "send: errno \(errno)") }
    }

    /// Everything the server sends until it closes the connection or the read times out; nil when the read timed out
    /// before the server closed.
    func readUntilClosed() -> (text: String, closed: Bool) {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 { data += buffer[0..<count]; continue }
            return (String(decoding: data, as: UTF8.self), count == 0)
        }
    }

    /// Whether the answer being read has ended (its last chunk came, or the server closed the connection), reading
    /// without waiting what has arrived.
    func answerEnded() -> Bool {
        var tail: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes {
                recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
            }
            if count == 0 { return true }
            if count < 0 { return false }
            tail = Array((tail + buffer[0..<count]).suffix(7))
            if tail.suffix(5).elementsEqual(Array("0\r\n\r\n".utf8)) { return true }
        }
    }

    /// Reads one answer (headers, then a body of Content-Length bytes).
    func readAnswer() throws -> Answer {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        func headEnd() -> Int? {
            guard data.count >= 4 else { return nil }
            for index in 0...(data.count - 4) where data[index..<(index + 4)].elementsEqual([13, 10, 13, 10]) {
                return index + 4
            }
            return nil
        }
        while headEnd() == nil {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw Failure(description: "no answer (read \(count), errno \(errno))") }
            data += buffer[0..<count]
        }
        let end = headEnd()!
        let head = String(decoding: data[0..<end], as: UTF8.self)
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        let length =
            head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
        while data.count < end + length {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            data += buffer[0..<count]
        }
        return Answer(status: status, head: head, body: String(decoding: data[end...], as: UTF8.self))
    }

    func close() { Glibc.close(descriptor) }

    /// One request on a new connection: `METHOD PATH`, the headers given (Host defaults to the loopback address) and
    /// an optional body, with Content-Length set.
    static func exchange(
        port: Int, _ method: String, _ path: String, headers: [String: String] = [:], body: String? = nil
    ) async throws -> Answer {
        try await offThePool {
            let connection = try RawHTTP(port: port)
            defer { connection.close() }
            var lines = ["\(method) \(path) HTTP/1.1"]
            var fields = headers
            if fields.keys.first(where: { $0.lowercased() == "host" }) == nil { fields["Host"] = "127.0.0.1:\(port)" }
            if let body { fields["Content-Length"] = String(body.utf8.count) }
            fields["Connection"] = "close"
            for (name, value) in fields.sorted(by: { $0.key < $1.key }) { lines.append("\(name): \(value)") }
            try connection.send(lines.joined(separator: "\r\n") + "\r\n\r\n" + (body ?? ""))
            return try connection.readAnswer()
        }
    }
}
