import Crypto
import Foundation
import IAPSignedData
import IAPTestSupport
import IAPTrust
import Testing

/// Signing, the chain cache, concurrency and the any-kind entry point.
struct SignedDataVerifierBehaviourTests {
    @Test func signedDocumentsParseBackToTheirParts() throws {
        let signer = TestJWS.signer()
        let jws = try CompactJWS(try signer.sign(TestJWS.transaction()))
        #expect(jws.header.algorithm == "ES256")
        #expect(jws.header.certificateChain?.count == 3)
        #expect(jws.header.fields.keys == ["alg", "x5c"])
        #expect(jws.signature.count == 64)
        #expect(try jws.decodePayload(as: TransactionPayload.self) == TestJWS.transaction())
    }

    @Test func apiTokenSignerWritesKidAndTyp() throws {
        let signer = JWSSigner(privateKey: TestJWS.leafKey, keyID: "2X9R4HXF34")
        let token = try CompactJWS(
            try signer.sign(payload: Array(#"{"iss":"57246542-96fe-1a63-e053-0824d011072a"}"#.utf8)))
        #expect(token.header.fields.keys == ["alg", "kid", "typ"])
        #expect(token.header.keyID == "2X9R4HXF34")
        #expect(token.header.certificateChain == nil)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: token.signature)
        #expect(TestJWS.leafKey.publicKey.isValidSignature(signature, for: token.signingInput))
    }

    @Test func aChainIsVerifiedOnceAndThenRemembered() async throws {
        let verifier = TestJWS.verifier()
        let signer = TestJWS.signer()
        for index in 0..<50 {
            var transaction = TestJWS.transaction()
            transaction.transactionID = "20000001\(index)"
            #expect(try await verifier.verifyTransaction(try signer.sign(transaction)).isValid)
        }
        #expect(verifier.cachedChainCount == 1)
        // A failed chain is never remembered.
        var options = MintedChain.Options()
        options.leafMarker = false
        let unmarked = TestJWS.mint(options: options)
        _ = try await verifier.verifyTransaction(
            try TestJWS.signer(chain: unmarked.certificates).sign(TestJWS.transaction()))
        #expect(verifier.cachedChainCount == 1)
    }

    @Test func aRememberedChainIsCheckedAgainAtATimeOutsideItsWindow() async throws {
        let chain = TestJWS.mint(
            notValidBefore: TestPKI.notValidBefore, notValidAfter: TestPKI.signingTime.addingTimeInterval(86_400))
        let verifier = TestJWS.verifier(roots: [chain.root])
        let signer = TestJWS.signer(chain: chain.certificates)
        #expect(try await verifier.verifyTransaction(try signer.sign(TestJWS.transaction())).isValid)
        let later = TestPKI.signingTime.addingTimeInterval(86_400 * 2)
        let verdict = try await verifier.verifyTransaction(try signer.sign(TestJWS.transaction(signedAt: later)))
        #expect(verdict.failed(.certificateExpired))
    }

    /// With and without a signature memory (``SignatureMemoryTests``).
    @Test(arguments: [0, 16])
    func concurrentVerificationsAgree(signatureMemory: Int) async throws {
        let verifier = SignatureMemoryTests.verifier(memory: signatureMemory)
        let genuine = try TestJWS.signer().sign(TestJWS.transaction())
        let forged = try TestJWS.signer(key: TestJWS.rogueKey).sign(TestJWS.transaction())
        let results = await withTaskGroup(of: (Bool, Bool).self) { group in
            for index in 0..<200 {
                group.addTask {
                    let isGenuine = index % 3 != 0
                    let verdict = try? await verifier.verifyTransaction(isGenuine ? genuine : forged)
                    return (isGenuine, verdict?.isValid ?? false)
                }
            }
            var all: [(Bool, Bool)] = []
            for await result in group { all.append(result) }
            return all
        }
        #expect(results.count == 200)
        #expect(results.allSatisfy { $0.0 == $0.1 })
        #expect(verifier.cachedChainCount == 1)
    }

    @Test func verifyFindsTheKindFromThePayload() async throws {
        let verifier = TestJWS.verifier()
        let signer = TestJWS.signer()
        let transaction = try await verifier.verify(try signer.sign(TestJWS.transaction()))
        #expect(transaction.payload?.kind == .transaction)
        let renewal = try await verifier.verify(try signer.sign(TestJWS.renewalInfo()))
        #expect(renewal.payload?.kind == .renewalInfo)
        let notification = try await verifier.verify(
            try signer.sign(TestJWS.notification(signedTransaction: nil, signedRenewalInfo: nil)))
        #expect(notification.payload?.kind == .notification)
        #expect(notification.isValid, "\(notification.failures)")
        let unknown = try signer.sign(payload: Array(#"{"hello":"world"}"#.utf8))
        let error = await #expect(throws: SignedDataParsingError.self) { try await verifier.verify(unknown) }
        #expect(error?.code == .unknownPayloadType)
    }
}
