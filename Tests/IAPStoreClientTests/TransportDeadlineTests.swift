import Foundation
import IAPStoreClient
import IAPTestSupport
import Testing

@testable import IAPStoreClientTesting

/// Both transports keep a request's timeout for the whole exchange: a server that never answers, answers its head
/// and then stalls mid-body, or sends the body a byte at a time, fails the send when the timeout passes instead of
/// holding it.
@Suite struct TransportDeadlineTests {
    /// `URLSessionTransport` keeps half a second: Linux's Foundation, asked for less than a second, gave up at once.
    @Test func aTimeoutUnderASecondIsKept() async throws {
        let server = try StallingHTTPServer(reply: "")
        defer { server.stop() }
        let request = HTTPTransportRequest(
            method: "GET", url: URL(string: "http://127.0.0.1:\(server.port)/stalls")!, timeout: .milliseconds(500),
            maximumAnswerSize: 1 << 16)
        let clock = ContinuousClock()
        let started = clock.now
        await #expect(throws: (any Error).self) { _ = try await URLSessionTransport().send(request) }
        #expect(clock.now - started >= .milliseconds(450))
    }

    static let head = "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{\"partial\":"

    @Test(arguments: [
        ("", false),  // nothing at all
        (head, false),  // the head, then part of the body
        (head, true),  // the head, then the body a byte every 100 ms
    ])
    func aStalledServerFailsTheSendAtItsTimeout(_ reply: String, _ trickles: Bool) async throws {
        for transport in [AsyncHTTPClientTransport() as any HTTPTransport, URLSessionTransport()] {
            let server = try StallingHTTPServer(reply: reply, trickles: trickles)
            defer { server.stop() }
            let request = HTTPTransportRequest(
                method: "GET", url: URL(string: "http://127.0.0.1:\(server.port)/stalls")!,
                timeout: .seconds(1), maximumAnswerSize: 1 << 16)
            let clock = ContinuousClock()
            let started = clock.now
            await #expect(throws: (any Error).self, "\(type(of: transport))") {
                _ = try await transport.send(request)
            }
            // Without the deadline the send ends at AsyncHTTPClient's read timeout (90 s), or, trickled, when the
            // body ends (100 s). The bound is generous: beside the rest of the suite on two cores, a 500 ms timeout
            // was seen to end the send after 8 to 14 s.
            #expect(clock.now - started < .seconds(45), "\(type(of: transport))")
        }
    }
}
