import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback server that stalls, for tests of timeouts: on each connection it reads once, sends `reply` (nothing,
/// a head, half a body) and then holds the connection open until ``stop()``, sending a space every 100 ms meanwhile
/// when `trickles`.
public final class StallingHTTPServer: Sendable {
    public let port: Int
    private let listener: Int32
    private let stopped = Mutex(false)

    public init(reply: String, trickles: Bool = false) throws {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(socketFD, 16) == 0 else {
            close(socketFD)
            throw CocoaError(.fileWriteUnknown)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketFD, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        listener = socketFD
        let bytes = Array(reply.utf8)
        Thread.detachNewThread { [self] in
            while true {
                let connection = accept(socketFD, nil, nil)
                guard connection >= 0 else { return }
                Thread.detachNewThread { [self] in self.stall(connection, reply: bytes, trickles: trickles) }
            }
        }
    }

    private func stall(_ connection: Int32, reply: [UInt8], trickles: Bool) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        _ = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
        _ = reply.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        while !stopped.withLock({ $0 }) {
            usleep(100_000)
            guard trickles else { continue }
            let space: [UInt8] = [0x20]
            _ = space.withUnsafeBytes { send(connection, $0.baseAddress, 1, Int32(MSG_NOSIGNAL)) }
        }
        close(connection)
    }

    /// Closes the listener and, within 100 ms, every connection.
    public func stop() {
        stopped.withLock { $0 = true }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}
