import Foundation
import IAPCore
import IAPEntitlements
import IAPTestSupport
import Testing

@testable import IAPServer

/// Two instances on one PostgreSQL database writing the same customer at once: a customer with a digest (a long
/// history) keeps every purchase and consumption in it, whichever instance and whichever way (the one statement, the
/// writer's transaction, a consumption) wrote them, and however the writes interleaved; consumptions in the order of
/// their rows.
struct ConcurrentDigestTests {
    typealias Conformance = StorageConformanceTests

    /// Two servers' storage on a fresh database, and Bo, who bought 70 times through the second: a history long
    /// enough to keep a digest. Nil (noted) without PostgreSQL.
    static func bosDigest() async throws -> (first: SQLStorage, second: SQLStorage, bo: CustomerKey)? {
        guard let (_, first, second) = try await StoredPostHintsTests.twoServers() else { return nil }
        let bo = CustomerKey(bundleID: Conformance.bundle, id: "bo")
        for index in 0..<70 {
            _ = try await second.record(
                PurchaseBatch(claimant: "bo", transactions: [Conformance.transaction("b\(index)", signed: 1)]))
        }
        #expect(try await first.digest(of: bo).version > 0)
        return (first, second, bo)
    }

    @Test func concurrentWritersOfOneCustomerLoseNothingFromTheDigest() async throws {
        guard let (first, second, bo) = try await Self.bosDigest() else { return }

        // Each round: both instances post a new purchase of Bo's (one transaction: the one statement), a pair (the
        // writer's transaction) and a consumption, all at once.
        let rounds = 12
        try await withThrowingTaskGroup(of: Void.self) { group in
            for round in 0..<rounds {
                for (name, storage) in [("f", first), ("s", second)] {
                    group.addTask {
                        _ = try await storage.record(
                            PurchaseBatch(
                                claimant: "bo",
                                transactions: [Conformance.transaction("\(name)\(round)", signed: 1)]))
                    }
                    group.addTask {
                        _ = try await storage.record(
                            PurchaseBatch(
                                claimant: "bo",
                                transactions: [
                                    Conformance.transaction("\(name)\(round)p", signed: 1),
                                    Conformance.transaction("\(name)\(round)q", signed: 1),
                                ]))
                    }
                    group.addTask {
                        let use = ConsumptionRecord(
                            productID: "p.coins", quantity: 1, date: Date(timeIntervalSince1970: Double(round)),
                            id: "\(name)\(round)c")
                        _ = try await storage.record(consumption: use, for: bo)
                    }
                }
            }
            try await group.waitForAll()
        }

        let stored = try await first.records(of: bo)
        let expected = Set(stored.transactions.map(\.transactionID))
        #expect(expected.count == 70 + rounds * 2 * 3)
        for storage in [first, second] {
            let digest = try await storage.digest(of: bo)
            #expect(Set(digest.history.history.records.map(\.transactionID)) == expected)
            // In the same order as their rows: one customer's consumptions take sequence numbers in turn.
            #expect(digest.history.history.consumptions.map(\.id) == stored.consumptions.map(\.id))
            #expect(stored.consumptions.count == rounds * 2)
        }
        try await first.shutdown()
        try await second.shutdown()
    }

    /// Renewal information alone (what a notification may bring) changes its purchase's owner's history: their
    /// digest does not stand without it.
    @Test func renewalInformationAloneReachesTheOwnersDigest() async throws {
        guard let (first, second, bo) = try await Self.bosDigest() else { return }
        let renewal = StoredRenewal(
            bundleID: Conformance.bundle, originalTransactionID: "b3",
            signedDate: Date(timeIntervalSince1970: 1_700_000_002), document: "renewal-b3",
            record: RenewalRecord(originalTransactionID: "b3", productID: "p.lifetime", source: .signedTransaction))
        _ = try await second.record(PurchaseBatch(claimant: nil, transactions: [], renewals: [renewal]))
        for storage in [first, second] {
            #expect(try await storage.digest(of: bo).history.history.renewals.map(\.originalTransactionID) == ["b3"])
        }
        try await first.shutdown()
        try await second.shutdown()
    }
}
