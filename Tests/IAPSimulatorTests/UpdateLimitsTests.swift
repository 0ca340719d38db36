import Foundation
import IAPSimulator
import IAPTestSupport
import Testing

/// `Transaction.updates` listeners are bounded: per account (the oldest ends), in all (a new one is refused), and in
/// how far one may fall behind (it ends, and reconnecting delivers the unfinished transactions again).
@Suite struct UpdateLimitsTests {
    func store(_ limits: AppStoreSimulator.UpdateLimits) throws -> AppStoreSimulator {
        try AppStoreSimulator(
            catalog: FloristCatalog.catalog, configuration: SimulatorConfiguration(bundleID: "com.example.florist"),
            pki: SimulatorTestKeys.pki, updateLimits: limits)
    }

    @Test func aListenerThatFallsBehindIsEndedAndResumesFromUnfinished() async throws {
        let store = try store(.init(perAccount: 8, total: 16, buffer: 4))
        try store.createAccount("ana")
        _ = try store.purchase(FloristCatalog.flowers, account: "ana")  // unfinished
        let slow = try store.transactionUpdates(account: "ana")
        for _ in 0..<10 { _ = try store.purchase("com.example.florist.installation", account: "ana") }
        var received: [String] = []
        for await transaction in slow { received.append(transaction.transactionID) }
        // The unfinished purchase (read when asked for), then the first four live ones; then the stream ended.
        #expect(received.count == 5, "\(received)")
        #expect(store.updateListenerCount == 0)
        // Reconnecting gives every unfinished transaction again.
        var again = try store.transactionUpdates(account: "ana").makeAsyncIterator()
        var redelivered = 0
        for _ in 0..<11 where await again.next() != nil { redelivered += 1 }
        #expect(redelivered == 11)
    }

    @Test func listenersAreCappedPerAccountAndInAll() async throws {
        let store = try store(.init(perAccount: 2, total: 3, buffer: 8))
        try store.createAccount("ana")
        try store.createAccount("bob")
        let first = try store.transactionUpdates(account: "ana")
        let second = try store.transactionUpdates(account: "ana")
        let third = try store.transactionUpdates(account: "ana")
        // The third of ana's ended her first.
        var iterator = first.makeAsyncIterator()
        #expect(await iterator.next() == nil)
        #expect(store.updateListenerCount == 2)
        let bobs = try store.transactionUpdates(account: "bob")
        #expect(store.updateListenerCount == 3)
        #expect(throws: SimulatorError.self) { _ = try store.transactionUpdates(account: "bob") }
        withExtendedLifetime((second, third, bobs)) {}
    }
}
