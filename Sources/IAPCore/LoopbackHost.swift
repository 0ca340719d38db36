import Foundation

/// Whether `host` (as a URL or a listening address names it) is this machine's loopback: `localhost`, an IPv4 address
/// in 127.0.0.0/8, or IPv6's `::1`, with or without brackets. Addresses are read as addresses (`inet_pton`), so a host
/// *name* that only starts with `127.` (`127.example.com`) is not loopback, and neither is anything else that is not an
/// address. Decides where plain HTTP and a database without TLS are acceptable, and whether a server is reachable
/// from this machine only.
public func isLoopbackHost(_ host: String) -> Bool {
    var host = host.lowercased()
    if host == "localhost" { return true }
    if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    var v4 = in_addr()
    if inet_pton(AF_INET, host, &v4) == 1 {
        return UInt32(bigEndian: v4.s_addr) >> 24 == 127
    }
    var v6 = in6_addr()
    guard inet_pton(AF_INET6, host, &v6) == 1 else { return false }
    return withUnsafeBytes(of: &v6) { bytes in bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1 }
}
