public import AsyncHTTPClient
public import Foundation
import IAPCatalog
import IAPCore
import IAPSimulator
public import IAPStoreClient
import NIOCore
import NIOHTTP1
import Synchronization

/// The local App Store of a running `iapkit serve`, over its `/simulator` API, as one device of one account sees it:
/// what an app under development, a command-line tool or a test on another machine uses instead of StoreKit.
///
/// ```swift
/// let backend = try await HTTPStoreBackend.connect(
///     to: URL(string: "http://127.0.0.1:8080")!, account: "ana", createAccount: true)
/// let store = Store(catalog: catalog, backend: backend, validation: .signedTransactions(verifier))
/// await store.start()
/// ```
///
/// Everything arrives signed by the simulator's authority, exactly as in process; transaction updates come as
/// server-sent events, reconnecting with backoff when the connection drops (the server redelivers unfinished
/// transactions on each connection, and the `Store` ignores what it has seen). Transport failures are
/// `networkError`, the code StoreKit uses; the simulator's own refusals keep their codes.
public struct HTTPStoreBackend: StoreBackend {
    /// The server, e.g. `http://127.0.0.1:8080`.
    public let server: URL
    public let account: String
    public let deviceIdentifier: UUID
    /// The person and network around this device: sheet choices, offline, held purchases.
    public let customer: SimulatedCustomer
    /// How long an update stream may stay silent (the server sends a heartbeat every 15 s) before it is dropped and
    /// reconnected.
    public let updatesIdleLimit: Duration

    private let http: JSONHTTPClient
    private let client: HTTPClient
    private let subscriptions = UpdateSubscriptions()

    /// Connects as `account` on `device` (the account's first device when nil, one signed in when it has none).
    ///
    /// - Parameters:
    ///   - server: where `iapkit serve` listens, e.g. `http://127.0.0.1:8080`.
    ///   - account: the simulated customer.
    ///   - device: one of the account's devices; nil for its first (one is signed in when it has none).
    ///   - adminToken: the server's admin token, when its `/simulator` requires one.
    ///   - customer: the person and network around the device (sheet choices, offline).
    ///   - createAccount: open the account (with one device) when the simulator does not know it.
    ///   - timeout: the limit of each request (not of the update stream, which stays open).
    ///   - updatesIdleLimit: how long an update stream may stay silent before it is dropped and reconnected.
    ///   - httpClient: the client to send with; `HTTPClient.shared` by default.
    public static func connect(
        to server: URL, account: String, device: UUID? = nil, adminToken: String? = nil,
        customer: SimulatedCustomer = SimulatedCustomer(), createAccount: Bool = false,
        timeout: Duration = .seconds(10), updatesIdleLimit: Duration = .seconds(45), httpClient: HTTPClient = .shared
    ) async throws(StoreError) -> HTTPStoreBackend {
        let http = JSONHTTPClient(
            baseURL: server, headers: adminToken.map { [("Authorization", "Bearer \($0)")] } ?? [], timeout: timeout,
            unreachable: .networkError, transport: AsyncHTTPClientTransport(client: httpClient))
        let path = "/simulator/accounts/\(Self.segment(account))"
        var devices: [UUID]
        do {
            devices = try await http.decode(SimulatorWire.Account.self, "GET", path).deviceIds.compactMap(UUID.init)
        } catch  where error.code == .unknownAccount && createAccount {
            let opened = try await http.decode(
                SimulatorWire.SignedIn.self, "POST", "/simulator/accounts",
                body: SimulatorWire.OpenAccount(accountId: account))
            devices = [opened.deviceId].compactMap(UUID.init)
        }
        let chosen: UUID
        if let device {
            guard devices.contains(device) else {
                throw StoreError(.unknownDevice, "\(device) is not a device of \(account)")
            }
            chosen = device
        } else if let first = devices.first {
            chosen = first
        } else {
            let added = try await http.decode(SimulatorWire.SignedIn.self, "POST", path + "/devices")
            guard let uuid = UUID(uuidString: added.deviceId) else {
                throw StoreError(.networkError, "the server answered a device id that is not a UUID")
            }
            chosen = uuid
        }
        return HTTPStoreBackend(
            server: server, account: account, deviceIdentifier: chosen, customer: customer,
            updatesIdleLimit: updatesIdleLimit, http: http, client: httpClient)
    }

    private init(
        server: URL, account: String, deviceIdentifier: UUID, customer: SimulatedCustomer, updatesIdleLimit: Duration,
        http: JSONHTTPClient, client: HTTPClient
    ) {
        self.client = client
        self.server = server
        self.account = account
        self.deviceIdentifier = deviceIdentifier
        self.customer = customer
        self.updatesIdleLimit = updatesIdleLimit
        self.http = http
    }

    private var accountPath: String { "/simulator/accounts/\(Self.segment(account))" }
    private var deviceQuery: String { "deviceId=\(deviceIdentifier.uuidString)" }

    public func now() async throws(StoreError) -> Date {
        try await http.decode(SimulatorWire.Clock.self, "GET", "/simulator/clock").now
    }

    public func products(for ids: [String]) async throws(StoreError) -> [StoreProduct] {
        try customer.checkOnline()
        let list = ids.map(Self.queryValue).joined(separator: ",")
        return try await http.decode(SimulatorWire.Products.self, "GET", accountPath + "/products?ids=\(list)")
            .products.map { (product) throws(StoreError) in try StoreProduct(product) }
    }

    public func purchase(_ request: PurchaseRequest) async throws(StoreError) -> BackendPurchaseResult {
        let sheet = await customer.nextSheet()
        try customer.checkOnline()
        var body = SimulatorWire.Purchase(
            productId: request.productID, deviceId: deviceIdentifier.uuidString, quantity: Int64(request.quantity),
            appAccountToken: request.appAccountToken?.uuidString, interrupted: sheet == .interrupt,
            userCancels: sheet == .cancel)
        switch request.offer {
        case .promotional(let offer): body.promotionalOffer = offer
        case .promotionalJWS(_, let jws): body.promotionalOfferV2 = jws
        case .winBack(let id): body.winBackOfferId = id
        case nil: break
        }
        body.introductoryOfferEligibility = request.introductoryOfferEligibility
        let answer = try await http.decode(
            SimulatorWire.PurchaseResult.self, "POST", accountPath + "/purchases", body: body)
        switch answer.outcome {
        case "purchased":
            guard let signed = answer.transaction?.signedTransaction else {
                throw StoreError(.networkError, "a purchase answered without its transaction")
            }
            return .success(signedTransaction: signed)
        case "pending": return .pending
        case "userCancelled": return .userCancelled
        default: throw StoreError(.networkError, "unknown purchase outcome '\(answer.outcome)'")
        }
    }

    public func transactionUpdates() -> AsyncStream<String> {
        let (stream, sink) = AsyncStream.makeStream(of: String.self)
        let subscription = subscriptions.begin()
        let listener = Task {
            await follow(accountPath + "/updates?\(deviceQuery)", event: "transaction", subscription: subscription) {
                sink.yield($0)
            }
            sink.finish()
        }
        sink.onTermination = { _ in listener.cancel() }
        return stream
    }

    /// The account's storefront each time it changes, from the server's `storefront-updates` stream (which starts
    /// with the storefront at connection: after a reconnection, a storefront that moved meanwhile counts as a change).
    public func storefrontChanges() -> AsyncStream<String> {
        let (storefronts, sink) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(2))
        // Counted with the update streams: once the first connection is made, a change the test makes is one.
        let subscription = subscriptions.begin()
        let listener = Task {
            await follow(accountPath + "/storefront-updates", event: "storefront", subscription: subscription) {
                sink.yield($0)
            }
            sink.finish()
        }
        sink.onTermination = { _ in listener.cancel() }
        return storefronts.changes()
    }

    public func updatesSubscribed() async { await subscriptions.firstAttemptsDone() }

    public func allTransactions() async throws(StoreError) -> [String] {
        try customer.checkOnline()
        return try await http.decode(
            SimulatorWire.Transactions.self, "GET", accountPath + "/transactions?onDevice=true"
        )
        .signed
    }

    public func unfinishedTransactions() async throws(StoreError) -> [String] {
        try customer.checkOnline()
        return try await http.decode(
            SimulatorWire.Transactions.self, "GET", accountPath + "/transactions?unfinished=true"
        ).signed
    }

    public func currentEntitlements() async throws(StoreError) -> [String] {
        try customer.checkOnline()
        return try await http.decode(SimulatorWire.Transactions.self, "GET", accountPath + "/current-entitlements")
            .signed
    }

    public func latestTransaction(for productID: String) async throws(StoreError) -> String? {
        try customer.checkOnline()
        do {
            return try await http.decode(
                SimulatorWire.Transaction.self, "GET",
                accountPath + "/products/\(Self.segment(productID))/latest-transaction"
            ).signedTransaction
        } catch  where error.code == .noTransaction {
            return nil
        }
    }

    public func redeemOfferCode(_ code: String?) async throws(StoreError) {
        try customer.checkOnline()
        guard let code else { return }  // the customer closed the sheet
        _ = try await http.decode(
            SimulatorWire.Transaction.self, "POST", accountPath + "/offer-codes",
            body: SimulatorWire.OfferCode(code: code))
    }

    public func finish(transactionID: String) async throws(StoreError) {
        try customer.checkOnline()
        _ = try await http.decode(
            SimulatorWire.Done.self, "POST", "/simulator/transactions/\(Self.segment(transactionID))/finish")
    }

    /// The customer signs in (counted: ``SimulatedCustomer/signIns``); the device gets a new receipt.
    public func sync() async throws(StoreError) {
        customer.countSignIn()
        try customer.checkOnline()
        _ = try await http.decode(SimulatorWire.Transactions.self, "POST", accountPath + "/sync")
        _ = try await receiptFromTheStore()
    }

    public func subscriptionRenewalInfos() async throws(StoreError) -> [String] {
        try customer.checkOnline()
        return try await http.decode(SimulatorWire.RenewalInfos.self, "GET", accountPath + "/renewal-info")
            .signedRenewalInfo
    }

    public func appTransaction() async throws(StoreError) -> String {
        try customer.checkOnline()
        return try await http.decode(
            SimulatorWire.AppTransaction.self, "GET", accountPath + "/app-transaction?\(deviceQuery)"
        ).signedAppTransaction
    }

    /// The receipt on the device's disk: offline, the last one the store gave; online, a fresh one.
    public func appReceipt() async throws(StoreError) -> [UInt8]? {
        if customer.isOffline { return customer.receiptOnDisk }
        return try await receiptFromTheStore()
    }

    /// The receipt the store signs for this device now, kept on its disk.
    private func receiptFromTheStore() async throws(StoreError) -> [UInt8] {
        try customer.checkOnline()
        let answer = try await http.decode(SimulatorWire.Receipt.self, "GET", accountPath + "/receipt?\(deviceQuery)")
        guard let bytes = Data(base64Encoded: answer.receiptData) else {
            throw StoreError(.networkError, "the receipt the server answered is not base64")
        }
        customer.receiptOnDisk = Array(bytes)
        return Array(bytes)
    }

    public func requestRefund(transactionID: String) async throws(StoreError) -> RefundRequestStatus {
        try customer.checkOnline()
        _ = try await http.decode(
            SimulatorWire.Done.self, "POST", "/simulator/transactions/\(Self.segment(transactionID))/refund-request",
            body: SimulatorWire.RefundRequest())
        return .success
    }

    public func manageSubscriptions() async throws(StoreError) -> URL {
        try customer.checkOnline()
        return URL(string: "https://apps.apple.com/account/subscriptions")!
    }

    // MARK: - Event streams

    /// Keeps one event stream open until the task is cancelled: connects, hands each `event` event's data to
    /// `deliver`, and after a drop or a failure waits (250 ms, doubling to 30 s; back to 250 ms after a good
    /// connection) and connects again. `subscription` hears of the first attempt.
    private func follow(
        _ path: String, event: String, subscription: UpdateSubscriptions.Ticket?,
        deliver: @escaping @Sendable (String) -> Void
    ) async {
        var backoff = Duration.milliseconds(250)
        while !Task.isCancelled {
            if customer.isOffline {
                subscription?.attempted()
            } else {
                do {
                    try await readEvents(path, event: event, deliver: deliver) {
                        backoff = .milliseconds(250)
                        subscription?.attempted()
                    }
                } catch {
                    subscription?.attempted()
                }
            }
            try? await Task.sleep(for: backoff)
            backoff = min(backoff * 2, .seconds(30))
        }
        subscription?.attempted()
    }

    /// One connection: hands each `event` event's data to `deliver` until the stream ends, stays silent past
    /// ``updatesIdleLimit``, or breaks the event format.
    private func readEvents(
        _ path: String, event wanted: String, deliver: @escaping @Sendable (String) -> Void, connected: () -> Void
    ) async throws {
        var request = HTTPClientRequest(url: server.absoluteString.trimmingSuffix("/") + path)
        for (name, value) in http.headers { request.headers.add(name: name, value: value) }
        request.headers.add(name: "Accept", value: "text/event-stream")
        let response = try await client.execute(request, timeout: .init(http.timeout))
        guard response.status == .ok else {
            var buffer = try await response.body.collect(upTo: 64 << 10)
            throw JSONHTTPClient.error(
                status: Int(response.status.code), buffer.readBytes(length: buffer.readableBytes) ?? [],
                refused: nil)
        }
        connected()
        let lastActivity = LastActivity()
        let idleLimit = updatesIdleLimit
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                var parser = ServerSentEventParser()
                for try await chunk in response.body {
                    lastActivity.touch()
                    for event in try parser.feed(chunk.readableBytesView) where event.type == wanted {
                        deliver(event.data)
                    }
                }
            }
            group.addTask {
                while true {
                    try await Task.sleep(for: idleLimit / 4)
                    if lastActivity.silence > idleLimit {
                        throw StoreError(.networkError, "the update stream was silent for \(idleLimit)")
                    }
                }
            }
            // The first child to end (the stream closed, a format error, silence) ends the connection.
            _ = try await group.next()
            group.cancelAll()
        }
    }

    // MARK: - Paths

    /// A path segment, percent-encoded (account ids made through the library may hold any character).
    package static func segment(_ text: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    static func queryValue(_ text: String) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+,#")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}

extension StoreProduct {
    /// A product as `/simulator` answers it.
    init(_ product: SimulatorWire.Product) throws(StoreError) {
        guard let kind = ProductKind(rawValue: product.kind) else {
            throw StoreError(.networkError, "product \(product.id) has an unknown kind '\(product.kind)'")
        }
        self.init(
            id: product.id, kind: kind, displayName: product.displayName, description: product.description,
            price: product.price, displayPrice: product.displayPrice, subscriptionGroupID: product.subscriptionGroupId,
            subscriptionGroupName: product.subscriptionGroupName, subscriptionLevel: product.subscriptionGroupLevel,
            subscriptionPeriod: product.subscriptionPeriod.flatMap(SubscriptionPeriod.init(iso8601:)),
            isFamilyShareable: product.isFamilyShareable,
            storeSaysEligibleForIntroductoryOffer: product.isEligibleForIntroductoryOffer,
            introductoryOffer: product.introductoryOffer, promotionalOffers: product.promotionalOffers ?? [],
            winBackOffers: product.winBackOffers ?? [])
    }
}

/// When an update stream last received bytes.
private final class LastActivity: Sendable {
    private let moment = Mutex(ContinuousClock.now)
    func touch() { moment.withLock { $0 = .now } }
    var silence: Duration { ContinuousClock.now - moment.withLock { $0 } }
}

/// The update streams of one backend that have not yet made their first connection attempt, so a store's launch can
/// wait until its subscription is live (or known to have failed) before it reconciles.
final class UpdateSubscriptions: Sendable {
    private struct State {
        var pending = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    /// One stream's first attempt; ``attempted()`` may be called many times, only the first counts.
    final class Ticket: Sendable {
        private let done = Mutex(false)
        private let owner: UpdateSubscriptions
        init(_ owner: UpdateSubscriptions) { self.owner = owner }
        func attempted() {
            let first = done.withLock { done in
                defer { done = true }
                return !done
            }
            if first { owner.finishOne() }
        }
    }

    func begin() -> Ticket {
        state.withLock { $0.pending += 1 }
        return Ticket(self)
    }

    fileprivate func finishOne() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.pending -= 1
            guard state.pending == 0 else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func firstAttemptsDone() async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state in
                if state.pending == 0 { return true }
                state.waiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }
}

extension AsyncStream<String> {
    /// The elements that differ from the one before, the first one being where changes count from: the changes of a
    /// storefront stream that starts with the storefront now.
    func changes() -> AsyncStream<String> {
        let (changes, sink) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(1))
        let listener = Task {
            var last: String?
            for await storefront in self {
                if let last, last != storefront { sink.yield(storefront) }
                last = storefront
            }
            sink.finish()
        }
        sink.onTermination = { _ in listener.cancel() }
        return changes
    }
}
