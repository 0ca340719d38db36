public import Foundation
import IAPCore

/// What the server did with a notification it recorded.
public enum NotificationEffect: String, Hashable, Sendable, Codable, CaseIterable {
    /// It carried a transaction or renewal information: each written where newer than the stored version.
    case recorded
    /// A consumption request: its transaction recorded, and the app's answer queued for the App Store.
    case answered
    /// It carried nothing to record (a test, a summary of a renewal extension, an external purchase token).
    case nothingToRecord
}

/// Which recorded notifications the console's log asks for: one app's, newest first, narrowed by any of the filters.
public struct NotificationQuery: Hashable, Sendable {
    /// Where a page of the log ends: the received moment and UUID of its last entry.
    public struct Cursor: Hashable, Sendable {
        public var receivedAt: Date
        public var uuid: String

        public init(receivedAt: Date, uuid: String) {
            self.receivedAt = receivedAt
            self.uuid = uuid
        }
    }

    public var bundleID: String
    public var type: String?
    public var subtype: String?
    public var effect: NotificationEffect?
    /// Received at or after.
    public var from: Date?
    /// Received before.
    public var to: Date?
    /// Only those about a purchase this customer owns now.
    public var customerID: String?
    /// Only entries older than this one (the next page).
    public var before: Cursor?
    public var limit: Int

    public init(
        bundleID: String, type: String? = nil, subtype: String? = nil, effect: NotificationEffect? = nil,
        from: Date? = nil, to: Date? = nil, customerID: String? = nil, before: Cursor? = nil, limit: Int = 50
    ) {
        self.bundleID = bundleID
        self.type = type
        self.subtype = subtype
        self.effect = effect
        self.from = from
        self.to = to
        self.customerID = customerID
        self.before = before
        self.limit = limit
    }

    /// Whether a notification passes every filter but the customer's and the cursor's.
    func admits(_ notification: StoredNotification) -> Bool {
        notification.bundleID == bundleID && (type == nil || notification.type == type)
            && (subtype == nil || notification.subtype == subtype) && (effect == nil || notification.effect == effect)
            && (from.map { notification.receivedAt >= $0 } ?? true) && (to.map { notification.receivedAt < $0 } ?? true)
            && (before.map { Self.isOlder(notification, than: $0) } ?? true)
    }

    /// The log's order: newest received first, then by UUID descending.
    static func isOlder(_ notification: StoredNotification, than cursor: Cursor) -> Bool {
        let received = notification.receivedAt.millisecondsSince1970
        let mark = cursor.receivedAt.millisecondsSince1970
        return received < mark || (received == mark && notification.uuid < cursor.uuid)
    }
}

/// One line of the notification log: the notification without its body, and the customer who owns its purchase now.
public struct NotificationLogEntry: Hashable, Sendable {
    public var notification: StoredNotification
    public var customerID: String?

    public init(notification: StoredNotification, customerID: String?) {
        self.notification = notification
        self.customerID = customerID
    }
}
