import Crypto
import IAPCore

/// Signatures already seen to verify, so a document sent again costs no second P-256 check.
///
/// Checking the signature is most of what verifying a document costs once its chain is remembered, and a server sees
/// the same documents again and again: an app posts the customer's transactions at every launch. The memory keeps a
/// SHA-256 of what one check depends on (the digest of the signed bytes, the signature, and the leaf certificate the
/// key comes from), and only for signatures that verified under a trusted chain: the same three give the same answer,
/// so a hit is that answer. A fixed table, `capacity` slots of 40 bytes (at most 2^20 of them), in sets of four chosen
/// by the key's first bytes: a key is looked for in its set's four slots, and a new key takes the place of the set's
/// oldest when all four are held. (One slot per key, as before, lost about one signature in seven of 10,000 to a
/// neighbour in a table of 65,536, and those two then pushed each other out at every re-post.) Every other check of a
/// document still runs each time.
final class SignatureMemory: Sendable {
    private struct Table {
        var slots: [SHA256Digest?]
        var checks = 0
    }
    private let table: Locked<Table>
    /// The first slot of the set a key's first bytes pick: those bytes masked with this.
    private let setMask: Int
    /// Slots in a set: 4, or the whole table when it holds fewer.
    private let ways: Int

    /// The most signatures a memory holds (40 MiB).
    static let largest = 1 << 20

    /// A memory of `capacity` signatures (rounded up to a power of two, at most ``largest``); 0 remembers none.
    init(capacity: Int) {
        let capacity = min(capacity, Self.largest)
        let size = capacity <= 0 ? 0 : 1 << (Int.bitWidth - (capacity - 1).leadingZeroBitCount)
        table = Locked(Table(slots: Array(repeating: nil, count: size)))
        ways = min(size, 4)
        setMask = (size - 1) & ~(ways - 1)
    }

    /// How many signatures were checked with P-256 (not answered from memory) so far.
    var checks: Int { table.withLock { $0.checks } }

    /// Whether `signature` (raw r‖s) signs `signingInput` under `key`, the key of the certificate `leaf`; remembered
    /// when it does and `remember` (the leaf's chain is trusted).
    func isValid(
        _ signature: [UInt8], of signingInput: [UInt8], leaf: ArraySlice<UInt8>, key: P256.Signing.PublicKey,
        remember: Bool
    ) -> Bool {
        guard signature.count == 64, let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else {
            return false
        }
        let digest = SHA256.hash(data: signingInput)
        guard ways > 0 else {
            table.withLock { $0.checks += 1 }
            return key.isValidSignature(ecdsa, for: digest)
        }
        var hasher = SHA256()
        digest.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        hasher.update(data: signature)
        hasher.update(data: leaf)
        let remembered = hasher.finalize()
        let set = remembered.withUnsafeBytes { Int(truncatingIfNeeded: $0.loadUnaligned(as: UInt64.self)) } & setMask
        let slots = set..<set + ways
        if table.withLock({ table in slots.contains { table.slots[$0] == remembered } }) { return true }
        table.withLock { $0.checks += 1 }
        guard key.isValidSignature(ecdsa, for: digest) else { return false }
        if remember {
            table.withLock { table in
                // Newest first: the others move one place along and the oldest falls out.
                guard !slots.contains(where: { table.slots[$0] == remembered }) else { return }
                for slot in slots.dropFirst().reversed() { table.slots[slot] = table.slots[slot - 1] }
                table.slots[set] = remembered
            }
        }
        return true
    }
}
