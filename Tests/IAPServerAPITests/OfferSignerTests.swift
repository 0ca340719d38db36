import Crypto
import Foundation
import IAPCatalog
import IAPCore
import IAPServerAPI
import IAPSignedData
import IAPSimulator
import IAPTestSupport
import Synchronization
import Testing

/// Offer signatures as Apple's server libraries make them: ours are accepted by the simulator and refused when the
/// key id, the key, the age or the nonce is wrong; Apple's Python library's are accepted too, and ours match its
/// byte layout.
@Suite struct OfferSignerTests {
    static let credentials = ServerAPITokensTests.credentials
    static let gold = "com.example.florist.vip.gold"
    static let day: TimeInterval = 86_400

    static func simulator(start: Date = Date(timeIntervalSince1970: 1_767_225_600)) throws -> AppStoreSimulator {
        var configuration = SimulatorConfiguration(bundleID: credentials.bundleID, start: start)
        configuration.serverAPIKeys = [credentials.keyID: credentials.privateKey.publicKey]
        configuration.serverAPIIssuerID = credentials.issuerID
        return try AppStoreSimulator(
            catalogFile: "Examples/Florist/Florist.storekit", configuration: configuration, pki: SimulatorTestKeys.pki)
    }

    /// A customer whose gold subscription lapsed (eligible for promotional offers, not for the introductory one).
    static func lapsed(_ account: String, _ simulator: AppStoreSimulator) throws -> String {
        try simulator.createAccount(account)
        let bought = try #require(try simulator.purchase(gold, account: account).transaction)
        try simulator.setAutoRenew(account: account, group: "21000001", enabled: false)
        try simulator.advance(by: 40 * day)
        return bought.transactionID
    }

    /// Nonces 1, 2, 3, ... so every run signs the same claims.
    static func counter() -> @Sendable () -> UUID {
        let next = Mutex(0)
        return {
            let number = next.withLock { value -> Int in
                value += 1
                return value
            }
            return UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", number))!
        }
    }

    static func signer(
        _ simulator: AppStoreSimulator, key: P256.Signing.PrivateKey = credentials.privateKey,
        keyID: String = credentials.keyID, shift: TimeInterval = 0
    ) -> OfferSigner {
        OfferSigner(
            credentials: ServerAPICredentials(
                keyID: keyID, issuerID: credentials.issuerID, bundleID: credentials.bundleID, privateKey: key),
            clock: { ((try? simulator.now) ?? Date()).addingTimeInterval(shift) }, nonces: counter())
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64(date.timeIntervalSince1970 * 1000) }

    static func v1(
        _ signer: OfferSigner, nonce: UUID, timestamp: Int64, offerID: String = "comeback"
    ) throws -> PurchaseOptions {
        let signature = try signer.promotionalOfferSignature(
            productID: gold, offerID: offerID, nonce: nonce, timestamp: timestamp)
        return PurchaseOptions(
            offer: .promotional(
                PromotionalOffer(
                    offerID: offerID, keyID: signer.credentials.keyID, nonce: nonce, timestamp: timestamp,
                    signature: signature)))
    }

    static func refusal(_ simulator: AppStoreSimulator, _ account: String, _ options: PurchaseOptions)
        -> SimulatorError.Code?
    {
        (#expect(throws: SimulatorError.self) { try simulator.purchase(gold, account: account, options: options) })?
            .code
    }

    @Test func promotionalOfferSignaturesV1AreCheckedAsTheAppStoreChecksThem() throws {
        let simulator = try Self.simulator()
        _ = try Self.lapsed("ana", simulator)
        let signer = Self.signer(simulator)
        let now = Self.milliseconds(try simulator.now)
        let stranger = TestJWS.key("stranger")

        #expect(
            Self.refusal(
                simulator, "ana", try Self.v1(Self.signer(simulator, key: stranger), nonce: UUID(), timestamp: now))
                == .invalidOfferSignature)
        #expect(
            Self.refusal(
                simulator, "ana", try Self.v1(Self.signer(simulator, keyID: "NOSUCHKEY"), nonce: UUID(), timestamp: now)
            ) == .invalidOfferSignature)
        #expect(
            Self.refusal(simulator, "ana", try Self.v1(signer, nonce: UUID(), timestamp: now - 25 * 3_600_000))
                == .invalidOfferSignature)

        let nonce = UUID(uuidString: "5F3C8A2E-7B1D-4E6F-9A0B-1C2D3E4F5A6B")!
        let options = try Self.v1(signer, nonce: nonce, timestamp: now)
        let bought = try #require(try simulator.purchase(Self.gold, account: "ana", options: options).transaction)
        #expect(bought.payload.offerType == .promotional && bought.payload.offerIdentifier == "comeback")
        #expect(Self.refusal(simulator, "ana", options) == .invalidOfferSignature, "a nonce is good once")
    }

    @Test func promotionalOfferV2AndIntroductoryEligibilityJWSAreCheckedToo() async throws {
        let simulator = try Self.simulator()
        let ben = try Self.lapsed("ben", simulator)
        let dee = try Self.lapsed("dee", simulator)
        let signer = Self.signer(simulator)
        let v2 = { (signer: OfferSigner, transaction: String?) throws -> PurchaseOptions in
            PurchaseOptions(
                offer: .promotionalV2(
                    try signer.promotionalOfferV2(productID: Self.gold, offerID: "comeback", transactionID: transaction)
                ))
        }
        #expect(
            Self.refusal(simulator, "ben", try v2(Self.signer(simulator, key: TestJWS.key("stranger")), ben))
                == .invalidOfferSignature)
        #expect(
            Self.refusal(simulator, "ben", try v2(Self.signer(simulator, keyID: "NOSUCHKEY"), ben))
                == .invalidOfferSignature)
        #expect(
            Self.refusal(simulator, "ben", try v2(Self.signer(simulator, shift: -25 * 3600), ben))
                == .invalidOfferSignature)
        #expect(Self.refusal(simulator, "ben", try v2(signer, dee)) == .invalidOfferSignature, "another customer's id")
        let options = try v2(signer, ben)
        let bought = try #require(try simulator.purchase(Self.gold, account: "ben", options: options).transaction)
        #expect(bought.payload.offerType == .promotional && bought.payload.offerIdentifier == "comeback")
        #expect(Self.refusal(simulator, "ben", options) == .invalidOfferSignature, "a nonce is good once")

        // A newcomer the developer refuses the trial to; a lapsed customer the developer grants it to again.
        try simulator.createAccount("cy")
        let device = try simulator.addDevice(account: "cy")
        let verifier = try SignedDataVerifier(
            trustStore: SimulatorTestKeys.pki.trustStore,
            configuration: .init(bundleID: Self.credentials.bundleID, environments: [.sandbox]))
        let app = try await verifier.verifyAppTransaction(try simulator.appTransaction(account: "cy", device: device))
        let cy = try #require(app.verifiedPayload?.appTransactionID)
        var refused = PurchaseOptions()
        refused.introductoryOfferEligibility = try signer.introductoryOfferEligibility(
            productID: Self.gold, allowIntroductoryOffer: false, transactionID: cy)
        let plain = try #require(try simulator.purchase(Self.gold, account: "cy", options: refused).transaction)
        #expect(plain.payload.offerType == nil)
        var granted = PurchaseOptions()
        granted.introductoryOfferEligibility = try signer.introductoryOfferEligibility(
            productID: Self.gold, allowIntroductoryOffer: true, transactionID: dee)
        let trial = try #require(try simulator.purchase(Self.gold, account: "dee", options: granted).transaction)
        #expect(trial.payload.offerType == .introductory)
    }

    @Test(.enabled(if: ExternalTool.hasAppleLibrary, "app-store-server-library is not installed (pip)"))
    func applesPythonSignaturesAreAcceptedAndOursMatchTheirLayout() async throws {
        // The library signs with the wall clock: the simulated now reaches it after the three lapses below.
        let simulator = try Self.simulator(start: Date().addingTimeInterval(-120 * Self.day))
        let ana = try Self.lapsed("ana", simulator)
        let ben = try Self.lapsed("ben", simulator)
        let newcomer = try Self.lapsed("eve", simulator)
        let signer = Self.signer(simulator)
        let nonce = UUID(uuidString: "6A1B2C3D-4E5F-4A6B-8C7D-9E0F1A2B3C4D")!
        let token = "0E9D8C7B-6A5F-4E3D-8C2B-1A0F9E8D7C6B"
        let timestamp = Self.milliseconds(try simulator.now)
        let folder = TestFiles.url("offers")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let keyFile = folder.appendingPathComponent("SubscriptionKey.p8")
        try Self.credentials.privateKey.pemRepresentation.write(to: keyFile, atomically: true, encoding: .utf8)

        let (status, output) = try await ExternalTool.run(
            "/usr/bin/env",
            [
                "python3", Self.script.path, "--key", keyFile.path, "--key-id", Self.credentials.keyID,
                "--issuer-id", Self.credentials.issuerID, "--bundle-id", Self.credentials.bundleID, "--product",
                Self.gold, "--offer", "comeback", "--token", token, "--nonce", nonce.uuidString, "--timestamp",
                String(timestamp), "--transaction", ana, "--ours-v1",
                try signer.promotionalOfferSignature(
                    productID: Self.gold, offerID: "comeback", appAccountToken: token, nonce: nonce,
                    timestamp: timestamp),
                "--ours-v2",
                try signer.promotionalOfferV2(productID: Self.gold, offerID: "comeback", transactionID: ana),
                "--ours-intro",
                try signer.introductoryOfferEligibility(
                    productID: Self.gold, allowIntroductoryOffer: false, transactionID: ana),
                "--customer-v2", ben, "--customer-intro", newcomer,
            ])
        #expect(status == 0, "\(output)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
        let checks = try #require(report["checks"] as? [String: Any])
        for (name, value) in checks { #expect(value as? Bool == true, "\(name): \(value)") }
        let message = PromotionalOffer.message(
            bundleID: Self.credentials.bundleID, keyID: Self.credentials.keyID, productID: Self.gold,
            offerID: "comeback", appAccountToken: token, nonce: nonce, timestamp: timestamp)
        #expect(report["librarySignedBytes"] as? String == message.map { String(format: "%02x", $0) }.joined())

        // The library's own signatures buy the offer in the simulator.
        let theirsV1 = try #require(report["theirsV1"] as? String)
        var v1 = PurchaseOptions(
            appAccountToken: UUID(uuidString: token),
            offer: .promotional(
                PromotionalOffer(
                    offerID: "comeback", keyID: Self.credentials.keyID, nonce: nonce, timestamp: timestamp,
                    signature: theirsV1)))
        v1.quantity = 1
        #expect(
            try simulator.purchase(Self.gold, account: "ana", options: v1).transaction?.payload.offerIdentifier
                == "comeback")
        // Its V2 for ana's transaction is refused to ben; the one it made for ben's buys ben the offer.
        let theirsV2 = try #require(report["theirsV2"] as? String)
        #expect(
            Self.refusal(simulator, "ben", PurchaseOptions(offer: .promotionalV2(theirsV2))) == .invalidOfferSignature)
        let forBen = PurchaseOptions(offer: .promotionalV2(try #require(report["customerV2"] as? String)))
        let benBought = try simulator.purchase(Self.gold, account: "ben", options: forBen).transaction
        #expect(benBought?.payload.offerIdentifier == "comeback")
        // Its eligibility grants eve, who had the trial before, the introductory offer again.
        var intro = PurchaseOptions()
        intro.introductoryOfferEligibility = try #require(report["customerIntro"] as? String)
        #expect(
            try simulator.purchase(Self.gold, account: "eve", options: intro).transaction?.payload.offerType
                == .introductory)
    }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scripts/apple-offer-signatures.py")
}
