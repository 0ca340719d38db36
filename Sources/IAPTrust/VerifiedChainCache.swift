import Foundation
import Synchronization

/// A bounded, thread-safe memory of chains already verified, keyed by the exact certificate bytes.
///
/// The same few chains sign millions of documents. Once a chain is verified, a document signed by it only needs its
/// own signature checked, as long as the validation time falls inside the window where every certificate of the chain
/// is valid (the other rules of the chain do not depend on time). When full, the oldest entry is dropped.
final class VerifiedChainCache: Sendable {
    struct Key: Hashable, Sendable {
        let bytes: [UInt8]

        /// A key that cannot collide between different splits of the same bytes: each piece is length-prefixed.
        init(selector: LeafSelector, certificates: [ArraySlice<UInt8>]) {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(certificates.reduce(16) { $0 + $1.count + 4 })
            func appendPiece(_ piece: ArraySlice<UInt8>) {
                let count = UInt32(truncatingIfNeeded: piece.count)
                bytes.append(contentsOf: [
                    UInt8(count >> 24), UInt8((count >> 16) & 0xff), UInt8((count >> 8) & 0xff), UInt8(count & 0xff),
                ])
                bytes.append(contentsOf: piece)
            }
            switch selector {
            case .first: appendPiece([0])
            case .issuerAndSerialNumber(let der): appendPiece([1] + der)
            }
            for certificate in certificates { appendPiece(certificate) }
            self.bytes = bytes
        }
    }

    struct Entry: Sendable {
        let verification: ChainVerification
        /// The latest notBefore and the earliest notAfter of the chain's certificates.
        let validFrom: Date
        let validUntil: Date
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var ring: [Key?]
        var next = 0
    }

    private let state: Mutex<State>
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        self.state = Mutex(State(ring: Array(repeating: nil, count: max(1, capacity))))
    }

    /// The cached verification for this key if it holds at `time`.
    func lookup(_ key: Key, at time: Date) -> ChainVerification? {
        state.withLock { state in
            guard let entry = state.entries[key], entry.validFrom <= time, time <= entry.validUntil else {
                return nil
            }
            return entry.verification
        }
    }

    func insert(_ key: Key, _ entry: Entry) {
        state.withLock { state in
            if state.entries.updateValue(entry, forKey: key) != nil { return }
            if let evicted = state.ring[state.next] {
                state.entries[evicted] = nil
            }
            state.ring[state.next] = key
            state.next = (state.next + 1) % state.ring.count
        }
    }

    var count: Int { state.withLock { $0.entries.count } }
}
