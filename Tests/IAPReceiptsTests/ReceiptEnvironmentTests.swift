import Foundation
import IAPReceipts
import IAPTestSupport
import IAPTrust
import Testing

/// The environment policy (SECURITY 9 and 10): a genuine sandbox receipt, which any TestFlight tester gets for free,
/// never passes where Production is expected, and Xcode-signed receipts pass only where Xcode is expected.
struct ReceiptEnvironmentTests {
    typealias F = ReceiptFixtures

    func verdict(_ receipt: AppReceipt = F.receipt(), expecting environments: Set<ReceiptEnvironment>?) async throws
        -> ReceiptVerdict
    {
        var policy = F.policy
        policy.configuration.environments = environments
        return try await F.verifier(policy: policy).verify(try F.signed(receipt), policy: policy)
    }

    @Test func sandboxReceiptsPassOnlyWhereSandboxIsExpected() async throws {
        // The fixture says ProductionSandbox, one of Apple's two spellings of the sandbox.
        #expect(try await verdict(expecting: [.sandbox]).isValid)
        #expect(try await verdict(expecting: [.production, .sandbox]).isValid)
        let production = try await verdict(expecting: [.production])
        #expect(production.failures.map(\.code) == [.environmentMismatch])
        #expect(production.failures.first?.reason.contains("ProductionSandbox") == true)
        let unchecked = try await verdict(expecting: nil)
        #expect(unchecked.isValid)
        #expect(unchecked.skipped(.environment))
    }

    @Test func aReceiptThatNamesNoEnvironmentPassesNone() async throws {
        var receipt = F.receipt()
        receipt.environment = nil
        let verdict = try await verdict(receipt, expecting: [.production, .sandbox])
        #expect(verdict.failures.map(\.code) == [.environmentMismatch])
        #expect(verdict.failures.first?.reason.contains("missing") == true)
    }

    @Test func productionReceiptsPassWhereProductionIsExpected() async throws {
        var receipt = F.receipt()
        receipt.environment = .production
        #expect(try await verdict(receipt, expecting: [.production]).isValid)
        #expect(try await verdict(receipt, expecting: [.sandbox]).failures.map(\.code) == [.environmentMismatch])
    }

    @Test(.enabled(if: SharedTestData.isAvailable, "\(SharedTestData.skipMessage)"))
    func realSandboxReceiptIsRefusedUnderProduction() async throws {
        let roots = try TrustAnchorLoader.certificates(
            contentsOfFile: SharedTestData.path("certs/apple-official/AppleIncRootCertificate.cer"))
        let bytes = try SharedTestData.bytes("receipts/revenuecat-base64encodedreceiptsample1.der")
        func verdict(_ environments: Set<ReceiptEnvironment>) async throws -> ReceiptVerdict {
            try await ReceiptVerifier(
                trustStore: TrustStore(roots: roots), configuration: .init(environments: environments)
            )
            .verify(bytes, at: Date(timeIntervalSince1970: 1_595_440_000))
        }
        #expect(try await verdict([.production]).failures.map(\.code) == [.environmentMismatch])
        #expect(try await verdict([.sandbox]).isValid)
    }

    @Test(.enabled(if: SharedTestData.isAvailable, "\(SharedTestData.skipMessage)"))
    func xcodeReceiptsPassOnlyWhereXcodeIsExpectedWhateverTheTrustStoreSays() async throws {
        let xcode = try TrustAnchorLoader.certificates(
            contentsOfFile: SharedTestData.path("certs/storekit-testing/StoreKitTestCertificate.cer"))
        let careless = TrustStore(roots: []).insecurelyAcceptingXcodeTestCertificates(xcode)
        let bytes = try SharedTestData.bytes("receipts/apple-xcode-app-receipt-with-transaction.der")
        let now = Date(timeIntervalSince1970: 1_697_700_000)
        func verdict(_ environments: Set<ReceiptEnvironment>) async throws -> ReceiptVerdict {
            try await ReceiptVerifier(trustStore: careless, configuration: .init(environments: environments))
                .verify(bytes, at: now)
        }
        let underProduction = try await verdict([.production])
        #expect(underProduction.failed(.xcodeSignedNotAllowed))
        #expect(!underProduction.isValid)
        let underSandbox = try await verdict([.sandbox])
        #expect(underSandbox.failed(.xcodeSignedNotAllowed))
        let underXcode = try await verdict([.xcode])
        #expect(underXcode.isValid, "\(underXcode.failures)")
    }
}
