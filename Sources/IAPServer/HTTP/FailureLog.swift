import Dispatch
import IAPCore

/// Keeps one failure repeated by every request (a database outage answers each with 503) from flooding the log:
/// the first of each code is logged, then at most one line a second for it, telling how many went unlogged since.
/// Failures of other codes are never held back by it. Those held back at the end of a burst (an outage's last
/// second) are told by a summary line once their interval has passed, so no count waits for the next failure.
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
    private let sleep: @Sendable (UInt64) async -> Void
    private let summary: (@Sendable (_ code: String, _ unlogged: Int) -> Void)?

    /// - Parameters:
    ///   - interval: nanoseconds between two lines of one code.
    ///   - now: a monotonic clock in nanoseconds (an input, so tests decide the time).
    ///   - sleep: waits the given nanoseconds (an input too).
    ///   - summary: logs how many failures of a code went unlogged since its last line, once its interval has
    ///     passed without another line (nil: they are told with that code's next line only).
    init(
        interval: UInt64 = 1_000_000_000,
        now: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds },
        sleep: @escaping @Sendable (UInt64) async -> Void = { try? await Task.sleep(nanoseconds: $0) },
        summary: (@Sendable (_ code: String, _ unlogged: Int) -> Void)? = nil
    ) {
        self.interval = interval
        self.now = now
        self.sleep = sleep
        self.summary = summary
    }

    /// Records one failure of `code` and says whether to log it.
    func admit(_ code: String) -> Verdict {
        let time = now()
        let (verdict, summarizeIn): (Verdict, UInt64?) = windows.withLock { windows in
            guard var window = windows[code], time &- window.loggedAt < interval else {
                let unlogged = windows[code]?.unlogged ?? 0
                if windows.count >= 64 { windows.removeAll(keepingCapacity: true) }  // codes are few; bounded anyway
                windows[code] = Window(loggedAt: time, unlogged: 0)
                return (.log(unlogged: unlogged), nil)
            }
            window.unlogged += 1
            windows[code] = window
            // The first held back since the last line: a summary is due when the interval ends.
            return (.quiet, window.unlogged == 1 ? window.loggedAt &+ interval &- time : nil)
        }
        if let summarizeIn, summary != nil {
            Task { [self] in
                await sleep(summarizeIn)
                summarize(code)
            }
        }
        return verdict
    }

    /// Logs the summary of `code`'s failures held back since its last line, if its interval has passed and no line
    /// told them meanwhile; the summary counts as the code's line.
    func summarize(_ code: String) {
        let time = now()
        let unlogged: Int? = windows.withLock { windows in
            guard let window = windows[code], window.unlogged > 0, time &- window.loggedAt >= interval else {
                return nil
            }
            defer { windows[code] = Window(loggedAt: time, unlogged: 0) }
            return window.unlogged
        }
        if let unlogged { summary?(code, unlogged) }
    }
}
