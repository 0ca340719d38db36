import Foundation

extension Date {
    /// The largest magnitude of a moment in milliseconds: 2^53 (about 285,000 years either side of 1970), the range in
    /// which a double holds every whole millisecond.
    package static let maximumMillisecondsSince1970: Int64 = 9_007_199_254_740_992

    /// This moment in whole milliseconds since 1970, rounded to the nearest millisecond: the one conversion IAPKit
    /// makes wherever a date becomes epoch milliseconds (signed documents, storage, API answers, tokens), so a moment
    /// written in two places reads the same in both. Clamped to ±2^53 ms, so no date, however far out, traps it.
    package var millisecondsSince1970: Int64 {
        let millis = (timeIntervalSince1970 * 1000).rounded()
        guard !millis.isNaN else { return 0 }
        let limit = Double(Self.maximumMillisecondsSince1970)
        return Int64(min(max(millis, -limit), limit))
    }

    /// The moment `milliseconds` after 1970 began: the one conversion back from epoch milliseconds.
    package init(millisecondsSince1970 milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
