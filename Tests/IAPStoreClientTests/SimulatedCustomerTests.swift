import IAPStoreClientTesting
import Testing

/// The simulated person at the purchase sheet: holding a purchase and letting it go never loses a release.
@Suite struct SimulatedCustomerTests {
    @Test func aReleaseBeforeTheHeldPurchaseReachesItsSheetLetsItGoOn() async {
        let customer = SimulatedCustomer()
        customer.holdNextPurchase()
        customer.release()  // the purchase has started but not reached its sheet yet (a slow network)
        #expect(await customer.nextSheet() == .confirm)
    }

    @Test func aHeldPurchaseWaitsUntilReleasedThenTakesTheQueuedAction() async {
        let customer = SimulatedCustomer()
        customer.holdNextPurchase()
        customer.willAct(.cancel)
        let sheet = Task { await customer.nextSheet() }
        try? await Task.sleep(for: .milliseconds(20))
        customer.release()
        #expect(await sheet.value == .cancel)
        #expect(await customer.nextSheet() == .confirm, "only the next purchase is held")
    }
}
