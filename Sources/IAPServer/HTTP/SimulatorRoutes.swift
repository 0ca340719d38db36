import Foundation
import HTTPTypes
import Hummingbird
import IAPCatalog
import IAPCore
import IAPEntitlements
import IAPSignedData
import IAPSimulator

/// The local App Store's control plane under `/simulator`: what an app's purchase helper (the StoreClient's HTTP
/// backend) and a person in a browser need to drive the simulator that `iapkit serve` runs.
///
/// Everything the simulator signs goes where Apple's would: its notifications to the server's own notification
/// endpoint, its transactions and receipts to the caller, who posts them to `/v1/...` like a real app.
/// The whole group is behind ``OperatorMiddleware``: open in development mode, else only with the admin token.
struct SimulatorRoutes: Sendable {
    let store: AppStoreSimulator
    let configuration: ServerConfiguration
    /// Who may use the group.
    let access: OperatorAccess
    /// The simulated App Store Server API's rate limit, switched on and off here.
    let inAppsRateLimit: InAppsRateLimit

    init(
        store: AppStoreSimulator, configuration: ServerConfiguration, access: OperatorAccess,
        inAppsRateLimit: InAppsRateLimit = InAppsRateLimit()
    ) {
        self.store = store
        self.configuration = configuration
        self.access = access
        self.inAppsRateLimit = inAppsRateLimit
    }

    func add(to router: Router<ServerRequestContext>) {
        let group = router.group("simulator").add(middleware: OperatorMiddleware(access))
        group.get { request, _ in
            try state()
        }
        group.post("accounts") { request, _ in
            try await run(request, allowed: ["accountId", "storefront", "askToBuy", "appAccountToken"]) {
                (body) throws(APIError) in try createAccount(body)
            }
        }
        group.get("accounts/:account") { request, context in
            return try account(try parameter("account", context))
        }
        group.post("accounts/:account/devices") { request, context in
            let account = try parameter("account", context)
            return try await run(request, allowed: []) { (_) throws(APIError) in
                let device = try simulated { () throws(SimulatorError) in try store.addDevice(account: account) }
                return JSONBody.response(["deviceId": device.uuidString], status: .created)
            }
        }
        group.get("accounts/:account/products") { request, context in
            let ids = request.uri.queryParameters.get("ids").map { $0.split(separator: ",").map(String.init) }
            return try products(account: try parameter("account", context), ids: ids)
        }
        group.post("accounts/:account/purchases") { request, context in
            let account = try parameter("account", context)
            return try await run(
                request,
                allowed: [
                    "productId", "deviceId", "quantity", "appAccountToken", "interrupted", "userCancels",
                    "promotionalOffer", "promotionalOfferV2", "introductoryOfferEligibility", "winBackOfferId",
                ]
            ) { (body) throws(APIError) in try purchase(account: account, body) }
        }
        group.get("accounts/:account/transactions") { request, context in
            let account = try parameter("account", context)
            let unfinished = try request.booleanQuery("unfinished") ?? false
            let list = try simulated { () throws(SimulatorError) in
                unfinished
                    ? try store.unfinishedTransactions(account: account) : try store.transactions(account: account)
            }
            return JSONBody.response(["transactions": list.map(Answers.SimulatedTransaction.init)])
        }
        group.get("accounts/:account/current-entitlements") { request, context in
            let account = try parameter("account", context)
            let list = try simulated { () throws(SimulatorError) in try store.currentEntitlements(account: account) }
            return JSONBody.response(["transactions": list.map(Answers.SimulatedTransaction.init)])
        }
        group.get("accounts/:account/products/:product/latest-transaction") { request, context in
            let account = try parameter("account", context)
            let product = try parameter("product", context)
            let latest = try simulated { () throws(SimulatorError) in
                try store.latestTransaction(account: account, productID: product)
            }
            guard let latest else {
                throw APIError(404, "noTransaction", "\(account) has no transaction for \(product)")
            }
            return JSONBody.response(Answers.SimulatedTransaction(latest))
        }
        group.post("accounts/:account/offer-codes") { request, context in
            let account = try parameter("account", context)
            return try await run(request, allowed: ["code"]) { (body) throws(APIError) in
                let code = try body.requiredString("code")
                let granted = try simulated { () throws(SimulatorError) in
                    try store.redeemOfferCode(code, account: account)
                }
                return JSONBody.response(Answers.SimulatedTransaction(granted), status: .created)
            }
        }
        group.post("accounts/:account/sync") { request, context in
            let account = try parameter("account", context)
            return try await run(request, allowed: []) { (_) throws(APIError) in
                let list = try simulated { () throws(SimulatorError) in try store.sync(account: account) }
                return JSONBody.response(["transactions": list.map(Answers.SimulatedTransaction.init)])
            }
        }
        group.get("accounts/:account/receipt") { request, context in
            return try receipt(account: try parameter("account", context), device: try deviceParameter(request))
        }
        group.get("accounts/:account/app-transaction") { request, context in
            let account = try parameter("account", context)
            let device = try deviceParameter(request)
            let signed = try simulated { () throws(SimulatorError) in
                try store.appTransaction(account: account, device: try self.device(device, of: account))
            }
            return JSONBody.response(["signedAppTransaction": signed])
        }
        group.get("accounts/:account/updates") { request, context in
            let account = try parameter("account", context)
            let device = try deviceParameter(request)
            let updates = try simulated { () throws(SimulatorError) in
                try store.transactionUpdates(account: account, device: device)
            }
            return TransactionUpdateEvents(updates: updates, heartbeat: configuration.updatesHeartbeat).response()
        }
        group.get("accounts/:account/renewal-info") { request, context in
            let account = try parameter("account", context)
            let infos = try simulated { () throws(SimulatorError) in try store.renewalInfos(account: account) }
            return JSONBody.response(["signedRenewalInfo": infos])
        }
        group.post("accounts/:account/auto-renew") { request, context in
            let account = try parameter("account", context)
            return try await run(request, allowed: ["groupId", "enabled"]) { (body) throws(APIError) in
                let groupID = try body.requiredString("groupId")
                guard let enabled = try body.bool("enabled") else {
                    throw .badRequest("missingField", "'enabled' is required")
                }
                try simulated { () throws(SimulatorError) in
                    try store.setAutoRenew(account: account, group: groupID, enabled: enabled)
                }
                return try self.account(account)
            }
        }
        group.post("accounts/:account/billing-issue") { request, context in
            let account = try parameter("account", context)
            return try await run(request, allowed: ["failing"]) { (body) throws(APIError) in
                guard let failing = try body.bool("failing") else {
                    throw .badRequest("missingField", "'failing' is required")
                }
                try simulated { () throws(SimulatorError) in
                    try store.setBillingIssue(account: account, failing: failing)
                }
                return try self.account(account)
            }
        }
        group.put("accounts/:account/family") { request, context in
            let account = try parameter("account", context)
            return try await run(request, allowed: ["familyId"]) { (body) throws(APIError) in
                let family = try body.requiredString("familyId")
                guard family.count <= 64 else { throw .badRequest("invalidField", "'familyId' is longer than 64") }
                try simulated { () throws(SimulatorError) in try store.joinFamily(family, account: account) }
                return try self.account(account)
            }
        }
        group.delete("accounts/:account/family") { request, context in
            let account = try parameter("account", context)
            try simulated { () throws(SimulatorError) in try store.leaveFamily(account: account) }
            return try self.account(account)
        }
        group.post("accounts/:account/clear") { request, context in
            let account = try parameter("account", context)
            return try await run(request, allowed: []) { (_) throws(APIError) in
                try simulated { () throws(SimulatorError) in try store.clearTransactions(account: account) }
                return try self.account(account)
            }
        }
        group.delete("transactions/:id") { request, context in
            let id = try parameter("id", context)
            try simulated { () throws(SimulatorError) in try store.deleteTransaction(id) }
            return Response(status: .noContent)
        }
        group.post("transactions/:id/finish") { request, context in
            let id = try parameter("id", context)
            return try await run(request, allowed: []) { (_) throws(APIError) in
                try simulated { () throws(SimulatorError) in try store.finish(id) }
                return JSONBody.response(["finished": id])
            }
        }
        group.post("transactions/:id/refund") { request, context in
            let id = try parameter("id", context)
            return try await run(request, allowed: ["percentage"]) { (body) throws(APIError) in
                let percentage = try body.integer("percentage", in: 1...100).map(Int.init)
                try simulated { () throws(SimulatorError) in _ = try store.refund(id, percentage: percentage) }
                return JSONBody.response(["refunded": id])
            }
        }
        group.post("transactions/:id/refund-request") { request, context in
            let id = try parameter("id", context)
            return try await run(request, allowed: ["reason"]) { (body) throws(APIError) in
                let reason = try body.string("reason").map(ConsumptionRequestReason.init(rawValue:))
                try simulated { () throws(SimulatorError) in
                    try store.requestRefund(id, reason: reason ?? .unintendedPurchase)
                }
                return JSONBody.response(["refundRequested": id], status: .accepted)
            }
        }
        group.post("pending/:id/approve") { request, context in
            let id = try parameter("id", context)
            return try await run(request, allowed: []) { (_) throws(APIError) in
                let outcome = try simulated { () throws(SimulatorError) in try store.approve(id) }
                return JSONBody.response(Answers.PurchaseResult(outcome), status: .created)
            }
        }
        group.post("pending/:id/decline") { request, context in
            let id = try parameter("id", context)
            return try await run(request, allowed: []) { (_) throws(APIError) in
                try simulated { () throws(SimulatorError) in try store.decline(id) }
                return JSONBody.response(["declined": id])
            }
        }
        group.get("clock") { request, _ in
            return try clockAnswer()
        }
        group.put("clock") { request, _ in
            try await run(request, allowed: ["paused", "speed"]) { (body) throws(APIError) in
                let paused = try body.bool("paused")
                let speed = try body.number("speed", in: 0.001...AppStoreSimulator.maximumClockSpeed)
                guard paused != nil || speed != nil else {
                    throw .badRequest("missingField", "give 'paused', 'speed' or both")
                }
                try simulated { () throws(SimulatorError) in try store.setClock(paused: paused, speed: speed) }
                return try clockAnswer()
            }
        }
        group.post("clock/advance") { request, _ in
            try await run(request, allowed: ["seconds"]) { (body) throws(APIError) in
                guard let seconds = try body.integer("seconds", in: 1...(5 * 366 * 86_400)) else {
                    throw .badRequest("missingField", "'seconds' is required")
                }
                try simulated { () throws(SimulatorError) in try store.advance(by: TimeInterval(seconds)) }
                return JSONBody.response(["now": try simulated { () throws(SimulatorError) in try store.now }])
            }
        }
        group.post("clock/jump") { request, _ in
            try await run(request, allowed: ["date"]) { (body) throws(APIError) in
                let text = try body.requiredString("date")
                guard let date = DateFormat.parse(text) else {
                    throw .badRequest("invalidField", "'date' must be an ISO 8601 date-time, like 2027-01-31T09:00:00Z")
                }
                try simulated { () throws(SimulatorError) in try store.advance(to: date) }
                return JSONBody.response(["now": try simulated { () throws(SimulatorError) in try store.now }])
            }
        }
        group.put("inapps/rate-limit") { request, _ in
            try await run(request, allowed: ["requests", "windowSeconds"]) { (body) throws(APIError) in
                guard let requests = try body.integer("requests", in: 0...1_000_000),
                    let window = try body.integer("windowSeconds", in: 1...3600)
                else { throw .badRequest("missingField", "'requests' and 'windowSeconds' are required") }
                inAppsRateLimit.set(.init(requests: Int(requests), window: Int(window)))
                return JSONBody.response(["requests": requests, "windowSeconds": window])
            }
        }
        group.delete("inapps/rate-limit") { request, _ in
            inAppsRateLimit.set(nil)
            return Response(status: .noContent)
        }
        group.get("notifications") { request, _ in
            let since = try request.integerQuery("since", in: 0...Int.max) ?? 0
            let all = store.notifications
            let start = min(max(since, 0), all.count)
            let page = all[start..<min(start + 500, all.count)]
            return JSONBody.response(
                Answers.SimulatedNotifications(
                    notifications: page.enumerated().map {
                        Answers.SimulatedNotification(
                            index: start + $0, $1, attempts: store.sendAttempts(notificationUUID: $1.uuid))
                    },
                    next: start + page.count))
        }
    }

    // MARK: - Handlers

    /// Reads a strict JSON body (none only for a request that changes nothing), and runs the handler.
    private func run(
        _ request: Request, allowed: Set<String> = ["accountId", "storefront", "askToBuy"],
        _ handler: (RequestDocument) throws(APIError) -> Response
    ) async throws(APIError) -> Response {
        let bytes = try await JSONBody.bytes(of: request, limit: configuration.maximumBodySize)
        if bytes.isEmpty && RequestGuardMiddleware<ServerRequestContext>.needsBody(request.method) {
            throw APIError(400, "emptyBody", "the body is empty: send a JSON object ({} when there is nothing to say)")
        }
        let body = try RequestDocument(bytes: bytes.isEmpty ? Array("{}".utf8) : bytes, allowed: allowed)
        return try handler(body)
    }

    /// The simulated moment, and how the clock goes when it runs with the wall clock.
    private func clockAnswer() throws(APIError) -> Response {
        let now = try simulated { () throws(SimulatorError) in try store.now }
        return JSONBody.response(
            Answers.SimulatedClock(now: now, paused: store.clockSetting?.paused, speed: store.clockSetting?.speed))
    }

    private func state() throws(APIError) -> Response {
        let now = try simulated { () throws(SimulatorError) in try store.now }
        return JSONBody.response(
            Answers.SimulatorState(
                bundleId: store.configuration.bundleID, environment: store.configuration.environment.rawValue,
                now: now, accounts: store.accountIDs,
                productIds: store.catalog.products.map(\.id),
                pendingPurchases: store.pendingPurchases.map(Answers.Pending.init),
                notifications: store.statistics.notifications, transactions: store.statistics.transactions))
    }

    private func createAccount(_ body: RequestDocument) throws(APIError) -> Response {
        let id = try body.requiredString("accountId")
        guard id.count <= 64, id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw .badRequest("invalidField", "'accountId' must be 1 to 64 letters, digits, - or _")
        }
        let storefront = try body.string("storefront") ?? "USA"
        let askToBuy = try body.bool("askToBuy") ?? false
        let token = try body.string("appAccountToken").map { (text) throws(APIError) in
            guard let uuid = UUID(uuidString: text) else {
                throw .badRequest("invalidAppAccountToken", "appAccountToken must be a UUID")
            }
            return uuid
        }
        let device = try simulated { () throws(SimulatorError) in
            try store.createAccount(id, storefront: storefront, appAccountToken: token, askToBuy: askToBuy)
            return try store.addDevice(account: id)
        }
        return JSONBody.response(["accountId": id, "deviceId": device.uuidString], status: .created)
    }

    private func account(_ id: String) throws(APIError) -> Response {
        let (devices, view, transactions, settings) = try simulated { () throws(SimulatorError) in
            (
                try store.devices(account: id), try store.view(account: id), try store.transactions(account: id),
                try store.settings(account: id)
            )
        }
        return JSONBody.response(
            Answers.SimulatedAccount(
                accountId: id, storefront: settings.storefront, askToBuy: settings.askToBuy,
                billingFails: settings.billingFails, familyId: settings.familyID,
                appAccountToken: settings.appAccountToken?.uuidString.lowercased(),
                deviceIds: devices.map(\.uuidString),
                entitledProductIds: view.entitledProductIDs.sorted(),
                consumablesPurchased: view.consumablePurchased,
                subscriptions: view.subscriptions.sorted { $0.key < $1.key }.map { group, subscription in
                    Answers.SimulatedSubscription(
                        groupId: group, subscription, groupName: store.catalog.group(group)?.name)
                },
                transactions: transactions.map(Answers.SimulatedTransaction.init)))
    }

    private func products(account: String, ids: [String]?) throws(APIError) -> Response {
        let wanted = ids ?? store.catalog.products.map(\.id)
        let products = try simulated { () throws(SimulatorError) in try store.products(wanted, account: account) }
        return JSONBody.response([
            "products": products.map { product in
                Answers.SimulatedProduct(
                    product, groupName: product.subscriptionGroupID.flatMap { store.catalog.group($0)?.name },
                    groupLevel: store.catalog.product(product.id)?.subscription?.level)
            }
        ])
    }

    private func purchase(account: String, _ body: RequestDocument) throws(APIError) -> Response {
        let productID = try body.requiredString("productId")
        let device = try body.uuid("deviceId")
        let token = try body.string("appAccountToken").map { (text) throws(APIError) in
            guard let uuid = UUID(uuidString: text) else {
                throw .badRequest("invalidAppAccountToken", "appAccountToken must be a UUID")
            }
            return uuid
        }
        var offer: OfferChoice?
        if let promotional = try body.object(
            "promotionalOffer", allowed: ["offerId", "keyId", "nonce", "timestamp", "signature"])
        {
            guard let nonce = try promotional.uuid("nonce"),
                let timestamp = try promotional.integer("timestamp", in: 0...Int64.max)
            else {
                throw .badRequest("missingField", "'promotionalOffer' needs nonce and timestamp")
            }
            offer = .promotional(
                PromotionalOfferSignature(
                    offerID: try promotional.requiredString("offerId"), keyID: try promotional.requiredString("keyId"),
                    nonce: nonce, timestamp: timestamp, signature: try promotional.requiredString("signature")))
        }
        for (key, choice) in [
            ("promotionalOfferV2", try body.string("promotionalOfferV2").map(OfferChoice.promotionalV2)),
            ("winBackOfferId", try body.string("winBackOfferId").map { OfferChoice.winBack(offerID: $0) }),
        ] {
            guard let choice else { continue }
            guard offer == nil else {
                throw .badRequest(
                    "invalidField",
                    "a purchase takes one offer: promotionalOffer, promotionalOfferV2 or winBackOfferId (\(key))")
            }
            offer = choice
        }
        var options = PurchaseOptions(
            quantity: Int(try body.integer("quantity", in: 1...10) ?? 1), appAccountToken: token, offer: offer,
            interrupted: try body.bool("interrupted") ?? false, userCancels: try body.bool("userCancels") ?? false)
        options.introductoryOfferEligibility = try body.string("introductoryOfferEligibility")
        let outcome = try simulated { () throws(SimulatorError) in
            try store.purchase(productID, account: account, device: device, options: options)
        }
        let status: HTTPResponse.Status =
            switch outcome {
            case .purchased: .created
            case .pending: .accepted
            case .userCancelled: .ok
            }
        return JSONBody.response(Answers.PurchaseResult(outcome), status: status)
    }

    /// A path parameter, percent-decoded (an account opened through the library may have any name).
    private func parameter(_ name: String, _ context: ServerRequestContext) throws -> String {
        let raw = try context.parameters.require(name)
        return raw.removingPercentEncoding ?? raw
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

    private func receipt(account: String, device: UUID?) throws(APIError) -> Response {
        let receipt = try simulated { () throws(SimulatorError) in
            try store.receipt(account: account, device: try self.device(device, of: account))
        }
        return JSONBody.response(["receiptData": Data(receipt.bytes).base64EncodedString()])
    }

    /// Runs a simulator call, turning its errors into answers: unknown things 404, refused operations 422, simulated
    /// outages 503.
    private func simulated<T>(_ body: () throws(SimulatorError) -> T) throws(APIError) -> T {
        do { return try body() } catch {
            let status: Int =
                switch error.code {
                case .unknownAccount, .unknownDevice, .unknownTransaction, .unknownRequest, .unknownFamily: 404
                case .networkError, .systemError, .signingFailed: 503
                case .invalidArgument, .invalidQuantity: 400
                default: 422
                }
            throw APIError(status, error.code.rawValue, error.reason)
        }
    }
}
