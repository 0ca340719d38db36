import Foundation
import IAPSignedData
import IAPTestSupport
import IAPTrust
import Testing

/// A verifier with a signature memory answers a document it verified before without a second P-256 check, and
/// answers everything exactly as a verifier without one: a forgery of a remembered document still fails.
struct SignatureMemoryTests {
    static func verifier(memory: Int) -> SignedDataVerifier {
        try! SignedDataVerifier(
            trustStore: TrustStore(roots: [TestJWS.trusted.root]),
            configuration: .init(bundleID: "com.example.florist", appAppleID: 1_234_567, environments: [.sandbox]),
            signatureMemory: memory)
    }

    /// `jws` with its three parts replaced where given.
    static func splice(_ jws: String, header: String? = nil, payload: String? = nil, signature: String? = nil)
        -> String
    {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        return [header ?? parts[0], payload ?? parts[1], signature ?? parts[2]].joined(separator: ".")
    }

    @Test func aDocumentVerifiedBeforeSkipsItsSignatureCheckAndGetsTheSameVerdict() async throws {
        let remembering = Self.verifier(memory: 1_024)
        let plain = Self.verifier(memory: 0)
        let document = try TestJWS.signer().sign(TestJWS.transaction())
        let first = try await remembering.verifyTransaction(document)
        let again = try await remembering.verifyTransaction(document)
        let unremembered = try await plain.verifyTransaction(document)
        #expect(first.isValid && again.isValid && unremembered.isValid)
        #expect(again.payload == unremembered.payload)
        #expect(again.skippedChecks == unremembered.skippedChecks)
        #expect(remembering.signatureChecks == 1)
        _ = try await plain.verifyTransaction(document)
        #expect(plain.signatureChecks == 2, "without a memory every verification checks the signature")
    }

    @Test func forgeriesOfARememberedDocumentStillFail() async throws {
        let verifier = Self.verifier(memory: 1_024)
        let genuine = try TestJWS.signer().sign(TestJWS.transaction())
        #expect(try await verifier.verifyTransaction(genuine).isValid)
        let parts = genuine.split(separator: ".").map(String.init)

        // The genuine signature over another payload.
        var other = TestJWS.transaction()
        other.productID = "com.example.florist.vip.gold"
        let otherPayload = try TestJWS.signer().sign(other).split(separator: ".").map(String.init)[1]
        let moved = Self.splice(genuine, payload: otherPayload)
        #expect(try await verifier.verifyTransaction(moved).failed(.signatureInvalid))

        // One character of the signature changed.
        var signature = Array(parts[2])
        signature[signature.count / 2] = signature[signature.count / 2] == "A" ? "B" : "A"
        let altered = Self.splice(genuine, signature: String(signature))
        #expect(try await verifier.verifyTransaction(altered).failed(.signatureInvalid))

        // Signed by another key under the trusted chain's header.
        let rogue = try TestJWS.signer(key: TestJWS.rogueKey).sign(TestJWS.transaction())
        #expect(try await verifier.verifyTransaction(rogue).failed(.signatureInvalid))

        #expect(verifier.signatureChecks == 4)
        #expect(try await verifier.verifyTransaction(genuine).isValid)
        #expect(verifier.signatureChecks == 4, "the genuine document is still remembered")
    }

    @Test func theMemoryHoldsAFixedNumberOfSignatures() async throws {
        // One slot: a second document takes the first one's place.
        let verifier = Self.verifier(memory: 1)
        var second = TestJWS.transaction()
        second.transactionID = "2000000000000999"
        let a = try TestJWS.signer().sign(TestJWS.transaction())
        let b = try TestJWS.signer().sign(second)
        for document in [a, a, b, b, a] { #expect(try await verifier.verifyTransaction(document).isValid) }
        #expect(verifier.signatureChecks == 3)
    }

    @Test func aSetOfFourHoldsFourSignaturesAndGivesUpItsOldest() async throws {
        // Four slots are one set: any four documents are all remembered, whatever their keys' first bytes (one slot
        // per key lost one in seven to a neighbour in a table a sixth full); a fifth takes the oldest one's place.
        let verifier = Self.verifier(memory: 4)
        let documents = try (0..<5).map { index in
            var transaction = TestJWS.transaction()
            transaction.transactionID = "200000000000100\(index)"
            return try TestJWS.signer().sign(transaction)
        }
        for document in documents.prefix(4) + documents.prefix(4) {
            #expect(try await verifier.verifyTransaction(document).isValid)
        }
        #expect(verifier.signatureChecks == 4)
        #expect(try await verifier.verifyTransaction(documents[4]).isValid)
        for document in documents[1...] { #expect(try await verifier.verifyTransaction(document).isValid) }
        #expect(verifier.signatureChecks == 5, "the first document went out, the other four stayed")
        #expect(try await verifier.verifyTransaction(documents[0]).isValid)
        #expect(verifier.signatureChecks == 6)
    }

    @Test func aSignatureUnderAnUntrustedChainIsNotRemembered() async throws {
        let verifier = Self.verifier(memory: 1_024)
        var options = MintedChain.Options()
        options.leafMarker = false
        let unmarked = TestJWS.mint(options: options)
        let document = try TestJWS.signer(chain: unmarked.certificates).sign(TestJWS.transaction())
        for _ in 0..<2 { #expect(try await verifier.verifyTransaction(document).failed(.leafMarkerMissing)) }
        #expect(verifier.signatureChecks == 2)
    }

    @Test func anyCapacityIsAccepted() async throws {
        let document = try TestJWS.signer().sign(TestJWS.transaction())
        for capacity in [Int.min, -1, 0, 1, 3, Int.max] {
            let verifier = Self.verifier(memory: capacity)
            #expect(try await verifier.verifyTransaction(document).isValid)
            #expect(try await verifier.verifyTransaction(document).isValid)
            #expect(verifier.signatureChecks == (capacity > 0 ? 1 : 2))
        }
    }
}
