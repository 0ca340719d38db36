import Foundation
import IAPCore
import IAPEntitlements
import Testing

@testable import IAPServer

extension StoredPostHintsTests {
    /// A new purchase of a customer whose history this server holds (read or written here, at the version of their
    /// digest row it is exact at) is written by the one statement without PostgreSQL sending their records: the server
    /// adds the new record to the history it holds. Never when another server wrote in between (the version moved),
    /// nor for a new version of a purchase the history holds: every answer is the other server's, which reads the rows.
    @Test func aNewPurchaseOfARememberedCustomerIsWrittenWithoutReadingTheirRecords() async throws {
        guard let (_, first, second) = try await Self.twoServers() else { return }
        let built = { first.histories?.writeHits ?? 0 }
        /// Posts `transaction` for `claimant` to `first`, then the same to `second` (which finds it stored and reads
        /// the rows): the two answers agree. Answers the transaction ids of the history.
        @discardableResult
        func post(_ claimant: String?, _ transaction: StoredTransaction) async throws -> [String] {
            let batch = PurchaseBatch(claimant: claimant, transactions: [transaction])
            let answer = try await first.record(batch)
            #expect(answer == (try await second.record(batch)), "\(transaction.transactionID)")
            guard case .recorded(_, let digest) = answer else { return [] }
            return digest.history.history.records.map(\.transactionID)
        }
        // The first purchase: nothing held. The next ones build on what the write before answered, in the rows' order.
        #expect(try await post("ana", Conformance.transaction("k5", signed: 1)) == ["k5"])
        #expect(built() == 0)
        #expect(try await post("ana", Conformance.transaction("k2", signed: 1)) == ["k2", "k5"])
        #expect(try await post("ana", Conformance.transaction("k7", signed: 1)) == ["k2", "k5", "k7"])
        #expect(built() == 2)

        // Another server writes for ana: the version moved, so the rows are sent.
        _ = try await second.record(
            PurchaseBatch(claimant: "ana", transactions: [Conformance.transaction("k1", signed: 1)]))
        #expect(try await post("ana", Conformance.transaction("k9", signed: 1)) == ["k1", "k2", "k5", "k7", "k9"])
        #expect(built() == 2)
        // ... and what that write answered is held again.
        #expect(
            try await post("ana", Conformance.transaction("k3", signed: 1)) == ["k1", "k2", "k3", "k5", "k7", "k9"])
        #expect(built() == 3)

        // A newer version of a purchase the history holds (a refund): its record replaced, read from the rows.
        let refunded = Conformance.transaction("k2", signed: 5, revoked: true)
        #expect(try await post("ana", refunded).count == 6)
        #expect(built() == 3)
        let records = try await first.records(of: CustomerKey(bundleID: Conformance.bundle, id: "ana"))
        #expect(records.transactions.first { $0.transactionID == "k2" }?.record.revocation != nil)

        // A post nobody claims, of a purchase whose made-up owner this server holds: built on it too.
        #expect(try await post(nil, Conformance.transaction("s1", signed: 1, token: "tok")) == ["s1"])
        #expect(try await post(nil, Conformance.transaction("s2", signed: 1, token: "tok")) == ["s1", "s2"])
        #expect(built() == 4)
        try await first.shutdown()
        try await second.shutdown()
    }

    /// Two customers whose ids are the same text to Swift but not to PostgreSQL ("café" with "é" as one scalar and as
    /// "e" and an accent; a backend may name customers either way) keep their own histories: what the server holds of
    /// one is never offered for the other, even when their digest rows stand at the same version.
    @Test func customerIdsThatDifferOnlyInTheirBytesKeepTheirOwnHistories() async throws {
        guard let (_, first, second) = try await Self.twoServers() else { return }
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(composed == decomposed && !SQLStorage.same(composed, decomposed))
        func post(_ claimant: String, _ id: String) async throws -> [String] {
            let batch = PurchaseBatch(claimant: claimant, transactions: [Conformance.transaction(id, signed: 1)])
            let answer = try await first.record(batch)
            #expect(answer == (try await second.record(batch)), "\(id)")
            guard case .recorded(let owners, let digest) = answer else { return [] }
            #expect(owners.count == 1 && owners.allSatisfy { SQLStorage.same($0, claimant) })
            return digest.history.history.records.map(\.transactionID)
        }
        #expect(try await post(composed, "c1") == ["c1"])
        #expect(try await post(decomposed, "d1") == ["d1"])
        #expect(try await post(composed, "c2") == ["c1", "c2"])
        #expect(try await post(decomposed, "d2") == ["d1", "d2"])
        try await first.shutdown()
        try await second.shutdown()
    }
}
