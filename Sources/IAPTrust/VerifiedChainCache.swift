import Foundation
import IAPCore

/// A bounded, thread-safe memory of chains already verified, keyed by the exact certificate bytes.
///
/// The same few chains sign millions of documents. Once a chain is verified, a document signed by it only needs its
/// own signature checked, as long as the validation time falls inside the window where every certificate of the chain
/// is valid (the other rules of the chain do not depend on time). When full, the oldest entry is dropped.
final class VerifiedChainCache: Sendable {
    /// The exact bytes of the presented certificates and of the signer's identifier.
    ///
    /// A lookup key refers to the caller's bytes without copying them; ``owned()`` copies them for storage, so the
    /// cache never keeps a caller's buffers alive. Hashing samples each certificate (its length and its last 32
    /// bytes, which are signature bytes) instead of feeding every byte to the hasher: measured, hashing whole chains
    /// cost a twentieth of a receipt verification. Equality still compares every byte.
    struct Key: Hashable, Sendable {
        let selector: ArraySlice<UInt8>
        let certificates: [ArraySlice<UInt8>]

        init(selector: LeafSelector, certificates: [ArraySlice<UInt8>]) {
            switch selector {
            case .first: self.selector = []
            case .issuerAndSerialNumber(let der): self.selector = der
            }
            self.certificates = certificates
        }

        private init(selector: ArraySlice<UInt8>, certificates: [ArraySlice<UInt8>]) {
            self.selector = selector
            self.certificates = certificates
        }

        /// A copy holding its own bytes.
        func owned() -> Key {
            Key(selector: Array(selector)[...], certificates: certificates.map { Array($0)[...] })
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(certificates.count)
            selector.withUnsafeBytes { hasher.combine(bytes: $0) }
            for certificate in certificates {
                hasher.combine(certificate.count)
                certificate.suffix(32).withUnsafeBytes { hasher.combine(bytes: $0) }
            }
        }

        static func == (lhs: Key, rhs: Key) -> Bool {
            guard lhs.certificates.count == rhs.certificates.count, same(lhs.selector, rhs.selector) else {
                return false
            }
            for (left, right) in zip(lhs.certificates, rhs.certificates) where !same(left, right) { return false }
            return true
        }

        private static func same(_ lhs: ArraySlice<UInt8>, _ rhs: ArraySlice<UInt8>) -> Bool {
            lhs.count == rhs.count
                && lhs.withUnsafeBytes { l in
                    rhs.withUnsafeBytes { r in l.count == 0 || memcmp(l.baseAddress!, r.baseAddress!, l.count) == 0 }
                }
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

    private let state: Locked<State>
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        self.state = Locked(State(ring: Array(repeating: nil, count: max(1, capacity))))
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
        let key = key.owned()
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
