import Hummingbird
import Testing

@testable import IAPServer

/// The media type and charset the server reads from `Content-Type`, however they are written.
@Suite struct ContentTypeTests {
    @Test func theMediaTypeWithoutParametersOrBlanksInLowerCase() {
        typealias Guard = JSONBody
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

    /// JSON is UTF-8: a body declared in another charset is refused (415), not read as UTF-8; the charset may be
    /// written in any case, quoted or with blanks, and parameters other than charset are ignored.
    @Test func aCharsetOtherThanUTF8IsRefused() {
        for accepted in [
            "application/json", "application/json; charset=utf-8", "application/json;charset=UTF-8",
            "Application/JSON ; charset = \"utf-8\"", "application/json; charset=utf8", "application/json; q=1",
            "application/json; charset=US-ASCII",
        ] {
            #expect(JSONBody.contentTypeRefusal(accepted) == nil, "\(accepted)")
        }
        for refused in [
            "application/json; charset=iso-8859-1", "application/json; charset=utf-16", "application/json;charset=",
            "text/plain; charset=utf-8", "application/jsonx",
        ] {
            let refusal = JSONBody.contentTypeRefusal(refused)
            #expect(refusal?.status == 415 && refusal?.code == "unsupportedMediaType", "\(refused)")
        }
        #expect(JSONBody.contentTypeRefusal(nil)?.reason.contains("Content-Type is missing") == true)
        #expect(JSONBody.contentTypeRefusal("application/json; charset=latin1")?.reason.contains("UTF-8") == true)
    }
}
