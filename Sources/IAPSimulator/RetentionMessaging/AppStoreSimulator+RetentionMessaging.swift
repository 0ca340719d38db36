public import Foundation
import IAPSignedData

/// Apple's Retention Messaging API, answered from the simulator's state (`iapkit serve` serves it under
/// `/inApps/v1/messaging`): images and messages checked by Apple's rules (PNG without transparency in Apple's two
/// sizes; text lengths, bullet points, image kinds), reviewed at once in the sandbox, default messages per
/// subscription and locale, the realtime URL, and performance tests whose requests are signed like the App Store's.
/// Refusals carry Apple's codes in ``SimulatorError/appStoreErrorCode``.
extension AppStoreSimulator {
    /// Uploads a PNG image of the given kind under a new identifier.
    public func uploadRetentionImage(_ id: UUID, size: RetentionImageSize, png: [UInt8]) throws(SimulatorError) {
        try withCore { (core) throws(SimulatorError) in
            try core.messaging.uploadImage(id, size: size, png: png, approved: core.approvesRetentionContent)
        }
    }

    /// Deletes an image no message uses.
    public func deleteRetentionImage(_ id: UUID) throws(SimulatorError) {
        try withCore { (core) throws(SimulatorError) in try core.messaging.deleteImage(id) }
    }

    /// Every uploaded image, oldest first.
    public func retentionImages() -> [RetentionImage] {
        (try? withCore(catchingUp: false) { (core, _) in core.messaging.imageList }) ?? []
    }

    /// Uploads a message under a new identifier; the images it names must exist and be of the right kind.
    public func uploadRetentionMessage(_ id: UUID, _ message: RetentionMessage) throws(SimulatorError) {
        try withCore { (core) throws(SimulatorError) in
            try core.messaging.uploadMessage(id, message, approved: core.approvesRetentionContent)
        }
    }

    /// Deletes a message, and the default messages that named it.
    public func deleteRetentionMessage(_ id: UUID) throws(SimulatorError) {
        try withCore { (core) throws(SimulatorError) in try core.messaging.deleteMessage(id) }
    }

    /// Every uploaded message, oldest first.
    public func retentionMessages() -> [StoredRetentionMessage] {
        (try? withCore(catchingUp: false) { (core, _) in core.messaging.messageList }) ?? []
    }

    /// Approves or rejects an uploaded image or message, as Apple's review does (the sandbox approves at once).
    public func reviewRetentionContent(_ id: UUID, approved: Bool) throws(SimulatorError) {
        try withCore { (core) throws(SimulatorError) in
            try core.messaging.review(id, state: approved ? .approved : .rejected)
        }
    }

    /// Makes an approved message the default for an auto-renewable subscription in a locale (App Store Connect's
    /// short codes, case-sensitive).
    public func configureDefaultRetentionMessage(productID: String, locale: String, messageID: UUID)
        throws(SimulatorError)
    {
        try withCore { (core) throws(SimulatorError) in
            let key = try RetentionMessagingRecords.defaultKey(
                productID: productID, locale: locale, subscriptions: core.retentionProductIDs)
            try core.messaging.configureDefault(key, messageID: messageID)
        }
    }

    /// The default message of a subscription in a locale.
    public func defaultRetentionMessage(productID: String, locale: String) throws(SimulatorError) -> UUID {
        try withCore { (core) throws(SimulatorError) in
            try core.messaging.defaultMessage(
                RetentionMessagingRecords.defaultKey(
                    productID: productID, locale: locale, subscriptions: core.retentionProductIDs))
        }
    }

    /// Removes the default message of a subscription in a locale (nothing to remove is no error).
    public func deleteDefaultRetentionMessage(productID: String, locale: String) throws(SimulatorError) {
        try withCore { (core) throws(SimulatorError) in
            let key = try RetentionMessagingRecords.defaultKey(
                productID: productID, locale: locale, subscriptions: core.retentionProductIDs)
            core.messaging.defaults[key] = nil
        }
    }

    /// Sets the URL the App Store calls for a retention message (`https://`, or `http://` on a loopback host).
    public func configureRealtimeURL(_ url: String) throws(SimulatorError) {
        try withCore { (core) throws(SimulatorError) in
            try core.messaging.configureRealtimeURL(
                url, environmentIsSandbox: core.configuration.environment == .sandbox)
        }
    }

    /// The configured realtime URL, if any.
    public func realtimeURL() -> String? {
        (try? withCore(catchingUp: false) { (core, _) in core.messaging.realtimeURL }) ?? nil
    }

    /// Forgets the realtime URL.
    public func deleteRealtimeURL() {
        try? withCore(catchingUp: false) { (core, _) in core.messaging.realtimeURL = nil }
    }

    /// Starts a performance test of the realtime URL for a customer's active subscription. The caller sends the
    /// requests (``signedRealtimeRequest(for:locale:)``) and records each outcome
    /// (``recordPerformanceTestOutcome(_:requestID:)``); `IAPSimulatorDelivery.RealtimeURLTester` does both.
    /// `configuration` defaults to the simulator's ``SimulatorConfiguration/performanceTest``.
    public func startPerformanceTest(
        originalTransactionID: String, configuration: PerformanceTestConfiguration? = nil
    ) throws(SimulatorError) -> PerformanceTestRun {
        try withCore { (core) throws(SimulatorError) in
            try core.startPerformanceTest(
                originalTransactionID: originalTransactionID,
                configuration: configuration ?? core.configuration.performanceTest)
        }
    }

    /// The body of one "Get Retention Message" request of a test, signed now.
    public func signedRealtimeRequest(for run: PerformanceTestRun, locale: String = "en-US") throws(SimulatorError)
        -> [UInt8]
    {
        try withCore { (core) throws(SimulatorError) in try core.signedRealtimeRequest(for: run, locale: locale) }
    }

    /// Records how one request of a test ended.
    public func recordPerformanceTestOutcome(_ outcome: PerformanceTestOutcome, requestID: UUID) {
        try? withCore(catchingUp: false) { (core, _) in core.messaging.record(outcome, requestID: requestID) }
    }

    /// A performance test as it stands.
    public func performanceTest(_ requestID: UUID) throws(SimulatorError) -> PerformanceTestRun {
        try withCore { (core) throws(SimulatorError) in try core.messaging.performanceTest(requestID) }
    }
}
