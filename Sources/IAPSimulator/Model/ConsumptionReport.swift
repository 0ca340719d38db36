import Crypto
import Foundation
import IAPCatalog
import IAPReceipts
import IAPSignedData

/// The consumption information a developer's server sends when Apple asks about a refund request (the App Store
/// Server API's `ConsumptionRequest`); the simulator checks every field's range as Apple does.
public struct ConsumptionReport: Hashable, Sendable, Codable {
    /// Must be true: the customer consented to sharing the data.
    public var customerConsented: Bool
    /// 0 undeclared, 1 not consumed, 2 partially consumed, 3 fully consumed.
    public var consumptionStatus: Int
    /// 0 undeclared, 1 Apple platform, 2 non-Apple platform.
    public var platform: Int
    public var sampleContentProvided: Bool
    /// 0 delivered and working, 1 not delivered (quality issue), 2 wrong item, 3 server outage, 4 currency change,
    /// 5 other reason.
    public var deliveryStatus: Int
    /// 0-7 buckets of how long the account has existed.
    public var accountTenure: Int
    /// 0-7 buckets of time spent in the app.
    public var playTime: Int
    /// 0-7 buckets of money refunded / spent in the app.
    public var lifetimeDollarsRefunded: Int
    public var lifetimeDollarsPurchased: Int
    /// 0 undeclared, 1 active, 2 suspended, 3 terminated, 4 limited access.
    public var userStatus: Int
    /// 0 undeclared, 1 grant, 2 decline, 3 no preference.
    public var refundPreference: Int
    /// How much was consumed, in milli-percent (the v2 request's `consumptionPercentage`), when reported.
    public var consumptionPercentage: Int?

    public init(
        customerConsented: Bool = true, consumptionStatus: Int = 0, platform: Int = 1,
        sampleContentProvided: Bool = false, deliveryStatus: Int = 0, accountTenure: Int = 0, playTime: Int = 0,
        lifetimeDollarsRefunded: Int = 0, lifetimeDollarsPurchased: Int = 0, userStatus: Int = 1,
        refundPreference: Int = 0
    ) {
        self.customerConsented = customerConsented
        self.consumptionStatus = consumptionStatus
        self.platform = platform
        self.sampleContentProvided = sampleContentProvided
        self.deliveryStatus = deliveryStatus
        self.accountTenure = accountTenure
        self.playTime = playTime
        self.lifetimeDollarsRefunded = lifetimeDollarsRefunded
        self.lifetimeDollarsPurchased = lifetimeDollarsPurchased
        self.userStatus = userStatus
        self.refundPreference = refundPreference
    }

    /// The first field out of Apple's range, if any.
    func invalidField() -> String? {
        let ranges: [(String, Int, ClosedRange<Int>)] = [
            ("consumptionStatus", consumptionStatus, 0...3), ("platform", platform, 0...2),
            ("deliveryStatus", deliveryStatus, 0...5), ("accountTenure", accountTenure, 0...7),
            ("playTime", playTime, 0...7), ("lifetimeDollarsRefunded", lifetimeDollarsRefunded, 0...7),
            ("lifetimeDollarsPurchased", lifetimeDollarsPurchased, 0...7), ("userStatus", userStatus, 0...4),
            ("refundPreference", refundPreference, 0...3),
        ]
        if !customerConsented { return "customerConsented" }
        return ranges.first { !$0.2.contains($0.1) }?.0
    }
}
