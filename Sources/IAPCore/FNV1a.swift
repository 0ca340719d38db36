/// The 64-bit FNV-1a hash, fed a byte at a time: cheap, unseeded and the same in every process, for tables keyed by
/// short byte strings (JSON keys, a post's fingerprint). Not for anything an attacker could aim collisions at where a
/// collision costs more than a comparison.
package struct FNV1a {
    /// The hash of what was added so far.
    package private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    @inlinable package init() {}

    /// Adds one byte.
    @inlinable package mutating func add(_ byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x100_0000_01b3
    }

    /// Adds every byte of `bytes`.
    @inlinable package mutating func add(contentsOf bytes: some Sequence<UInt8>) {
        for byte in bytes { add(byte) }
    }
}
