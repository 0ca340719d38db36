// The library's per-document cost for the bulk benchmark (Scripts/bulk-bench.sh): every file of a folder read into
// memory first, then verified one after another with one shared verifier, as `iapkit receipt verify` and
// `iapkit jws verify` do with the same defaults. Only verification is timed: no reading, no output.
//
//   BulkBaseline jws|receipt FOLDER ROOT [ROUNDS]
import Foundation
import IAPReceipts
import IAPSignedData
import IAPTrust

let arguments = CommandLine.arguments
guard arguments.count >= 4, ["jws", "receipt"].contains(arguments[1]) else {
    FileHandle.standardError.write(Data("usage: BulkBaseline jws|receipt FOLDER ROOT [ROUNDS]\n".utf8))
    exit(2)
}
let folder = URL(fileURLWithPath: arguments[2])
let rounds = arguments.count > 4 ? Int(arguments[4]) ?? 3 : 3
let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix(".") }.sorted()
let documents = try names.map { Array(try Data(contentsOf: folder.appendingPathComponent($0))) }
let store = TrustStore(roots: try TrustAnchorLoader.certificates(contentsOfFile: arguments[3]))

let clock = ContinuousClock()
var best = Duration.seconds(1_000_000)
var valid = 0
for _ in 0..<(rounds + 1) {  // the first round warms up
    valid = 0
    let began = clock.now
    if arguments[1] == "jws" {
        let verifier = try SignedDataVerifier(trustStore: store)
        for document in documents where (try? await verifier.verify(bytes: document))?.isValid == true { valid += 1 }
    } else {
        let verifier = ReceiptVerifier(trustStore: store)
        let now = Date()
        for document in documents where (try? await verifier.verify(document, at: now))?.isValid == true {
            valid += 1
        }
    }
    best = min(best, clock.now - began)
}
let seconds = Double(best.components.seconds) + Double(best.components.attoseconds) / 1e18
let perDocument = seconds / Double(documents.count) * 1e6
print(
    "library \(arguments[1]): \(documents.count) documents (\(valid) valid), "
        + String(format: "%.1f us per document, %.0f per second (best of %d)", perDocument, 1e6 / perDocument, rounds))
