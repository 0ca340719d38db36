import Foundation
import Hummingbird
import IAPCore
import IAPSignedData

/// Notifications this instance refused (a signature that did not verify, an unknown app, too old), newest first: the
/// last ``capacity`` kept in memory only, so a flood of forgeries costs a bounded amount and never reaches storage.
/// What they claim (type, app) was not verified.
final class RefusedNotifications: Sendable {
    struct Entry: Sendable {
        var receivedAt: Date
        var code: String
        var reason: String
        var claimedType: String?
        var claimedSubtype: String?
        var claimedBundleID: String?
        /// The body, cut at ``bodyLimit`` bytes.
        var body: String
    }

    static let capacity = 100
    static let bodyLimit = 65_536

    private let entries = Locked<[Entry]>([])

    func add(body: String, receivedAt: Date, error: ServiceError) {
        var entry = Entry(
            receivedAt: receivedAt, code: error.code, reason: error.reason,
            body: String(decoding: body.utf8.prefix(Self.bodyLimit), as: UTF8.self))
        if let payload = (try? JSONValue(jsonBytes: Array(body.utf8.prefix(Self.bodyLimit))))?["signedPayload"]?
            .stringValue,
            let claims = try? JSONValue(jsonBytes: CompactJWS(payload).payload)
        {
            entry.claimedType = claims["notificationType"]?.stringValue
            entry.claimedSubtype = claims["subtype"]?.stringValue
            entry.claimedBundleID = (claims["data"] ?? claims["summary"] ?? claims["appData"])?["bundleId"]?.stringValue
        }
        entries.withLock { list in
            list.insert(entry, at: 0)
            if list.count > Self.capacity { list.removeLast(list.count - Self.capacity) }
        }
    }

    /// The kept entries, newest first.
    var all: [Entry] { entries.withLock { $0 } }
}

/// `GET /console/notifications`: a page of the log, newest first, and where the next begins.
struct NotificationLogPage: ResponseEncodable {
    struct Item: Encodable {
        var notificationUUID: String
        var bundleId: String?
        var notificationType: String?
        var subtype: String?
        var signedDate: Date?
        var receivedAt: Date
        var originalTransactionId: String?
        var customerId: String?
        /// recorded, answered, nothingToRecord, refused, or absent (stored before the log kept it).
        var outcome: String?
        /// What the server did, in words.
        var summary: String
        var repeats: Int
        /// For a refused one: the error's code.
        var code: String?
    }

    var items: [Item]
    /// The cursor of the next page (`before`), when there may be one.
    var next: String?
    /// Whether the items are this instance's refusals (kept in memory, the last 100) rather than stored ones.
    var refusedOnly: Bool
}

/// `GET /console/notifications/{uuid}`: one stored notification with its body, for the inspector to decode.
struct NotificationLogDetail: ResponseEncodable {
    var notification: NotificationLogPage.Item
    var body: String
}

extension NotificationLogPage.Item {
    init(_ entry: NotificationLogEntry) {
        let notification = entry.notification
        self.init(
            notificationUUID: notification.uuid, bundleId: notification.bundleID,
            notificationType: notification.type, subtype: notification.subtype, signedDate: notification.signedDate,
            receivedAt: notification.receivedAt, originalTransactionId: notification.originalTransactionID,
            customerId: entry.customerID, outcome: notification.effect?.rawValue,
            summary: Self.summary(notification), repeats: notification.repeats)
    }

    init(_ refused: RefusedNotifications.Entry) {
        self.init(
            notificationUUID: "", bundleId: refused.claimedBundleID, notificationType: refused.claimedType,
            subtype: refused.claimedSubtype, receivedAt: refused.receivedAt, outcome: "refused",
            summary: "Refused, nothing recorded: \(refused.reason)", repeats: 0, code: refused.code)
    }

    static func summary(_ notification: StoredNotification) -> String {
        let again =
            notification.repeats == 0
            ? "" : " Sent again \(notification.repeats) time\(notification.repeats == 1 ? "" : "s"), ignored."
        switch notification.effect {
        case .recorded?:
            return "Recorded what it carried (each document kept where newer than the stored one)." + again
        case .answered?:
            return "Recorded its transaction and queued the app's consumption answer for the App Store." + again
        case .nothingToRecord?:
            return "Verified; it carried nothing to record." + again
        case nil:
            return "Recorded before the log kept outcomes." + again
        }
    }
}

extension ValidationService {
    /// The console's notification log of an app (the first served when none is named): stored notifications through
    /// the query's filters, or, with `outcome=refused`, this instance's recent refusals.
    func notificationLog(
        bundleID: String?, outcome: String?, type: String?, subtype: String?, from: Date?, to: Date?,
        customer: String?, before: String?, limit: Int
    ) async throws(ServiceError) -> NotificationLogPage {
        let app = try self.app(bundleID: bundleID).configuration.bundleID
        if outcome == "refused" {
            let items = refusedNotifications.all.filter { entry in
                (entry.claimedBundleID == nil || entry.claimedBundleID == app)
                    && (type == nil || entry.claimedType == type) && (subtype == nil || entry.claimedSubtype == subtype)
                    && (from.map { entry.receivedAt >= $0 } ?? true) && (to.map { entry.receivedAt < $0 } ?? true)
            }
            return NotificationLogPage(items: items.prefix(limit).map(NotificationLogPage.Item.init), refusedOnly: true)
        }
        var effect: NotificationEffect?
        if let outcome {
            guard let known = NotificationEffect(rawValue: outcome) else {
                throw .badRequest("invalidQuery", "'outcome' must be recorded, answered, nothingToRecord or refused")
            }
            effect = known
        }
        var cursor: NotificationQuery.Cursor?
        if let before {
            let parts = before.split(separator: ".", maxSplits: 1)
            guard parts.count == 2, let moment = Int64(parts[0]), !parts[1].isEmpty else {
                throw .badRequest("invalidQuery", "'before' is the 'next' of the previous page")
            }
            cursor = .init(receivedAt: Date(millisecondsSince1970: moment), uuid: String(parts[1]))
        }
        var customerID: String?
        if let customer {
            customerID = try await consoleCustomer(customer, bundleID: app)?.id
            guard customerID != nil else { return NotificationLogPage(items: [], refusedOnly: false) }
        }
        let entries: [NotificationLogEntry]
        do {
            entries = try await storage.notifications(
                NotificationQuery(
                    bundleID: app, type: type, subtype: subtype, effect: effect, from: from, to: to,
                    customerID: customerID, before: cursor, limit: limit))
        } catch {
            throw .storage(error)
        }
        let last = entries.count == limit ? entries.last?.notification : nil
        return NotificationLogPage(
            items: entries.map(NotificationLogPage.Item.init),
            next: last.map { "\($0.receivedAt.millisecondsSince1970).\($0.uuid)" }, refusedOnly: false)
    }

    /// One stored notification of an app, with the body it arrived with.
    func notificationDetail(uuid: String, bundleID: String?) async throws(ServiceError) -> NotificationLogDetail {
        let app = try self.app(bundleID: bundleID).configuration.bundleID
        let found: StoredNotification?
        do { found = try await storage.notification(uuid: uuid, bundleID: app) } catch { throw .storage(error) }
        guard let found else {
            throw ServiceError(.notFound, "notificationNotFound", "no notification \(uuid) of \(app) is recorded")
        }
        var owner: String?
        if let original = found.originalTransactionID {
            owner = try await customer(matching: original, bundleID: app)?.id
        }
        return NotificationLogDetail(
            notification: .init(NotificationLogEntry(notification: found, customerID: owner)), body: found.body)
    }
}
