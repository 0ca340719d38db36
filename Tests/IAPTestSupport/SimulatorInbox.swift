public import IAPSimulator
import Synchronization

/// Collects what the simulator sends.
public final class SimulatorInbox: Sendable {
    private let queue = Mutex<[SimulatorNotification]>([])

    public init(_ store: AppStoreSimulator) {
        store.addNotificationSink { [self] notification in queue.withLock { $0.append(notification) } }
    }

    /// What arrived since the last call, in order.
    public func take() -> [SimulatorNotification] {
        queue.withLock { queue in
            defer { queue.removeAll() }
            return queue
        }
    }
}
