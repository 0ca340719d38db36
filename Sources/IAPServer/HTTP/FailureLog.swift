import Dispatch
import IAPCore

/// Keeps one failure repeated by every request (a database outage answers each with 503) from flooding the log:
/// the first of each code is logged, then at most one line a second for it, telling how many went unlogged since.
/// Failures of other codes are never held back by it. Those held back at the end of a burst (an outage's last
/// second), which no next line tells, are told by a summary half an interval after the next line was due.
final class FailureLog: Sendable {
    /// What to do with one failure: log it (with the count of its code's failures not logged since the last line),
    /// or count it and stay quiet.
    enum Verdict: Equatable {
        case log(unlogged: Int)
        case quiet
    }

    /// Runs `work` after the given nanoseconds.
    typealias Scheduler = @Sendable (_ nanoseconds: UInt64, _ work: @escaping @Sendable () -> Void) -> Void

    private struct Window {
        var loggedAt: UInt64
        var unlogged: Int
    }

    private let windows = Locked<[String: Window]>([:])
    private let interval: UInt64
    private let now: @Sendable () -> UInt64
    private let schedule: Scheduler
    private let summary: (@Sendable (_ code: String, _ unlogged: Int) -> Void)?

    /// - Parameters:
    ///   - interval: nanoseconds between two lines of one code.
    ///   - now: a monotonic clock in nanoseconds (an input, so tests decide the time).
    ///   - schedule: runs work later (an input too; by default a task that sleeps first).
    ///   - summary: logs how many failures of a code went unlogged since its last line when no line of the code
    ///     followed it (nil: they are told with that code's next line only).
    init(
        interval: UInt64 = 1_000_000_000,
        now: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds },
        schedule: @escaping Scheduler = { nanoseconds, work in
            Task {
                try? await Task.sleep(nanoseconds: nanoseconds)
                work()
            }
        },
        summary: (@Sendable (_ code: String, _ unlogged: Int) -> Void)? = nil
    ) {
        self.interval = interval
        self.now = now
        self.schedule = schedule
        self.summary = summary
    }

    /// Records one failure of `code` and says whether to log it.
    func admit(_ code: String) -> Verdict {
        let time = now()
        let (verdict, summaryDue): (Verdict, (line: UInt64, in: UInt64)?) = windows.withLock { windows in
            guard var window = windows[code], time &- window.loggedAt < interval else {
                let unlogged = windows[code]?.unlogged ?? 0
                if windows.count >= 64 { windows.removeAll(keepingCapacity: true) }  // codes are few; bounded anyway
                windows[code] = Window(loggedAt: time, unlogged: 0)
                return (.log(unlogged: unlogged), nil)
            }
            window.unlogged += 1
            windows[code] = window
            guard window.unlogged == 1 else { return (.quiet, nil) }
            // The first held back since the last line: while failures go on, the next line (due when the interval
            // ends) tells them; half an interval after that, a summary tells them if no line came.
            return (.quiet, (window.loggedAt, window.loggedAt &+ interval &+ interval / 2 &- time))
        }
        if let summaryDue, summary != nil {
            schedule(summaryDue.in) { [self] in summarize(code, after: summaryDue.line) }
        }
        return verdict
    }

    /// Logs the summary of `code`'s failures held back since its line logged at `line`, unless a later line told
    /// them. The next failure is then logged as the line it would have been.
    private func summarize(_ code: String, after line: UInt64) {
        let unlogged: Int? = windows.withLock { windows in
            guard var window = windows[code], window.loggedAt == line, window.unlogged > 0 else { return nil }
            defer {
                window.unlogged = 0
                windows[code] = window
            }
            return window.unlogged
        }
        if let unlogged { summary?(code, unlogged) }
    }
}
