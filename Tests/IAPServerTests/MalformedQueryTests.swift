import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import IAPSimulatorServer
import Testing

@testable import IAPServer

/// Every malformed query value is a 400 with a code naming it, never read as a default; a storage failure is a 503
/// with a stable code and none of the engine's own text.
@Suite struct MalformedQueryTests {
    @Test func malformedQueryValuesAreRefused() async throws {
        let runtime = try await SimulatorAPITests.runtime()
        try await runtime.application().test(.router) { client in
            _ = try await client.post("/simulator/accounts", ["accountId": "ana"])
            for path in [
                "/simulator/notifications?since=abc", "/simulator/notifications?since=-1",
                "/simulator/notifications?since=1.5", "/simulator/notifications?since=99999999999999999999999",
                "/simulator/accounts/ana/transactions?unfinished=yes",
                "/simulator/accounts/ana/transactions?unfinished=1", "/simulator/accounts/ana/receipt?deviceId=nope",
            ] {
                let (status, answer) = try await client.get(path)
                #expect(status == .badRequest, "\(path)")
                #expect(answer["code"] as? String == "invalidQuery", "\(path): \(answer)")
            }
            for path in [
                "/simulator/notifications?since=0", "/simulator/notifications?since=5",
                "/simulator/accounts/ana/transactions?unfinished=TRUE",
                "/simulator/accounts/ana/transactions?unfinished=false",
            ] {
                #expect(try await client.get(path).0 == .ok, "\(path)")
            }
        }
    }

    @Test func storageFailuresSayNothingOfTheEngine() {
        let error = APIError.storage(
            StorageError(code: "storageUnavailable", reason: "the database failed: SQLITE_BUSY (database is locked)"))
        #expect(error.status == 503 && error.code == "storageUnavailable")
        #expect(!error.reason.contains("SQLITE") && !error.reason.contains("locked"))
        #expect(error.internalReason?.contains("SQLITE_BUSY") == true, "logged, not answered")
        let corrupt = APIError.storage(StorageError(code: "storageCorrupt", reason: "row 7: bad JSON at offset 3"))
        #expect(corrupt.status == 503 && !corrupt.reason.contains("row 7"))
    }
}
