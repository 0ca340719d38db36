import Foundation
import IAPCore

/// The last few JWS headers seen, by their exact base64url text.
///
/// Every document signed by one chain carries the same header (algorithm and the three certificates, about 3.5 KB of
/// base64url). Decoding it, parsing its JSON and decoding the certificates again measured as a tenth of a steady-state
/// verification; comparing bytes costs a hundredth of that. Bounded, oldest dropped first, safe to share.
final class JWSHeaderCache: Sendable {
    private struct Entry {
        let text: [UInt8]
        let header: JWSHeader
    }

    private struct State {
        var entries: [Entry] = []
        var next = 0
    }

    private let state = Locked(State())
    private let capacity: Int

    init(capacity: Int = 8) {
        self.capacity = max(1, capacity)
    }

    /// The header whose encoded text is `text`, decoding and remembering it when it is new.
    func header(for text: ArraySlice<UInt8>, decode: () throws(SignedDataParsingError) -> JWSHeader)
        throws(SignedDataParsingError) -> JWSHeader
    {
        let found = state.withLock { state -> JWSHeader? in
            text.withUnsafeBytes { wanted in
                state.entries.first { entry in
                    entry.text.count == wanted.count
                        && entry.text.withUnsafeBytes {
                            memcmp($0.baseAddress!, wanted.baseAddress!, wanted.count) == 0
                        }
                }?.header
            }
        }
        if let found { return found }
        let header = try decode()
        let entry = Entry(text: Array(text), header: header)
        state.withLock { state in
            if state.entries.count < capacity {
                state.entries.append(entry)
            } else {
                state.entries[state.next] = entry
                state.next = (state.next + 1) % capacity
            }
        }
        return header
    }
}
