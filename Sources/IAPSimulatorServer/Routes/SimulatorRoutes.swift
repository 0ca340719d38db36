import Foundation
import HTTPTypes
public import Hummingbird
import IAPCore
import IAPServer
import IAPSignedData
public import IAPSimulator

/// The local App Store's control plane under `/simulator`: what an app's purchase helper (the StoreClient's HTTP
/// backend) and a person in a browser need to drive the simulator that `iapkit serve` runs.
///
/// Bodies and answers are ``SimulatorWire`` values, the types a client uses too; handlers return them and the
/// context's encoder writes them. The simulator's errors become answers in one place (``SimulatorErrorMiddleware``).
/// Everything the simulator signs goes where Apple's would: its notifications to the server's own notification
/// endpoint, its transactions and receipts to the caller, who posts them to `/v1/...` like a real app. The whole
/// group is behind the operator guard: open in development mode, else only with the admin token.
struct SimulatorRoutes: Sendable {
    let store: AppStoreSimulator
    let configuration: ServerConfiguration
    /// Who may use the group.
    let access: OperatorAccess
    /// The simulated App Store Server API's rate limit, switched on and off here.
    let inAppsRateLimit: InAppsRateLimit

    func add(to router: Router<ServerRequestContext>) {
        let group = router.group("simulator").add(middleware: OperatorMiddleware(access))
            .add(middleware: SimulatorErrorMiddleware())
        addAccounts(to: group)
        addTransactions(to: group)
        addClock(to: group)
        group.get { _, _ in try store.wireState() }
        group.put("inapps/rate-limit") { request, _ in
            let body = try await read(SimulatorWire.RateLimit.self, request)
            guard (0...1_000_000).contains(body.requests), (1...3600).contains(body.windowSeconds) else {
                throw APIError.badRequest(
                    "invalidField", "'requests' must be 0 to 1000000 and 'windowSeconds' 1 to 3600")
            }
            inAppsRateLimit.set(.init(requests: Int(body.requests), window: Int(body.windowSeconds)))
            return body
        }
        group.delete("inapps/rate-limit") { _, _ in
            inAppsRateLimit.set(nil)
            return HTTPResponse.Status.noContent
        }
        group.get("trust") { _, _ in try store.wireTrust() }
        group.get("failures") { _, _ in store.wireFailures }
        group.put("failures/:operation") { request, context in
            let operation = try operation(context)
            let code = try required(try await read(SimulatorWire.Failure.self, request).code, "code")
            guard Self.injectableFailures.contains(code) else {
                throw APIError.badRequest(
                    "invalidField", "'code' is one of \(Self.injectableFailures.joined(separator: ", "))")
            }
            store.injectFailure(operation, SimulatorError.Code(rawValue: code))
            return store.wireFailures
        }
        group.delete("failures/:operation") { _, context in
            store.injectFailure(try operation(context), nil)
            return store.wireFailures
        }
        group.get("notifications") { request, _ in
            store.wireNotifications(since: try request.integerQuery("since", in: 0...Int.max) ?? 0)
        }
    }

    // MARK: - Accounts

    private func addAccounts(to group: RouterGroup<ServerRequestContext>) {
        group.post("accounts") { request, _ in
            let body = try await read(SimulatorWire.OpenAccount.self, request)
            let id = try required(body.accountId, "accountId")
            guard id.isIdentifier(maximum: 64) else {
                throw APIError.badRequest("invalidField", "'accountId' must be 1 to 64 letters, digits, - or _")
            }
            try store.createAccount(
                id, storefront: body.storefront ?? "USA", appAccountToken: try token(body.appAccountToken),
                askToBuy: body.askToBuy ?? false)
            let device = try store.addDevice(account: id)
            return EditedResponse(
                status: .created, response: SimulatorWire.SignedIn(accountId: id, deviceId: device.uuidString))
        }
        group.get("accounts/:account") { _, context in try store.wireAccount(try parameter("account", context)) }
        group.patch("accounts/:account") { request, context in
            let account = try parameter("account", context)
            let body = try await read(SimulatorWire.AccountSettings.self, request)
            guard body.askToBuy != nil || body.storefront != nil else {
                throw APIError.badRequest("missingField", "give 'askToBuy', 'storefront' or both")
            }
            try store.updateAccount(account, askToBuy: body.askToBuy, storefront: body.storefront)
            return try store.wireAccount(account)
        }
        group.post("accounts/:account/devices") { request, context in
            let account = try parameter("account", context)
            _ = try await read(SimulatorWire.Empty.self, request)
            let device = try store.addDevice(account: account)
            return EditedResponse(status: .created, response: SimulatorWire.SignedIn(deviceId: device.uuidString))
        }
        group.get("accounts/:account/products") { request, context in
            let ids = request.uri.queryParameters.get("ids").map { $0.split(separator: ",").map(String.init) }
            return try store.wireProducts(ids, account: try parameter("account", context))
        }
        group.post("accounts/:account/purchases") { request, context in
            let account = try parameter("account", context)
            let body = try await read(SimulatorWire.Purchase.self, request)
            let outcome = try store.purchase(
                try required(body.productId, "productId"), account: account,
                device: try uuid(body.deviceId, "deviceId"),
                options: try options(body))
            let status: HTTPResponse.Status =
                switch outcome {
                case .purchased: .created
                case .pending: .accepted
                case .userCancelled: .ok
                }
            return EditedResponse(status: status, response: SimulatorWire.PurchaseResult(outcome))
        }
        group.get("accounts/:account/transactions") { request, context in
            let account = try parameter("account", context)
            let unfinished = try request.booleanQuery("unfinished") ?? false
            let onDevice = try request.booleanQuery("onDevice") ?? false
            return SimulatorWire.Transactions(
                unfinished
                    ? try store.unfinishedTransactions(account: account)
                    : onDevice
                        ? try store.transactionsOnDevice(account: account) : try store.transactions(account: account))
        }
        group.get("accounts/:account/current-entitlements") { _, context in
            SimulatorWire.Transactions(try store.currentEntitlements(account: try parameter("account", context)))
        }
        group.get("accounts/:account/products/:product/latest-transaction") { _, context in
            let account = try parameter("account", context)
            let product = try parameter("product", context)
            guard let latest = try store.latestTransaction(account: account, productID: product) else {
                throw APIError(404, "noTransaction", "\(account) has no transaction for \(product)")
            }
            return SimulatorWire.Transaction(latest)
        }
        group.post("accounts/:account/offer-codes") { request, context in
            let account = try parameter("account", context)
            let body = try await read(SimulatorWire.OfferCode.self, request)
            let granted = try store.redeemOfferCode(try required(body.code, "code"), account: account)
            return EditedResponse(status: .created, response: SimulatorWire.Transaction(granted))
        }
        group.post("accounts/:account/sync") { request, context in
            let account = try parameter("account", context)
            _ = try await read(SimulatorWire.Empty.self, request)
            return SimulatorWire.Transactions(try store.sync(account: account))
        }
        group.get("accounts/:account/receipt") { request, context in
            let account = try parameter("account", context)
            let receipt = try store.receipt(
                account: account, device: try device(try deviceParameter(request), of: account))
            return SimulatorWire.Receipt(receiptData: Data(receipt.bytes).base64EncodedString())
        }
        group.get("accounts/:account/app-transaction") { request, context in
            let account = try parameter("account", context)
            let device = try device(try deviceParameter(request), of: account)
            return SimulatorWire.AppTransaction(
                signedAppTransaction: try store.appTransaction(account: account, device: device))
        }
        group.get("accounts/:account/updates") { request, context in
            let updates = try store.transactionUpdates(
                account: try parameter("account", context), device: try deviceParameter(request))
            return ServerSentEvents(transactions: updates, heartbeat: configuration.updatesHeartbeat).response()
        }
        group.get("accounts/:account/storefront-updates") { _, context in
            let storefronts = try store.storefrontUpdates(account: try parameter("account", context))
            return ServerSentEvents(storefronts: storefronts, heartbeat: configuration.updatesHeartbeat).response()
        }
        group.get("accounts/:account/renewal-info") { _, context in
            SimulatorWire.RenewalInfos(
                signedRenewalInfo: try store.renewalInfos(account: try parameter("account", context)))
        }
        group.post("accounts/:account/auto-renew") { request, context in
            let account = try parameter("account", context)
            let body = try await read(SimulatorWire.AutoRenew.self, request)
            try store.setAutoRenew(
                account: account, group: try required(body.groupId, "groupId"), enabled: body.enabled)
            return try store.wireAccount(account)
        }
        group.post("accounts/:account/billing-issue") { request, context in
            let account = try parameter("account", context)
            let body = try await read(SimulatorWire.BillingIssue.self, request)
            try store.setBillingIssue(account: account, failing: body.failing)
            return try store.wireAccount(account)
        }
        group.put("accounts/:account/family") { request, context in
            let account = try parameter("account", context)
            let family = try required(try await read(SimulatorWire.Family.self, request).familyId, "familyId")
            guard family.unicodeScalars.count <= 64, family.isOneLineOfText else {
                throw APIError.badRequest("invalidField", "'familyId' must be at most 64 characters on one line")
            }
            try store.joinFamily(family, account: account)
            return try store.wireAccount(account)
        }
        group.delete("accounts/:account/family") { _, context in
            let account = try parameter("account", context)
            try store.leaveFamily(account: account)
            return try store.wireAccount(account)
        }
        group.post("accounts/:account/clear") { request, context in
            let account = try parameter("account", context)
            _ = try await read(SimulatorWire.Empty.self, request)
            try store.clearTransactions(account: account)
            return try store.wireAccount(account)
        }
    }

    // MARK: - Transactions and pending purchases

    private func addTransactions(to group: RouterGroup<ServerRequestContext>) {
        group.delete("transactions/:id") { _, context in
            try store.deleteTransaction(try parameter("id", context))
            return HTTPResponse.Status.noContent
        }
        group.post("transactions/:id/finish") { request, context in
            let id = try parameter("id", context)
            _ = try await read(SimulatorWire.Empty.self, request)
            try store.finish(id)
            return SimulatorWire.Done(finished: id)
        }
        group.post("transactions/:id/refund") { request, context in
            let id = try parameter("id", context)
            let percentage = try await read(SimulatorWire.Refund.self, request).percentage
            if let percentage, !(1...100).contains(percentage) {
                throw APIError.badRequest("invalidField", "'percentage' must be a whole number from 1 to 100")
            }
            _ = try store.refund(id, percentage: percentage.map(Int.init))
            return SimulatorWire.Done(refunded: id)
        }
        group.post("transactions/:id/refund-request") { request, context in
            let id = try parameter("id", context)
            let reason = try await read(SimulatorWire.RefundRequest.self, request).reason
            try store.requestRefund(
                id, reason: reason.map(ConsumptionRequestReason.init(rawValue:)) ?? .unintendedPurchase)
            return EditedResponse(status: .accepted, response: SimulatorWire.Done(refundRequested: id))
        }
        group.post("pending/:id/approve") { request, context in
            let id = try parameter("id", context)
            _ = try await read(SimulatorWire.Empty.self, request)
            return EditedResponse(status: .created, response: SimulatorWire.PurchaseResult(try store.approve(id)))
        }
        group.post("pending/:id/decline") { request, context in
            let id = try parameter("id", context)
            _ = try await read(SimulatorWire.Empty.self, request)
            try store.decline(id)
            return SimulatorWire.Done(declined: id)
        }
    }

    // MARK: - The clock

    private func addClock(to group: RouterGroup<ServerRequestContext>) {
        group.get("clock") { _, _ in try store.wireClock() }
        group.put("clock") { request, _ in
            let body = try await read(SimulatorWire.ClockSetting.self, request)
            guard body.paused != nil || body.speed != nil else {
                throw APIError.badRequest("missingField", "give 'paused', 'speed' or both")
            }
            if let speed = body.speed, !(0.001...AppStoreSimulator.maximumClockSpeed).contains(speed) {
                throw APIError.badRequest(
                    "invalidField", "'speed' must be a number from 0.001 to \(AppStoreSimulator.maximumClockSpeed)")
            }
            try store.setClock(paused: body.paused, speed: body.speed)
            return try store.wireClock()
        }
        group.post("clock/advance") { request, _ in
            let seconds = try await read(SimulatorWire.Advance.self, request).seconds
            guard (1...(5 * 366 * 86_400)).contains(seconds) else {
                throw APIError.badRequest(
                    "invalidField", "'seconds' must be a whole number from 1 to \(5 * 366 * 86_400)")
            }
            try store.advance(by: TimeInterval(seconds))
            return SimulatorWire.Now(now: try store.now)
        }
        group.post("clock/jump") { request, _ in
            let text = try required(try await read(SimulatorWire.Jump.self, request).date, "date")
            guard let date = DateFormat.parse(text) else {
                throw APIError.badRequest(
                    "invalidField", "'date' must be an ISO 8601 date-time, like 2027-01-31T09:00:00Z")
            }
            try store.advance(to: date)
            return SimulatorWire.Now(now: try store.now)
        }
    }

    // MARK: - Reading requests

    /// A strict JSON body of type `T` (none only for a request that changes nothing).
    private func read<T: KnownFields>(_ type: T.Type, _ request: Request) async throws(APIError) -> T {
        try await JSONBody.decode(T.self, from: request, limit: configuration.maximumBodySize)
    }

    /// A member that must not be empty.
    private func required(_ text: String, _ name: String) throws(APIError) -> String {
        guard !text.isEmpty else { throw .badRequest("missingField", "'\(name)' is required") }
        return text
    }

    /// A member that must be a UUID, when present.
    private func uuid(_ text: String?, _ name: String) throws(APIError) -> UUID? {
        try text.map { (text) throws(APIError) in
            guard let uuid = UUID(uuidString: text) else {
                throw .badRequest("invalidField", "'\(name)' must be a UUID")
            }
            return uuid
        }
    }

    /// An app account token, when given.
    private func token(_ text: String?) throws(APIError) -> UUID? {
        try text.map { (text) throws(APIError) in
            guard let uuid = UUID(uuidString: text) else {
                throw .badRequest("invalidAppAccountToken", "appAccountToken must be a UUID")
            }
            return uuid
        }
    }

    /// StoreKit's purchase options from a purchase body: at most one offer.
    private func options(_ body: SimulatorWire.Purchase) throws(APIError) -> PurchaseOptions {
        var offer: OfferChoice? = body.promotionalOffer.map(OfferChoice.promotional)
        for (key, choice) in [
            ("promotionalOfferV2", body.promotionalOfferV2.map(OfferChoice.promotionalV2)),
            ("winBackOfferId", body.winBackOfferId.map { OfferChoice.winBack(offerID: $0) }),
        ] {
            guard let choice else { continue }
            guard offer == nil else {
                throw .badRequest(
                    "invalidField",
                    "a purchase takes one offer: promotionalOffer, promotionalOfferV2 or winBackOfferId (\(key))")
            }
            offer = choice
        }
        let quantity = body.quantity ?? 1
        guard (1...10).contains(quantity) else {
            throw .badRequest("invalidField", "'quantity' must be a whole number from 1 to 10")
        }
        var options = PurchaseOptions(
            quantity: Int(quantity), appAccountToken: try token(body.appAccountToken), offer: offer,
            interrupted: body.interrupted ?? false, userCancels: body.userCancels ?? false)
        options.introductoryOfferEligibility = body.introductoryOfferEligibility
        return options
    }

    /// A path parameter, percent-decoded (an account opened through the library may have any name).
    private func parameter(_ name: String, _ context: ServerRequestContext) throws -> String {
        let raw = try context.parameters.require(name)
        return raw.removingPercentEncoding ?? raw
    }

    /// The errors an operation can be made to fail with: StoreKit's (`StoreKitError`, `Product.PurchaseError`), as
    /// Xcode's StoreKit testing offers them; each answers 503 (the network, the system) or 422 on the routes it
    /// reaches.
    static let injectableFailures = [
        "networkError", "systemError", "notAvailableInStorefront", "notEntitled", "productUnavailable",
        "purchaseNotAllowed", "ineligibleForOffer", "invalidOfferIdentifier", "invalidOfferPrice",
        "invalidOfferSignature", "missingOfferParameters", "unknown",
    ]

    /// The `operation` path parameter: one of the operations StoreKit testing can make fail.
    private func operation(_ context: ServerRequestContext) throws -> SimulatorOperation {
        let name = try parameter("operation", context)
        guard let operation = SimulatorOperation(rawValue: name) else {
            let known = SimulatorOperation.allCases.map(\.rawValue).joined(separator: ", ")
            throw APIError(404, "unknownOperation", "no operation '\(name)': one of \(known)")
        }
        return operation
    }

    /// The `deviceId` query parameter, when given.
    private func deviceParameter(_ request: Request) throws(APIError) -> UUID? {
        guard let text = request.uri.queryParameters.get("deviceId") else { return nil }
        guard let uuid = UUID(uuidString: text) else { throw .badRequest("invalidQuery", "'deviceId' must be a UUID") }
        return uuid
    }

    /// `device`, or the account's first device, signed in on demand (an account opened through the library may have
    /// none).
    private func device(_ device: UUID?, of account: String) throws(SimulatorError) -> UUID {
        if let device { return device }
        if let first = try store.devices(account: account).first { return first }
        return try store.addDevice(account: account)
    }
}

/// The simulator's refusals as answers, in one place: an unknown account, device, transaction or request is 404, a
/// failure of the store itself 503, a malformed argument 400, any other refusal 422; the code is the simulator's.
struct SimulatorErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do { return try await next(request, context) } catch let error as SimulatorError {
            throw APIError(Self.status(of: error.code), error.code.rawValue, error.reason)
        }
    }

    static func status(of code: SimulatorError.Code) -> Int {
        switch code {
        case .unknownAccount, .unknownDevice, .unknownTransaction, .unknownRequest, .unknownFamily: 404
        case .networkError, .systemError, .signingFailed: 503
        case .invalidArgument, .invalidQuantity: 400
        default: 422
        }
    }
}

// Answers the context's encoder writes.
extension SimulatorWire.State: ResponseEncodable {}
extension SimulatorWire.Clock: ResponseEncodable {}
extension SimulatorWire.Trust: ResponseEncodable {}
extension SimulatorWire.Failures: ResponseEncodable {}
extension SimulatorWire.Now: ResponseEncodable {}
extension SimulatorWire.Transaction: ResponseEncodable {}
extension SimulatorWire.Transactions: ResponseEncodable {}
extension SimulatorWire.Account: ResponseEncodable {}
extension SimulatorWire.SignedIn: ResponseEncodable {}
extension SimulatorWire.Products: ResponseEncodable {}
extension SimulatorWire.PurchaseResult: ResponseEncodable {}
extension SimulatorWire.RenewalInfos: ResponseEncodable {}
extension SimulatorWire.AppTransaction: ResponseEncodable {}
extension SimulatorWire.Receipt: ResponseEncodable {}
extension SimulatorWire.Notifications: ResponseEncodable {}
extension SimulatorWire.Done: ResponseEncodable {}
extension SimulatorWire.RateLimit: ResponseEncodable {}
