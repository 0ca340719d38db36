import Foundation
import Synchronization

/// The simulated App Store Server API's rate limit, off until switched on (`PUT /simulator/inapps/rate-limit`), so a
/// client's retries can be exercised: at most `requests` calls in each window of `window` seconds; past that, 429 with
/// Apple's 4290000 and a `Retry-After` of the seconds left in the window.
final class InAppsRateLimit: Sendable {
    struct Setting: Sendable, Equatable {
        var requests: Int
        var window: Int
    }

    private struct State {
        var setting: Setting?
        var windowStart = Date.distantPast
        var count = 0
    }

    private let state = Mutex(State())
    private let clock: @Sendable () -> Date

    init(clock: @escaping @Sendable () -> Date = Date.init) { self.clock = clock }

    var setting: Setting? { state.withLock { $0.setting } }

    /// Switches the limit on with a setting, or off with nil; a new window starts.
    func set(_ setting: Setting?) {
        state.withLock { $0 = State(setting: setting) }
    }

    /// Counts a request: nil when it may go on, else the seconds its caller should wait.
    func admit() -> Int? {
        let now = clock()
        return state.withLock { state -> Int? in
            guard let setting = state.setting else { return nil }
            let window = TimeInterval(setting.window)
            if now.timeIntervalSince(state.windowStart) >= window || now < state.windowStart {
                state.windowStart = now
                state.count = 0
            }
            guard state.count >= setting.requests else {
                state.count += 1
                return nil
            }
            return max(1, Int((window - now.timeIntervalSince(state.windowStart)).rounded(.up)))
        }
    }
}
