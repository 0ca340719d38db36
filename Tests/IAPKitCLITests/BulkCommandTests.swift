import ArgumentParser
import Foundation
import IAPKitCLI
import IAPSignedData
import IAPTestSupport
import Testing

/// Bulk input on the verify and decode commands: directories, `--files-from`, `--lines`, several workers, results in
/// input order, a bad document reported in its place, counts per failure code.
struct BulkCommandTests {
    typealias Workspace = JWSCommandTests.Workspace

    /// What each kind of document is and the failure it must be reported with (nil: valid).
    enum Kind: CaseIterable {
        case valid, notification, forged, malformed, receipt

        var failure: String? {
            switch self {
            case .valid, .notification: nil
            case .forged: "signatureInvalid"
            case .malformed: "malformedJWS"
            case .receipt: "malformedJWS"
            }
        }

        func document() throws -> String {
            let signer = TestJWS.signer()
            switch self {
            case .valid: return try signer.sign(TestJWS.transaction())
            case .notification:
                let inner = try signer.sign(TestJWS.transaction())
                return #"{"signedPayload":""#
                    + (try signer.sign(TestJWS.notification(signedTransaction: inner, signedRenewalInfo: nil)))
                    + #""}"#
            case .forged: return try TestJWS.signer(key: TestJWS.rogueKey).sign(TestJWS.transaction())
            case .malformed: return "eyJhbGciOiJFUzI1NiJ9.not-a-jws"
            case .receipt: return "MIIT2AYJKoZIhvcNAQcCoIITyTCCE8UCAQEx"
            }
        }
    }

    /// `count` documents cycling through the kinds, each in its own file of a nested folder tree.
    static func corpus(_ workspace: Workspace, count: Int) throws -> (folder: String, kinds: [Kind]) {
        let documents = try Kind.allCases.map { try $0.document() }
        var kinds: [Kind] = []
        let folder = workspace.directory.appendingPathComponent("corpus")
        for index in 0..<count {
            let kind = Kind.allCases[index * 7 % Kind.allCases.count]
            kinds.append(kind)
            // Two levels, so the walk has to recurse; names sort in input order.
            let sub = folder.appendingPathComponent(String(format: "%02d", index / 50))
            try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
            try Data(documents[Kind.allCases.firstIndex(of: kind)!].utf8)
                .write(to: sub.appendingPathComponent(String(format: "%04d.jws", index)))
        }
        try Data("ignored".utf8).write(to: folder.appendingPathComponent(".DS_Store"))
        return (folder.path, kinds)
    }

    static func summary(_ kinds: [Kind], noun: String = "files") -> String {
        let valid = kinds.filter { $0.failure == nil }.count
        var counts: [String: Int] = [:]
        for kind in kinds { if let failure = kind.failure { counts[failure, default: 0] += 1 } }
        let codes = counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        return "\(kinds.count) \(noun): \(valid) valid, \(kinds.count - valid) invalid ("
            + codes.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")"
    }

    @Test(arguments: [1, 4])
    func aFolderIsWalkedAndReportedInOrderWhateverTheWorkers(jobs: Int) async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let (folder, kinds) = try Self.corpus(workspace, count: 230)
        let output = CapturedOutput()
        let command = try JWSVerifyCommand.parse([
            folder, "--root", workspace.root, "--jobs", "\(jobs)", "--json",
        ])
        #expect(await command.execute(output: output) == 1)
        let objects = try output.jsonObjects()
        #expect(objects.count == 230)
        let names = objects.map { ($0["file"] as? String).map { URL(fileURLWithPath: $0).lastPathComponent } }
        #expect(names == (0..<230).map { String(format: "%04d.jws", $0) })
        for (object, kind) in zip(objects, kinds) {
            let failures =
                object["failures"] as? [String] ?? [(object["error"] as? [String: Any])?["code"] as? String ?? "?"]
            #expect(failures == (kind.failure.map { [$0] } ?? []), "\(object)")
        }
        #expect(output.diagnostics == [Self.summary(kinds)])
    }

    /// Names in byte order: shared prefixes longer than eight bytes, a name that is the prefix of another, capitals,
    /// non-ASCII, a dotfile left out, and a subfolder walked where its name falls.
    @Test func aFolderIsReadInByteOrderOfNames() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let folder = workspace.directory.appendingPathComponent("names")
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("m-sub"), withIntermediateDirectories: true)
        let names = [
            "b", "a", "ab", "Z", "\u{e9}t\u{e9}", "a-long-shared-prefix-0010", "a-long-shared-prefix-0002",
            "a-long-shared-prefix-0002x", "a-long-shared-prefix-00020", "a-long-shared-prefix-0001", "m", "n",
        ]
        for name in names + [".hidden", "m-sub/inner-2", "m-sub/inner-1"] {
            try Data("not a document".utf8).write(to: folder.appendingPathComponent(name))
        }
        let output = CapturedOutput()
        _ = await (try JWSVerifyCommand.parse([folder.path, "--root", workspace.root, "--json", "--jobs", "3"]))
            .execute(output: output)
        let read = try output.jsonObjects().map {
            String(($0["file"] as? String ?? "?").dropFirst(folder.path.count + 1))
        }
        var expected = (names + ["m-sub"]).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        expected.replaceSubrange(
            expected.firstIndex(of: "m-sub")!...expected.firstIndex(of: "m-sub")!,
            with: ["m-sub/inner-1", "m-sub/inner-2"])
        #expect(read == expected)
        #expect(read.first == "Z" && read.last == "\u{e9}t\u{e9}")
    }

    @Test func textOutputIsTheSameWithOneWorkerOrFour() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let (folder, _) = try Self.corpus(workspace, count: 120)
        var outputs: [[String]] = []
        for jobs in [1, 4] {
            let output = CapturedOutput()
            _ = await (try JWSVerifyCommand.parse([folder, "--root", workspace.root, "--jobs", "\(jobs)"]))
                .execute(output: output)
            outputs.append(output.lines)
        }
        #expect(outputs[0].count == 121)
        #expect(outputs[0] == outputs[1])
    }

    @Test func linesAreDocumentsAndABadLineIsReportedInItsPlace() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let kinds: [Kind] = [.valid, .forged, .notification, .malformed, .receipt, .valid]
        let documents = try kinds.map { try $0.document() }  // signatures are random: each document made once
        var text = documents
        text.insert("   ", at: 2)  // blank lines are not documents, but they keep their numbers
        let lines = try workspace.write("export.txt", text.joined(separator: "\r\n") + "\n")
        let output = CapturedOutput()
        let command = try JWSVerifyCommand.parse(["--lines", lines, "--root", workspace.root, "--json", "--jobs", "2"])
        #expect(await command.execute(output: output) == 1)
        let objects = try output.jsonObjects()
        #expect(objects.map { $0["file"] as? String } == [1, 2, 4, 5, 6, 7].map { "\(lines):\($0)" })
        #expect(objects.map { $0["valid"] as? Bool ?? false } == kinds.map { $0.failure == nil })
        #expect(objects[2]["type"] as? String == "notification")
        #expect(output.diagnostics == [Self.summary(kinds, noun: "documents")])

        // Each line verifies as its own file does, names aside.
        for (index, document) in documents.enumerated() {
            let file = try workspace.write("one-\(index).jws", document)
            let single = CapturedOutput()
            _ = await (try JWSVerifyCommand.parse([file, "--root", workspace.root, "--json"])).execute(output: single)
            var mine = try #require(try single.jsonObjects().first)
            var theirs = objects[index]
            mine["file"] = nil
            theirs["file"] = nil
            #expect(NSDictionary(dictionary: mine) == NSDictionary(dictionary: theirs))
        }
    }

    @Test func filesFromListsPathsAndAMissingOneDoesNotStopTheRun() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let good = try workspace.write("good.jws", try Kind.valid.document())
        let forged = try workspace.write("forged.jws", try Kind.forged.document())
        let missing = workspace.directory.appendingPathComponent("missing.jws").path
        let list = try workspace.write(
            "list.txt", [good, missing, "", forged, workspace.directory.path + "/sub"].joined(separator: "\n"))
        try FileManager.default.createDirectory(
            at: workspace.directory.appendingPathComponent("sub"), withIntermediateDirectories: true)
        _ = try workspace.write("sub/nested.jws", try Kind.valid.document())
        let output = CapturedOutput()
        let command = try JWSVerifyCommand.parse(["--files-from", list, "--root", workspace.root])
        #expect(await command.execute(output: output) == 1)
        #expect(output.lines.count == 5)
        #expect(output.lines[0].hasPrefix("\(good): VALID"))
        #expect(output.lines[1].hasPrefix("\(missing): INVALID\n  unreadableFile: '\(missing)' cannot be read"))
        #expect(output.lines[2].hasPrefix("\(forged): INVALID"))
        #expect(output.lines[3].hasPrefix(workspace.directory.path + "/sub/nested.jws: VALID"))
        #expect(output.lines[4] == "4 files: 2 valid, 2 invalid (signatureInvalid 1, unreadableFile 1)")
    }

    @Test func everyBulkCommandTakesLinesAndFolders() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let lines = try workspace.write(
            "mixed.txt", try [Kind.valid, .notification, .malformed].map { try $0.document() }.joined(separator: "\n"))
        let decoded = CapturedOutput()
        #expect(await (try JWSDecodeCommand.parse(["--lines", lines, "--json"])).execute(output: decoded) == 1)
        #expect(try decoded.jsonObjects().map { $0["type"] as? String } == ["transaction", "notification", nil])
        #expect(decoded.diagnostics == ["3 documents: 2 decoded, 1 failed (malformedJWS 1)"])

        guard SharedTestData.isAvailable else { return }
        let receipt = try SharedTestData.bytes("receipts/kvitto-receipt.der")
        let receipts = try workspace.write(
            "receipts.txt",
            [Data(receipt).base64EncodedString(), "not base64 !", Data(receipt).base64EncodedString()]
                .joined(separator: "\n"))
        let inspected = CapturedOutput()
        #expect(
            await (try ReceiptInspectCommand.parse(["--lines", receipts, "--json"])).execute(output: inspected) == 1)
        #expect(
            try inspected.jsonObjects().map { $0["bundleId"] as? String } == [
                "com.apple.dt.Xcode", nil, "com.apple.dt.Xcode",
            ])
        #expect(inspected.diagnostics == ["3 documents: 2 decoded, 1 failed (unrecognizedEncoding 1)"])

        let verified = CapturedOutput()
        let verify = try ReceiptVerifyCommand.parse([
            "--lines", receipts, "--root", SharedTestData.path("certs/apple-official/AppleIncRootCertificate.cer"),
            "--jobs", "3",
        ])
        #expect(await verify.execute(output: verified, currentTime: ReceiptCommandTests.now) == 1)
        #expect(verified.lines.count == 4)
        #expect(verified.lines[1].hasPrefix("\(receipts):2: INVALID\n  unrecognizedEncoding"))
        #expect(verified.lines[0].replacingOccurrences(of: ":1:", with: ":3:") == verified.lines[2])
    }

    @Test func inputProblemsAreCaughtBeforeAnythingRuns() async throws {
        let root = ["--root", "root.der"]
        #expect(throws: (any Error).self) { try JWSVerifyCommand.parse(root) }
        #expect(throws: (any Error).self) { try JWSVerifyCommand.parse(["a.jws", "--jobs", "0"] + root) }
        #expect(throws: (any Error).self) { try JWSVerifyCommand.parse(["-", "--lines", "-"] + root) }
        let workspace = try Workspace()
        defer { workspace.remove() }
        let output = CapturedOutput()
        let missing = workspace.directory.appendingPathComponent("missing.txt").path
        let command = try JWSVerifyCommand.parse(["--lines", missing, "--root", workspace.root])
        #expect(await command.execute(output: output) == 2)
        #expect(output.diagnostics.first?.contains("[unreadableFile]") == true)
    }
}
