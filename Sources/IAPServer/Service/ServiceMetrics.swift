import Foundation
import Metrics
public import Prometheus
import Synchronization

/// The server's metrics, in Prometheus text at `GET /metrics`: requests by route, method and status with latency
/// histograms (Hummingbird's metrics middleware), verifications by document and verdict, notifications by type and
/// outcome.
///
/// The process's swift-metrics system is bootstrapped with this registry the first time it is used (a process can
/// bootstrap swift-metrics once; an app that embeds the server and bootstraps its own gets empty `/metrics`).
public enum ServerMetrics {
    /// The registry `/metrics` prints.
    public static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // Prometheus names allow letters, digits and `_`; swift-metrics labels use dots (`http.route`).
        factory.nameAndLabelSanitizer = { name, labels in
            (sanitized(name), labels.map { (sanitized($0.0), $0.1) })
        }
        MetricsSystem.bootstrap(factory)
        return registry
    }()

    /// The metrics text.
    static func text() -> [UInt8] { registry.emitToBuffer() }

    /// Counts one document checked: `document` is transaction, renewal, notification or receipt; `verdict` is
    /// valid, refused (a check failed) or malformed (not a document at all).
    static func verification(_ document: String, _ verdict: String) {
        counter("iapkit_verifications_total", ("document", document), ("verdict", verdict)).increment()
    }

    /// Counts one notification received: its type and whether it was applied, a duplicate or refused.
    static func notification(_ type: String, _ outcome: String) {
        counter("iapkit_notifications_total", ("type", type), ("outcome", outcome)).increment()
    }

    /// Counts one read of a re-post on PostgreSQL by where the customer's history came from: `remembered` (the
    /// server's ``HistoryCache``, its version checked) or `read` (sent by the database).
    static func rePostRead(_ history: String) {
        counter("iapkit_repost_reads_total", [("history", history)]).increment()
    }

    /// Counts one post written by PostgreSQL's one statement by where the customer's history came from: `remembered`
    /// (the server's ``HistoryCache`` with the record added, its version checked) or `read` (sent by the database).
    /// Customers with a kept digest are not counted.
    static func writeHistory(_ history: String) {
        counter("iapkit_write_histories_total", [("history", history)]).increment()
    }

    /// Counts one statement writing several posts of new purchases on PostgreSQL and the purchases it carried; a batch
    /// PostgreSQL refused as a whole (its posts then went one by one) also counts as failed.
    static func writeBatch(purchases: Int, failed: Bool) {
        if failed {
            counter("iapkit_write_batches_failed_total", []).increment()
            return
        }
        counter("iapkit_write_batches_total", []).increment()
        counter("iapkit_write_batched_purchases_total", []).increment(by: Int64(purchases))
    }

    /// Counts one statement reading re-posts on PostgreSQL and the lookups it carried (``Coalescer``): their ratio is
    /// the mean batch.
    static func rePostBatch(lookups: Int) {
        counter("iapkit_repost_batches_total", []).increment()
        counter("iapkit_repost_batched_lookups_total", []).increment(by: Int64(lookups))
    }

    /// Counts one webhook delivery attempt by outcome: delivered, retry (failed, tried again later) or failed (given
    /// up).
    static func delivery(_ outcome: String) {
        counter("iapkit_webhook_attempts_total", [("outcome", outcome)]).increment()
    }

    /// The counters made so far, by label and dimension values: making one asks the registry under its lock and
    /// sanitizes every name, which at load cost more than counting.
    private static let counters = Mutex<[[String]: Metrics.Counter]>([:])

    private static func counter(_ label: String, _ first: (String, String), _ second: (String, String))
        -> Metrics.Counter
    {
        counter(label, [first, second])
    }

    private static func counter(_ label: String, _ dimensions: [(String, String)]) -> Metrics.Counter {
        let key = [label] + dimensions.map(\.1)
        if let known = counters.withLock({ $0[key] }) { return known }
        _ = registry
        let made = Metrics.Counter(label: label, dimensions: dimensions)
        counters.withLock { $0[key] = made }
        return made
    }

    private static func sanitized(_ name: String) -> String {
        String(name.map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" })
    }
}
