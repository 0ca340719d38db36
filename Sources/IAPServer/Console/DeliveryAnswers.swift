import Foundation
import Hummingbird

/// Webhook deliveries as the console shows them: each event with one endpoint, its state and every attempt.
struct DeliveryList: ResponseEncodable {
    struct Item: Encodable {
        struct Attempt: Encodable {
            var number: Int
            var startedAt: Date
            var status: Int?
            var error: String?
            var milliseconds: Int
            var instance: String
        }
        var eventId: String
        var type: String
        var bundleId: String
        var customerId: String
        var endpoint: String
        var state: String
        var createdAt: Date
        var nextAttemptAt: Date?
        var deliveredAt: Date?
        var attempts: [Attempt]
    }
    var deliveries: [Item]

    init(_ records: [DeliveryRecord]) {
        deliveries = records.map { record in
            Item(
                eventId: record.event.id, type: record.event.type, bundleId: record.event.bundleID,
                customerId: record.event.customerID, endpoint: record.endpoint, state: record.state.rawValue,
                createdAt: record.event.createdAt, nextAttemptAt: record.nextAttempt, deliveredAt: record.deliveredAt,
                attempts: record.attempts.map {
                    Item.Attempt(
                        number: $0.number, startedAt: $0.startedAt, status: $0.status, error: $0.error,
                        milliseconds: $0.milliseconds, instance: $0.instance)
                })
        }
    }
}

/// What a retry from the console did.
struct DeliveryRetry: ResponseEncodable {
    var eventId: String
    var retried: Int
}
