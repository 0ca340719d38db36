import Foundation
import IAPTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What an attacker's trial found (2026-12-01): clients that hold the server's connections with bodies that never end,
/// or fill its memory with requests they never read the answers of (the server keeps answering others); proxy
/// headers development mode did not know; a second Host; ids bounded in Characters (grapheme clusters).
extension DeploymentSafetyTests {
    @Test func slowBodiesCannotLockEveryoneOut() async throws {
        try #require(ServerProcess.executable != nil, Comment(rawValue: ServerProcess.skipMessage))
        // 256 files for the server (so at most 128 connections); bodies may take their default 30 s.
        let server = try await ServerProcess.start(["--database", ":memory:"], openFiles: 256)
        defer { Task { try? await server.stop() } }
        let port = server.port

        // A body declared larger than the limit (1 MiB) is refused at once, before a byte of it comes.
        let declared = try await offThePool { () throws -> RawHTTP.Answer in
            let connection = try RawHTTP(port: port, timeout: .seconds(5))
            defer { connection.close() }
            try connection.send(
                "POST /v1/notifications HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 5000000\r\n\r\n")
            return try connection.readAnswer()
        }
        #expect(declared.status == 413 && declared.json["code"] as? String == "bodyTooLarge", "\(declared.body)")

        // 300 connections, each a request whose body (100,000 bytes declared, which the server takes) stops after
        // its first byte; every other one sends it behind a pipelined GET (an answer owed first): /health still
        // answers.
        let flood = try await offThePool { () throws -> [RawHTTP] in
            var connections: [RawHTTP] = []
            for index in 0..<300 {
                guard let connection = try? RawHTTP(port: port, timeout: .seconds(1)) else { continue }
                try? connection.send(
                    (index.isMultiple(of: 2) ? "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" : "")
                        + "POST /v1/notifications HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                        + "Content-Length: 100000\r\n\r\n{")
                connections.append(connection)
            }
            return connections
        }
        defer { for connection in flood { connection.close() } }
        #expect(flood.count > 250, "the kernel took the flood's connections: \(flood.count)")
        // Locked out, no answer would come before the bodies' 30 s deadline (a median of 1.03 s was seen with the
        // whole suite running: each answer first closes a flood connection).
        try await Self.expectHealthAnswersPromptly(port: port, median: .seconds(3))
        #expect(server.process.isRunning)
    }

    @Test func requestsSentFarAheadOfTheirAnswersAreCutOff() async throws {
        try #require(ServerProcess.executable != nil, Comment(rawValue: ServerProcess.skipMessage))
        let server = try await ServerProcess.start(["--database", ":memory:"])
        defer { Task { try? await server.stop() } }
        let port = server.port
        let request = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

        // 64 requests ahead of their answers are served, every one (the last asks to close, so the reading ends).
        let served = try await offThePool { () throws -> Int in
            let connection = try RawHTTP(port: port, timeout: .seconds(5))
            defer { connection.close() }
            try connection.send(
                String(repeating: request, count: 63)
                    + "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            return connection.readUntilClosed().text.components(separatedBy: "HTTP/1.1 200").count - 1
        }
        #expect(served == 64)

        // 2,000 sent without reading an answer: the connection is closed (reset: the server leaves the rest unread),
        // not kept with all of them waiting.
        let (ended, answers) = try await offThePool { () throws -> (Bool, Int) in
            let connection = try RawHTTP(port: port, timeout: .seconds(10))
            defer { connection.close() }
            try connection.send(String(repeating: request, count: 2_000))
            return connection.readUntilEnded()
        }
        #expect(ended, "cut off")
        #expect(answers <= 64, "at most the allowed requests were answered: \(answers)")
        let health = try await RawHTTP.exchange(port: port, "GET", "/health")
        #expect(health.status == 200)
    }

    @Test func developmentModeKnowsEveryProxysHeadersAndOneHost() async throws {
        try #require(ServerProcess.executable != nil, Comment(rawValue: ServerProcess.skipMessage))
        let server = try await ServerProcess.start(["--database", ":memory:"])
        defer { Task { try? await server.stop() } }
        let port = server.port
        for name in [
            "X-Forwarded-Host", "X-Forwarded-Proto", "True-Client-IP", "CF-Connecting-IP", "X-Client-IP",
            "X-Original-Forwarded-For", "Fastly-Client-IP", "X-Cluster-Client-IP",
        ] {
            let answer = try await RawHTTP.exchange(port: port, "GET", "/simulator", headers: [name: "203.0.113.7"])
            #expect(answer.status == 403 && answer.json["code"] as? String == "proxiedRequestRefused", "\(name)")
        }
        // A second Host, in either order, names two hosts: refused, not checked by its first.
        for hosts in [("127.0.0.1", "evil.example"), ("evil.example", "127.0.0.1")] {
            let answer = try await offThePool { () throws -> RawHTTP.Answer in
                let connection = try RawHTTP(port: port, timeout: .seconds(5))
                defer { connection.close() }
                try connection.send("GET /health HTTP/1.1\r\nHost: \(hosts.0)\r\nHost: \(hosts.1)\r\n\r\n")
                return try connection.readAnswer()
            }
            #expect(answer.status == 400 && answer.json["code"] as? String == "duplicateHost", "\(hosts)")
        }
        // An account id is 1 to 64 letters, digits, - or _, counted in Unicode scalars (not grapheme clusters).
        let json = ["Content-Type": "application/json"]
        // In the JSON text: e and 5,000 combining accents (one Character), e and one, a bell.
        for id in ["e" + String(repeating: "\\u0301", count: 5_000), "e\\u0301", "a\\u0007"] {
            let answer = try await RawHTTP.exchange(
                port: port, "POST", "/simulator/accounts", headers: json, body: #"{"accountId":"\#(id)"}"#)
            #expect(answer.status == 400 && answer.json["code"] as? String == "invalidField")
        }
        let letters = try await RawHTTP.exchange(
            port: port, "POST", "/simulator/accounts", headers: json, body: #"{"accountId":"アナ_1"}"#)
        #expect(letters.status == 201, "\(letters.body)")
    }
}

extension RawHTTP {
    /// Reads until the server closes or resets the connection (true) or the read times out (false); with the number
    /// of answers read.
    func readUntilEnded() -> (ended: Bool, answers: Int) {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                data += buffer[0..<count]
                continue
            }
            let ended = count == 0 || errno == ECONNRESET
            return (ended, String(decoding: data, as: UTF8.self).components(separatedBy: "HTTP/1.1 200").count - 1)
        }
    }
}
