import Foundation
import IAPCore
import IAPEntitlements

/// The customers' histories this server read lately on PostgreSQL, each with the version of the customer's digest row
/// it was read at, and who owns the original transactions it recorded or read. Apps post every transaction again at
/// each launch, one customer's in a burst: the read of a re-post offers the history it holds for the owner it expects,
/// and PostgreSQL sends the records only when the row's version moved (every write of a customer's records bumps it,
/// under the row's lock: ``SQLStorage/holdDigest(of:db:)``). Never trusted beyond that check: the owner, the claim and
/// the stored document are read from the database every time.
///
/// Bounded by what the histories hold, not by how many there are: most customers have a purchase or a few, and a
/// count of histories would either waste the room on them or let long ones take gigabytes. Each history weighs its
/// kept records and renewal records (one at least); a table at its limit gives up entries (the first in its hash
/// order, which is as good as any) until the new one fits. A miss costs the read it would have saved, nothing else.
final class HistoryCache: Sendable {
    /// What a re-post read or a write may skip: the history `digest` as read while the customer's row was at `version`.
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
        /// What the histories weigh together (``weight(of:)``).
        var weight = 0
        var owners: [OriginalKey: String] = [:]
        var hits = 0
        var writeHits = 0
    }

    private let state = Locked(State())
    private let recordLimit: Int
    private let ownerLimit: Int

    /// Room for histories of `records` records in all and for `owners` original transactions' owners. The default
    /// holds 65,536 records, about 45 MB (an instance grew 14 MB for 20,000 records; docs/scale.md).
    init(records: Int = 65_536, owners: Int = 65_536) {
        recordLimit = records
        ownerLimit = owners
    }

    /// What a history weighs against the limit: its kept records and renewal records, one at least.
    static func weight(of digest: CustomerDigest) -> Int {
        max(1, digest.history.keptCount + digest.history.history.renewals.count)
    }

    /// How many histories it holds, and what they weigh (for tests).
    var held: (histories: Int, weight: Int) { state.withLock { ($0.histories.count, $0.weight) } }

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
            // The entry's own id, byte for byte: a dictionary takes canonically equivalent ids for one key.
            guard let index = state.histories.index(forKey: CustomerKey(bundleID: bundleID, id: owner)),
                SQLStorage.same(state.histories[index].key.id, owner)
            else { return nil }
            let held = state.histories[index].value
            return Offer(customer: owner, version: held.version, digest: held.digest)
        }
    }

    /// Notes that the database kept `offer` (its row was still at the offered version).
    func taken() { state.withLock { $0.hits += 1 } }

    /// How many offers the database kept since this cache began (for tests and metrics).
    var hits: Int { state.withLock { $0.hits } }

    /// Notes that a write built on an offer (the database sent no records: the row was at the offered version).
    func takenByWrite() { state.withLock { $0.writeHits += 1 } }

    /// How many writes built on an offer since this cache began (for tests).
    var writeHits: Int { state.withLock { $0.writeHits } }

    /// Remembers `digest`, read while `customer`'s digest row was at `version`, unless a later version is held (a read
    /// and a write of one customer finishing out of order).
    func remember(_ digest: CustomerDigest, of customer: CustomerKey, at version: Int64) {
        let weight = Self.weight(of: digest)
        state.withLock { state in
            if let held = state.histories[customer], held.version > version { return }
            if let old = state.histories.removeValue(forKey: customer) { state.weight -= Self.weight(of: old.digest) }
            guard weight <= recordLimit else { return }
            while state.weight + weight > recordLimit, let first = state.histories.first {
                state.histories.remove(at: state.histories.startIndex)
                state.weight -= Self.weight(of: first.value.digest)
            }
            state.histories[customer] = (version, digest)
            state.weight += weight
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
