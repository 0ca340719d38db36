public import Foundation
import IAPEntitlements
public import IAPSignedData

/// An App Store Server Notification V2 the simulator issued: the signed payload, the request body a webhook gets,
/// and the decoded payload.
public struct SimulatorNotification: Hashable, Sendable {
    public let uuid: String
    public let type: NotificationType
    public let subtype: NotificationSubtype?
    public let date: Date
    /// The customer it is about; nil for notifications about no one (TEST, a mass extension's SUMMARY).
    public let accountID: String?
    public let transactionID: String?
    /// The compact JWS (`signedPayload`).
    public let signedPayload: String
    public let payload: NotificationPayload

    /// The HTTP request body Apple posts: `{"signedPayload":"..."}`.
    public var requestBody: [UInt8] {
        JSONValue.object(JSONObject([("signedPayload", .string(signedPayload))])).jsonBytes()
    }
}
