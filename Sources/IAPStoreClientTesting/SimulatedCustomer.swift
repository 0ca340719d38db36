import IAPCore
import IAPStoreClient
import Synchronization

/// The person and the network around a simulated device: what they do at the next purchase sheet, and whether the
/// device is offline. Both simulator backends consult it, so tests (and the terminal example) can play every flow
/// StoreKit's own testing offers.
public final class SimulatedCustomer: Sendable {
    /// What the customer does at a purchase sheet.
    public enum SheetAction: Sendable, Hashable {
        /// Confirms (the default).
        case confirm
        /// Dismisses the sheet.
        case cancel
        /// Must act outside the app (strong customer authentication): the purchase waits.
        case interrupt
    }

    private struct State {
        var actions: [SheetAction] = []
        var offline = false
        var held: [CheckedContinuation<Void, Never>] = []
        var holdNext = false
        /// Closed by ``holdNextPurchase()`` and opened by ``release()``: a purchase that took the hold waits only
        /// while it is closed, so a release that comes before the purchase reaches its sheet is not lost.
        var gateClosed = false
        var receipt: [UInt8]?
        var receiptOnlyFromRefresh = false
        var signIns = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// The customer will do `action` at the next purchase sheet (queued in order).
    public func willAct(_ action: SheetAction) { state.withLock { $0.actions.append(action) } }

    /// Whether every call to the store fails with `networkError` (the updates stream stays open, as StoreKit's does).
    public var isOffline: Bool {
        get { state.withLock { $0.offline } }
        set { state.withLock { $0.offline = newValue } }
    }

    /// The next purchase waits at its sheet until ``release()``: a purchase that is still in progress.
    public func holdNextPurchase() {
        state.withLock { state in
            state.holdNext = true
            state.gateClosed = true
        }
    }

    /// Lets held purchases go on, including one that has started but not yet reached its sheet.
    public func release() {
        let held = state.withLock { state in
            defer { state.held = [] }
            state.holdNext = false
            state.gateClosed = false
            return state.held
        }
        for continuation in held { continuation.resume() }
    }

    /// The action for the purchase now starting, after waiting when held.
    package func nextSheet() async -> SheetAction {
        let hold = state.withLock { state in
            defer { state.holdNext = false }
            return state.holdNext
        }
        if hold {
            await withCheckedContinuation { continuation in
                let waits = state.withLock { state in
                    if state.gateClosed { state.held.append(continuation) }
                    return state.gateClosed
                }
                if !waits { continuation.resume() }
            }
        }
        return state.withLock { $0.actions.isEmpty ? .confirm : $0.actions.removeFirst() }
    }

    /// Whether the device holds only the receipts the store gave it (a fresh install, as on a device, where the
    /// receipt appears after a purchase or a restore's sync); otherwise the simulator signs the current one at each
    /// read.
    public var receiptOnlyFromRefresh: Bool {
        get { state.withLock { $0.receiptOnlyFromRefresh } }
        set { state.withLock { $0.receiptOnlyFromRefresh = newValue } }
    }

    /// How many times the app synced with the App Store (`AppStore.sync()`): each is a sign-in prompt on a device,
    /// which Apple allows only on the customer's request.
    public var signIns: Int { state.withLock { $0.signIns } }

    func countSignIn() { state.withLock { $0.signIns += 1 } }

    /// The receipt on the device's disk: the last one the store gave it.
    var receiptOnDisk: [UInt8]? {
        get { state.withLock { $0.receipt } }
        set { state.withLock { $0.receipt = newValue } }
    }

    func checkOnline() throws(StoreError) {
        if isOffline { throw StoreError(.networkError, "the device is offline") }
    }
}
