import Dispatch
import IAPCore

/// Keeps one failure repeated by every request (a database outage answers each with 503) from flooding the log:
/// the first of each code is logged, then at most one line a second for it, telling how many went unlogged since.
/// Failures of other codes are never held back by it.
final class FailureLog: Sendable {
    /// What to do with one failure: log it (with the count of its code's failures not logged since the last line),
    /// or count it and stay quiet.
    enum Verdict: Equatable {
        case log(unlogged: Int)
        case quiet
    }

    private struct Window {
        var loggedAt: UInt64
        var unlogged: Int
    }

    private let windows = Locked<[String: Window]>([:])
    private let interval: UInt64
    private let now: @Sendable () -> UInt64

    /// - Parameters:
    ///   - interval: nanoseconds between two lines of one code.
    ///   - now: a monotonic clock in nanoseconds (an input, so tests decide the time).
    init(
        interval: UInt64 = 1_000_000_000,
        now: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }
    ) {
        self.interval = interval
        self.now = now
    }

    /// Records one failure of `code` and says whether to log it.
    func admit(_ code: String) -> Verdict {
        let time = now()
        return windows.withLock { windows in
            guard var window = windows[code], time &- window.loggedAt < interval else {
                let unlogged = windows[code]?.unlogged ?? 0
                if windows.count >= 64 { windows.removeAll(keepingCapacity: true) }  // codes are few; bounded anyway
                windows[code] = Window(loggedAt: time, unlogged: 0)
                return .log(unlogged: unlogged)
            }
            window.unlogged += 1
            windows[code] = window
            return .quiet
        }
    }
}
