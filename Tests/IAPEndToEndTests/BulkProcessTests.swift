import Foundation
import IAPSignedData
import IAPSimulator
import IAPTestSupport
import Testing

/// The bulk commands as users run them: the built `iapkit` as a process, its real standard output and error.
struct BulkProcessTests {
    @Test func linesComeOutInOrderWithTheSummaryLast() async throws {
        let iapkit = try #require(ServerProcess.executable, Comment(rawValue: ServerProcess.skipMessage))
        let folder = TestFiles.url("bulk")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try SimulatorTestKeys.pki.export(to: folder)
        let root = folder.appendingPathComponent(SimulatorPKI.FileName.jwsRoot).path
        let valid = try SimulatorTestKeys.pki.jwsSigner().sign(TestJWS.transaction())
        let foreign = try TestJWS.signer().sign(TestJWS.transaction())  // another authority's chain
        // 1,200 lines, every seventh foreign and every hundredth not a document: more output than one write block.
        let lines = (1...1_200).map { $0 % 100 == 0 ? "garbage" : $0 % 7 == 0 ? foreign : valid }
        let file = folder.appendingPathComponent("export.txt")
        try Data(lines.joined(separator: "\n").utf8).write(to: file)

        let (status, output) = try await ExternalTool.run(
            iapkit.path, ["jws", "verify", "--lines", file.path, "--root", root, "--json", "--jobs", "2"])
        #expect(status == 1)
        let printed = output.split(separator: "\n").map(String.init)
        #expect(printed.count == 1_201)
        let objects = try printed.dropLast().map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects.map { $0["file"] as? String } == (1...1_200).map { "\(file.path):\($0)" })
        #expect(objects.map { $0["valid"] as? Bool ?? false } == lines.map { $0 == valid })
        let garbage = 12
        let foreignCount = (1...1_200).filter { $0 % 7 == 0 && $0 % 100 != 0 }.count
        #expect(
            printed.last == "1200 documents: \(1_200 - garbage - foreignCount) valid, "
                + "\(garbage + foreignCount) invalid (chainUntrusted \(foreignCount), malformedJWS \(garbage))")

        // The same lines from standard input, one worker, as text: the same verdicts in the same order.
        let text = try await offThePool {
            let process = Process()
            process.executableURL = iapkit
            process.arguments = ["jws", "verify", "--lines", "-", "--root", root, "--jobs", "1"]
            process.standardInput = try FileHandle(forReadingFrom: file)
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        let verdicts = text.split(separator: "\n").filter { $0.hasPrefix("stdin:") }
        #expect(verdicts.count == 1_200)
        #expect(verdicts.enumerated().allSatisfy { $0.element.hasPrefix("stdin:\($0.offset + 1): ") })
        #expect(verdicts.map { $0.contains(": VALID") } == lines.map { $0 == valid })
        #expect(text.hasSuffix(printed.last! + "\n"))
    }
}
