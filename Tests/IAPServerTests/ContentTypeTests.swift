import Hummingbird
import Testing

@testable import IAPServer

/// The media type the request guard reads from `Content-Type`, however it is written.
@Suite struct ContentTypeTests {
    @Test func theMediaTypeWithoutParametersOrBlanksInLowerCase() {
        typealias Guard = RequestGuardMiddleware<BasicRequestContext>
        #expect(Guard.mediaType("application/json") == "application/json")
        #expect(Guard.mediaType(" Application/JSON ; charset=utf-8") == "application/json")
        #expect(Guard.mediaType("application/json;charset=utf-8") == "application/json")
        #expect(Guard.mediaType("\ttext/plain\t") == "text/plain")
        #expect(Guard.mediaType("") == "" && Guard.mediaType(";") == "")
        #expect(Guard.mediaType("application/jsonx") == "application/jsonx")
        // As Foundation's split and trimming read it: empty parts skipped, Unicode blanks trimmed.
        #expect(Guard.mediaType(";application/json") == "application/json")
        #expect(Guard.mediaType("\u{00A0}application/json\u{3000}") == "application/json")
    }
}
