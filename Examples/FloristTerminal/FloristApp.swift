import Foundation
import IAPCatalog
import IAPEntitlements
import IAPReceipts
import IAPSignedData
import IAPStoreClient
import IAPStoreClientTesting
import IAPTrust

/// The app: one `Store` at a time (a new one when the validation mode changes), a screen after each command, and a
/// fresh screen when the store reports something the person did not ask for (a renewal, an approval, a refund).
struct FloristApp: Sendable {
    let catalog: Catalog
    let backend: HTTPStoreBackend
    let trust: TrustStore
    let server: URL
    let apiKey: String?
    let output: Screen
    /// One cache for every validation mode, so what the device knows (consumable counts among it) survives a switch.
    let persistence = MemoryStorePersistence()
    /// The app's id for this person, carried by every purchase: the validation server knows them by it in any mode.
    let appAccountToken = UUID()

    /// What reaches the app: a typed line, an event from the store, or the end of the input.
    private enum Input: Sendable {
        case line(String)
        case event(StoreEvent)
        case endOfInput
    }

    func run(startingIn initialMode: ValidationChoice) async throws {
        let (inputs, sink) = AsyncStream.makeStream(of: Input.self)
        // Reading the terminal blocks, so it happens on a thread of its own, never on the concurrency pool.
        Thread.detachNewThread {
            while let line = readLine() { sink.yield(.line(line)) }
            sink.yield(.endOfInput)
        }
        var mode = initialMode
        var (store, listener) = try await open(mode, events: sink)
        var message = "Welcome. Type help for the commands."
        await show(store, mode, message)
        for await input in inputs {
            switch input {
            case .endOfInput:
                listener.cancel()
                return
            case .event(let event):
                guard let notice = Self.notice(for: event) else { continue }
                message = notice
            case .line(let text):
                let words = text.split(separator: " ").map(String.init)
                guard let command = words.first?.lowercased() else { continue }
                let argument = words.dropFirst().joined(separator: " ")
                if command == "quit" || command == "q" {
                    listener.cancel()
                    return
                }
                if command == "mode" {
                    guard let chosen = ValidationChoice(rawValue: argument) else {
                        message = "mode takes signed, receipt or server."
                        break
                    }
                    do {
                        listener.cancel()
                        (store, listener) = try await open(chosen, events: sink)
                        mode = chosen
                        message = "Now: \(chosen.title)."
                    } catch {
                        message = "Cannot switch: \(error)"
                        (store, listener) = try await open(mode, events: sink)
                    }
                } else {
                    message = await perform(command, argument, on: store)
                }
            }
            await show(store, mode, message)
        }
    }

    /// A started store in `mode`, its events forwarded to the app's input.
    private func open(
        _ mode: ValidationChoice, events sink: AsyncStream<Input>.Continuation
    ) async throws -> (Store, Task<Void, Never>) {
        let validation: ValidationMode
        switch mode {
        case .signed:
            validation = .signedTransactions(
                try SignedDataVerifier(
                    trustStore: trust,
                    configuration: .init(bundleID: "com.example.florist", environments: [.sandbox, .xcode])))
        case .receipt:
            validation = .appReceipt(
                ReceiptVerifier(trustStore: trust, configuration: .init(bundleID: "com.example.florist")))
        case .server:
            guard let apiKey else { throw FloristError("server validation needs --app-key") }
            validation = .server(ValidationServer(url: server, apiKey: apiKey, document: .signedTransaction))
        }
        let store = Store(
            catalog: catalog, backend: backend, validation: validation, persistence: persistence,
            appAccountToken: appAccountToken)
        let events = await store.events()
        let listener = Task {
            for await event in events { sink.yield(.event(event)) }
        }
        await store.start()
        return (store, listener)
    }

    // MARK: - Commands

    private func perform(_ command: String, _ argument: String, on store: Store) async -> String {
        do {
            switch command {
            case "buy":
                let product = try await chosenProduct(argument, store)
                let result = try await store.purchase(product.id)
                let transaction = result.transaction.map { " Transaction \($0.id)." } ?? ""
                return "\(product.displayName): \(Self.describe(result.state)).\(transaction)"
            case "consume":
                let product = try await chosenProduct(argument, store)
                try await store.consume(product.id)
                return "Used one \(product.displayName); \(await store.consumableCount(product.id)) left."
            case "restore":
                try await store.restore()
                return "Restored: \(await store.purchasedProductIDs.count) products owned."
            case "refund":
                let product = try await chosenProduct(argument, store)
                guard let transactionID = await latestTransactionID(of: product, store) else {
                    return "Nothing to refund for \(product.displayName)."
                }
                _ = try await store.requestRefund(transactionID: transactionID)
                return "Refund requested for \(product.displayName); Apple decides later."
            case "redeem":
                try await store.redeemOfferCode(argument)
                return "Code \(argument) entered; a transaction it grants arrives as an update."
            case "refresh":
                await store.reconcile()
                return "Refreshed."
            case "help", "?":
                return "buy N, consume N, restore, refund N, redeem CODE, mode signed|receipt|server, refresh, quit."
            default:
                return "Unknown command '\(command)'. Type help."
            }
        } catch let error as StoreError {
            return "Failed (\(error.code.rawValue)): \(error.reason)"
        } catch {
            return "Failed: \(error)"
        }
    }

    private func chosenProduct(_ argument: String, _ store: Store) async throws -> StoreProduct {
        let listed = await Self.listing(of: store, catalog).flatMap(\.products)
        if let number = Int(argument), listed.indices.contains(number - 1) { return listed[number - 1] }
        if let product = listed.first(where: { $0.id == argument }) { return product }
        throw FloristError("no product \(argument.isEmpty ? "given" : "'\(argument)'"); use its number")
    }

    private func latestTransactionID(of product: StoreProduct, _ store: Store) async -> String? {
        if let group = product.subscriptionGroupID {
            return await store.subscriptionInfo(group: group)?.currentTransactionID
        }
        return await store.purchaseInfo(product.id)?.transactionID
    }

    // MARK: - The screen

    /// A section of the product list.
    struct Section {
        var title: String
        var products: [StoreProduct]
    }

    /// Products by section, numbered in this order on the screen.
    static func listing(of store: Store, _ catalog: Catalog) async -> [Section] {
        var sections = [
            Section(title: "Flowers and gifts", products: await store.products(of: .nonConsumable)),
            Section(title: "Services", products: await store.products(of: .consumable)),
        ]
        for group in catalog.subscriptionGroups {
            sections.append(Section(title: group.name, products: await store.subscriptions(inGroup: group.id)))
        }
        sections.append(Section(title: "Passes", products: await store.products(of: .nonRenewable)))
        return sections.filter { !$0.products.isEmpty }
    }

    private func show(_ store: Store, _ mode: ValidationChoice, _ message: String) async {
        var lines = ["Florist · \(backend.account) · \(mode.title) · \(Self.describe(await store.origin))", ""]
        var number = 0
        for section in await Self.listing(of: store, catalog) {
            lines.append(section.title)
            for product in section.products {
                number += 1
                var badge = ""
                if product.kind == .consumable {
                    let count = await store.consumableCount(product.id)
                    badge = count > 0 ? "× \(count)" : ""
                } else if await store.isPurchased(product.id) {
                    badge = "✓ owned"
                }
                let price = product.displayPrice + (product.subscriptionPeriod.map { " / \(Self.describe($0))" } ?? "")
                lines.append(
                    "  \(String(number).leftPadded(2)). \(product.displayName.rightPadded(22)) "
                        + "\(price.rightPadded(16)) \(badge)")
            }
            lines.append("")
        }
        for group in catalog.subscriptionGroups {
            guard let info = await store.subscriptionInfo(group: group.id), let current = info.currentProductID else {
                continue
            }
            var line = "\(group.name): \(name(of: current, store: await store.products)), \(info.state.rawValue)"
            if let expires = info.expiresDate {
                switch info.willAutoRenew {
                case true?: line += ", renews \(Self.day(expires))"
                case false?: line += ", ends \(Self.day(expires))"
                case nil: line += ", paid until \(Self.day(expires))"  // a receipt does not say what comes next
                }
            }
            if let next = info.renewsToProductID, next != current, let change = info.pendingChange {
                line += " (then \(name(of: next, store: await store.products)), \(change.rawValue))"
            }
            lines.append(line)
        }
        lines.append("» \(message)")
        lines.append("buy N · consume N · restore · refund N · redeem CODE · mode signed|receipt|server · quit")
        output.show(lines)
    }

    private func name(of productID: String, store products: [StoreProduct]) -> String {
        products.first { $0.id == productID }?.displayName ?? productID
    }

    static func notice(for event: StoreEvent) -> String? {
        let product = event.productID ?? "a product"
        switch event.kind {
        case .transactionUpdated: return "Update from the App Store: \(product)."
        case .refunded: return "Refunded: \(product) is no longer yours."
        default: return nil
        }
    }

    static func describe(_ state: PurchaseState) -> String {
        switch state {
        case .notStarted: "not started"
        case .inProgress: "in progress"
        case .purchased: "purchased"
        case .pending: "waiting for approval"
        case .cancelled: "cancelled"
        case .failed(let error): "failed (\(error.code.rawValue))"
        case .failedVerification(let error): "refused: \(error.reason)"
        }
    }

    static func describe(_ origin: EntitlementOrigin) -> String {
        switch origin {
        case .none: "not loaded"
        case .cache: "from the cache"
        case .verified: "verified"
        }
    }

    static func describe(_ period: SubscriptionPeriod) -> String {
        period.value == 1 ? "\(period.unit.rawValue)" : "\(period.value) \(period.unit.rawValue)s"
    }

    static func day(_ date: Date) -> String { String(date.ISO8601Format().prefix(10)) }
}

struct FloristError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension String {
    fileprivate func rightPadded(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
