import Foundation
import IAPCore

/// The customers' histories this server read lately on PostgreSQL, each with the version of the customer's digest row
/// it was read at, and who owns the original transactions it recorded or read. Apps post every transaction again at
/// each launch, one customer's in a burst: the read of a re-post offers the history it holds for the owner it expects,
/// and PostgreSQL sends the records only when the row's version moved (every write of a customer's records bumps it,
/// under the row's lock: ``SQLStorage/holdDigest(of:db:)``). Never trusted beyond that check: the owner, the claim and
/// the stored document are read from the database every time.
///
/// Bounded: a full table gives up an entry (the first in its hash order, which is as good as any) for each new one; a
/// miss costs the read it would have saved, nothing else.
final class HistoryCache: Sendable {
    /// What a re-post read may skip: the history `digest` as read while the customer's row was at `version`.
    struct Offer: Sendable {
        let customer: String
        let version: Int64
        let digest: CustomerDigest
    }

    private struct OriginalKey: Hashable {
        let bundleID: String
        let originalTransactionID: String
    }

    private struct State {
        var histories: [CustomerKey: (version: Int64, digest: CustomerDigest)] = [:]
        var owners: [OriginalKey: String] = [:]
        var hits = 0
    }

    private let state = Locked(State())
    private let historyLimit: Int
    private let ownerLimit: Int

    /// Room for `histories` customers' histories and `owners` original transactions' owners.
    init(histories: Int = 8_192, owners: Int = 65_536) {
        historyLimit = histories
        ownerLimit = owners
    }

    /// The history to offer a read of a post of `originalTransactionID`, nil when this server holds none of the
    /// customer expected to own it: the claimant (the read answers a claimed post only when they own it), else the
    /// owner last seen here, else `implicitOwner` (who owns a purchase nobody claimed until a login moves it). So the
    /// first read of an app's launch remembers its customer's history, and the re-posts of their other purchases that
    /// follow it are offered that history, wherever they were recorded.
    func offer(bundleID: String, originalTransactionID: String, claimant: String?, implicitOwner: String) -> Offer? {
        state.withLock { state in
            let owner =
                claimant ?? state.owners[OriginalKey(bundleID: bundleID, originalTransactionID: originalTransactionID)]
                ?? implicitOwner
            guard let held = state.histories[CustomerKey(bundleID: bundleID, id: owner)] else { return nil }
            return Offer(customer: owner, version: held.version, digest: held.digest)
        }
    }

    /// Notes that the database kept `offer` (its row was still at the offered version).
    func taken() { state.withLock { $0.hits += 1 } }

    /// How many offers the database kept since this cache began (for tests and metrics).
    var hits: Int { state.withLock { $0.hits } }

    /// Remembers `digest`, read while `customer`'s digest row was at `version`.
    func remember(_ digest: CustomerDigest, of customer: CustomerKey, at version: Int64) {
        state.withLock { state in
            if state.histories.count >= historyLimit, state.histories[customer] == nil {
                state.histories.remove(at: state.histories.startIndex)
            }
            state.histories[customer] = (version, digest)
        }
    }

    /// Remembers that `customer` owns `originalTransactionID` (as a write or a read found).
    func noteOwner(_ customer: String, bundleID: String, originalTransactionID: String) {
        let key = OriginalKey(bundleID: bundleID, originalTransactionID: originalTransactionID)
        state.withLock { state in
            guard state.owners[key] != customer else { return }
            if state.owners.count >= ownerLimit, state.owners[key] == nil {
                state.owners.remove(at: state.owners.startIndex)
            }
            state.owners[key] = customer
        }
    }
}
