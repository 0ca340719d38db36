/// The 64-bit FNV-1a hash, fed a byte at a time: cheap, unseeded and the same in every process, for tables keyed by
/// short byte strings (JSON keys, a post's fingerprint). Not for anything an attacker could aim collisions at where a
/// collision costs more than a comparison.
///
/// Its methods take concrete byte buffers, not any sequence: a generic one was not specialized in the modules that
/// call it (the server's JSON decoder spent 6% of its CPU stepping an iterator through protocol witnesses).
package struct FNV1a {
    /// The hash of what was added so far.
    package private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    package init() {}

    /// Adds one byte.
    package mutating func add(_ byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x100_0000_01b3
    }

    /// Adds every byte of `bytes`.
    package mutating func add(_ bytes: UnsafeBufferPointer<UInt8>) {
        for byte in bytes { add(byte) }
    }

    /// Adds every byte of `bytes`.
    package mutating func add(_ bytes: ArraySlice<UInt8>) {
        bytes.withUnsafeBufferPointer { add($0) }
    }

    /// Adds the UTF-8 bytes of `text`.
    package mutating func add(_ text: String) {
        var text = text
        text.withUTF8 { add($0) }
    }
}
