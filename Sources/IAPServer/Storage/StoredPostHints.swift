import Foundation
import IAPCore

/// Which posts this server has recently seen stored: a hint, never a fact, for choosing the cheaper way on PostgreSQL.
/// Apps post the same transaction at every launch. Once it is stored, the read that answers a post of what is stored
/// (``SQLStorage``'s `storedPost`, one row) costs PostgreSQL less than the one data-modifying statement, which sets up
/// its inserts and updates for every post even when they write nothing; for a new post the read would be a wasted
/// round trip. So the read goes first only when this says the post was answered before.
///
/// A fixed table of 64-bit fingerprints, one per slot (a newer post takes an older one's slot): bounded memory, no
/// growth with traffic. A wrong hint costs one round trip and nothing else, since the read checks the database (another
/// instance may have changed an owner, or a fingerprint may collide); a missing one costs what every post cost before.
final class StoredPostHints: Sendable {
    private let slots: Locked<[UInt64]>
    private let mask: Int

    /// The share of the posts without a hint that turned out stored, lately: a moving average over about the last 32,
    /// in 65,536ths. Behind a load balancer an app's re-post often reaches an instance that did not answer it before;
    /// when most such posts are stored, reading first pays (two instances behind nginx answered 4,276 re-posts a second
    /// reading every post first, against 2,789 going to the writer without a hint; 2026-11-29). When most are new it
    /// does not: a new post then takes two trips (new posts alone, 1,783 a second against 2,375).
    private let unhintedStored = Locked(0)

    /// A table of `2^bits` slots (8 bytes each): 1 MiB and the last 131,072 posts' slots by default.
    init(bits: Int = 17) {
        slots = Locked(Array(repeating: 0, count: 1 << bits))
        mask = (1 << bits) - 1
    }

    /// Whether most posts without a hint lately were of stored transactions (so such a post is read first too).
    var unhintedPostsAreMostlyStored: Bool { unhintedStored.withLock { $0 } > 32_768 }

    /// Notes whether a post without a hint turned out stored (the read answered it, or the writer wrote nothing).
    func noteUnhinted(stored: Bool) {
        unhintedStored.withLock { share in share += ((stored ? 65_536 : 0) - share) / 32 }
    }

    /// The fingerprint of a post of `transaction` claimed by `claimant`: what a re-post of the same document (the same
    /// transaction, signed at the same moment, as long) by the same claimant has.
    static func fingerprint(_ transaction: StoredTransaction, claimant: String?) -> UInt64 {
        var hash = FNV1a()
        func text(_ text: String) {
            hash.add(text)
            hash.add(0xff)
        }
        func number(_ number: Int64) {
            for shift in stride(from: 0, to: 64, by: 8) { hash.add(UInt8(truncatingIfNeeded: number >> shift)) }
        }
        text(transaction.bundleID)
        text(transaction.transactionID)
        number(transaction.signedDate.millisecondsSince1970)
        number(Int64(transaction.document.utf8.count))
        if let claimant { text(claimant) } else { hash.add(0xfe) }
        // Zero marks an empty slot.
        return hash.value == 0 ? 1 : hash.value
    }

    /// Whether a post with `fingerprint` was answered as stored.
    func contains(_ fingerprint: UInt64) -> Bool {
        slots.withLock { $0[Int(truncatingIfNeeded: fingerprint) & mask] == fingerprint }
    }

    /// Notes that a post with `fingerprint` was answered as stored.
    func insert(_ fingerprint: UInt64) {
        slots.withLock { $0[Int(truncatingIfNeeded: fingerprint) & mask] = fingerprint }
    }
}
