// One simulated year for 10,000 monthly subscribers, every artifact signed: each renewal's transaction, renewal info
// and App Store Server Notification (ES256), and at the end one app receipt per subscriber (RSA-2048). Some cards
// fail (half fixed inside the grace period, half never, so billing retry gives up), some purchases are refunded,
// some subscribers turn auto-renew off. Baseline, same run: bare signing (the same signer, one payload) at the rate
// the machine signs, scaled to the number of signatures the simulation made: the floor any simulator must pay.
//
// Run from the Benchmarks folder, pinned to one core:
//   swift build -c release --product SimulatorYear && taskset -c 1 .build/release/SimulatorYear [subscribers]
import Foundation
import IAPCatalog
import IAPReceipts
import IAPSignedData
import IAPSimulator

let subscribers = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 10_000 : 10_000
let start = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01
let month = SubscriptionPeriod(value: 1, unit: .month)
func day(_ n: Double) -> TimeInterval { n * 86_400 }

let catalog = Catalog(
    products: ["gold", "silver", "bronze"].enumerated().map { index, name in
        CatalogProduct(
            id: "com.example.florist.vip.\(name)", kind: .autoRenewable, price: [9.99, 5.99, 2.99][index],
            familyShareable: true, subscription: SubscriptionInfo(groupID: "VIP", level: index + 1, period: month))
    },
    subscriptionGroups: [
        SubscriptionGroup(
            id: "VIP", name: "VIP",
            productIDs: ["gold", "silver", "bronze"].map { "com.example.florist.vip.\($0)" })
    ])

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

let pki = try SimulatorPKI(keys: .generate())
let configuration = SimulatorConfiguration(
    bundleID: "com.example.florist", start: start, billingGracePeriodEnabled: true)
let store = try AppStoreSimulator(catalog: catalog, configuration: configuration, pki: pki, keepsRecords: false)
let clock = ContinuousClock()

let began = clock.now
var devices: [UUID] = []
for index in 0..<subscribers {
    let account = "customer-\(index)"
    try store.createAccount(account)
    devices.append(try store.addDevice(account: account))
    let product = catalog.products[index % 3].id
    _ = try store.purchase(product, account: account)
    // Spread the purchases over the first month.
    if index % (max(1, subscribers / 30)) == 0 { try store.advance(by: day(1) / 10) }
}
try store.advance(to: month.advance(start, by: 3))
let failing = stride(from: 0, to: subscribers, by: 20).map { "customer-\($0)" }  // 5%
for account in failing { try store.setBillingIssue(account: account, failing: true) }
try store.advance(to: month.advance(start, by: 4) + day(10))
for account in failing.enumerated().filter({ $0.offset % 2 == 0 }).map(\.element) {  // half recover
    try store.setBillingIssue(account: account, failing: false)
}
try store.advance(to: month.advance(start, by: 6))
for index in stride(from: 7, to: subscribers, by: 100) {  // 1% refunded
    let account = "customer-\(index)"
    if let latest = try store.transactions(account: account).last { try store.refund(latest.transactionID) }
}
try store.advance(to: month.advance(start, by: 8))
for index in stride(from: 3, to: subscribers, by: 50) {  // 2% stop renewing
    try? store.setAutoRenew(account: "customer-\(index)", group: "VIP", enabled: false)
}
try store.advance(to: month.advance(start, by: 12))
let simulated = clock.now
for (index, device) in devices.enumerated() { _ = try store.receipt(account: "customer-\(index)", device: device) }
let finished = clock.now

let statistics = store.statistics
let total = seconds(finished - began)
let year = seconds(simulated - began)
let receipts = seconds(finished - simulated)

// Baseline: bare signatures with the same keys, same run.
let signer = try pki.jwsSigner()
var payload = TransactionPayload()
payload.transactionID = "2000000000000001"
payload.productID = "com.example.florist.vip.gold"
payload.bundleID = "com.example.florist"
let sampleJWS = 20_000
let jwsStart = clock.now
for _ in 0..<sampleJWS { _ = try signer.sign(payload) }
let jwsRate = Double(sampleJWS) / seconds(clock.now - jwsStart)
let receipt = AppReceipt(bundleID: "com.example.florist", appVersion: "1.0")
let sampleReceipts = 300
let receiptStart = clock.now
for _ in 0..<sampleReceipts { _ = try pki.receiptSigner.sign(receipt) }
let receiptRate = Double(sampleReceipts) / seconds(clock.now - receiptStart)
let floor = Double(statistics.jwsSignatures) / jwsRate + Double(statistics.receiptSignatures) / receiptRate

func f(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }
print("Simulated one year for \(subscribers) monthly subscribers, every artifact signed")
print(
    "  events \(statistics.events), transactions \(statistics.transactions), notifications \(statistics.notifications)")
print(
    "  signatures \(statistics.signatures) (ES256 \(statistics.jwsSignatures), RSA receipts \(statistics.receiptSignatures))"
)
print("  wall time \(f(total)) s (year \(f(year)) s + final receipts \(f(receipts)) s)")
print(
    "  \(f(Double(statistics.events) / total, 0)) events/s, \(f(Double(statistics.signatures) / total, 0)) signatures/s"
)
print(
    "  baseline (bare signing, same run): ES256 \(f(jwsRate, 0))/s, RSA \(f(receiptRate, 0))/s -> floor \(f(floor)) s")
print("  simulator / floor: \(f(total / floor, 2))x")
