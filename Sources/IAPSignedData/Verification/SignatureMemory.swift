import Crypto
import IAPCore

/// Signatures already seen to verify, so a document sent again costs no second P-256 check.
///
/// Checking the signature is most of what verifying a document costs once its chain is remembered, and a server sees
/// the same documents again and again: an app posts the customer's transactions at every launch. The memory keeps a
/// SHA-256 of what one check depends on (the digest of the signed bytes, the signature, and the leaf certificate the
/// key comes from), and only for signatures that verified under a trusted chain: the same three give the same answer,
/// so a hit is that answer. A fixed table, `capacity` slots of 40 bytes (at most 2^20 of them), chosen by the key's
/// first bytes; a newer key takes an older one's slot. Every other check of a document still runs each time.
final class SignatureMemory: Sendable {
    private struct Table {
        var slots: [SHA256Digest?]
        var checks = 0
    }
    private let table: Locked<Table>
    private let mask: Int

    /// The most signatures a memory holds (40 MiB).
    static let largest = 1 << 20

    /// A memory of `capacity` signatures (rounded up to a power of two, at most ``largest``); 0 remembers none.
    init(capacity: Int) {
        let capacity = min(capacity, Self.largest)
        let size = capacity <= 0 ? 0 : 1 << (Int.bitWidth - (capacity - 1).leadingZeroBitCount)
        table = Locked(Table(slots: Array(repeating: nil, count: size)))
        mask = size - 1
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
        guard mask >= 0 else {
            table.withLock { $0.checks += 1 }
            return key.isValidSignature(ecdsa, for: digest)
        }
        var hasher = SHA256()
        digest.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        hasher.update(data: signature)
        hasher.update(data: leaf)
        let remembered = hasher.finalize()
        let slot = remembered.withUnsafeBytes { Int(truncatingIfNeeded: $0.loadUnaligned(as: UInt64.self)) } & mask
        if table.withLock({ $0.slots[slot] == remembered }) { return true }
        table.withLock { $0.checks += 1 }
        guard key.isValidSignature(ecdsa, for: digest) else { return false }
        if remember { table.withLock { $0.slots[slot] = remembered } }
        return true
    }
}
