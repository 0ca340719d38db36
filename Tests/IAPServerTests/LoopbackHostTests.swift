import IAPCore
import Testing

@testable import IAPServer

/// One reading of "this machine" for every place that relaxes a rule on loopback (plain HTTP, a database without TLS,
/// development mode): addresses are read as addresses, never by their first characters.
@Suite struct LoopbackHostTests {
    @Test(
        arguments: [
            ("localhost", true), ("LOCALHOST", true), ("127.0.0.1", true), ("127.0.0.2", true),
            ("127.255.255.254", true),
            ("::1", true), ("[::1]", true), ("0:0:0:0:0:0:0:1", true), ("[0::1]", true),
            ("127.example.com", false), ("127.0.0.1.example.com", false), ("127.0.0.256", false), ("127.1", false),
            ("128.0.0.1", false), ("0.0.0.0", false), ("::", false), ("::2", false), ("[::1", false),
            ("::ffff:127.0.0.1", false), ("localhost.example.com", false), ("", false), ("10.0.0.7", false),
        ] as [(String, Bool)])
    func aHostIsLoopbackOnlyAsAnAddress(_ host: String, _ loopback: Bool) {
        #expect(isLoopbackHost(host) == loopback)
    }

    /// What the rules built on it answer for a name that only looks like loopback.
    @Test func aNameThatStartsWith127IsNotThisMachine() throws {
        var server = ServerConfiguration()
        server.host = "127.example.com"
        #expect(!server.listensOnLoopbackOnly)
        server.host = "127.0.0.1"
        #expect(server.listensOnLoopbackOnly)
        // Nor is a database host named so: the shared-cores advice stays silent (the same check chooses TLS for it).
        #expect(PostgresDatabase.sharedCoresAdvice(url: "postgres://u@127.example.com/x", autogroup: "1") == nil)
        #expect(PostgresDatabase.sharedCoresAdvice(url: "postgres://u@[0::1]:5432/x", autogroup: "1") != nil)
    }
}
