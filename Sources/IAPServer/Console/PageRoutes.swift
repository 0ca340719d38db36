import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The pages `iapkit serve` shows people: HTML, CSS and JavaScript from the package's resources, read once, served
/// with a content security policy that lets a page load nothing but this server's own files and talk to nothing but
/// this server.
struct PageRoutes: Sendable {
    /// One file ready to serve.
    struct Asset: Sendable {
        let bytes: ByteBuffer
        let contentType: String
        let etag: String
    }

    /// The pages in the order the navigation lists them: path, label, and the fragment in the resources.
    static let pages = [
        (path: "/", label: "Home", file: "index.html"), (path: "/store", label: "Store", file: "store.html"),
        (path: "/manager", label: "Manager", file: "manager.html"),
        (path: "/inspector", label: "Inspector", file: "inspector.html"),
        (path: "/customers", label: "Customers", file: "customers.html"),
    ]

    /// Everything in the resources' `Pages` folder, by file name, each page put in the layout; empty when the
    /// resources are missing.
    static let assets: [String: Asset] = {
        guard let folder = Bundle.module.url(forResource: "Pages", withExtension: nil),
            let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path)
        else { return [:] }
        func read(_ name: String) -> Data? {
            FileManager.default.contents(atPath: folder.appendingPathComponent(name).path)
        }
        let layout = read("layout.html").map { String(decoding: $0, as: UTF8.self) } ?? ""
        var assets: [String: Asset] = [:]
        for name in names where name != "layout.html" {
            guard var data = read(name) else { continue }
            if let page = pages.first(where: { $0.file == name }) {
                data = Data(laidOut(String(decoding: data, as: UTF8.self), path: page.path, layout: layout).utf8)
            }
            let digest = SHA256.hash(data: data).prefix(12).map { String(format: "%02x", $0) }.joined()
            assets[name] = Asset(
                bytes: ByteBuffer(bytes: data), contentType: contentType(of: name), etag: "\"\(digest)\"")
        }
        return assets
    }()

    /// A page fragment (a first line `<!-- title: ...; script: ... -->`, then its `<main>`) put in the layout, with
    /// the navigation marking the page's own link.
    static func laidOut(_ fragment: String, path: String, layout: String) -> String {
        let header = fragment.prefix { $0 != "\n" }
        var fields: [String: String] = [:]
        for part in header.dropFirst(4).dropLast(3).split(separator: ";") {
            let pair = part.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2 { fields[pair[0]] = pair[1] }
        }
        let navigation = pages.map { page in
            let current = page.path == path ? " aria-current=\"page\"" : ""
            return "        <li><a href=\"\(page.path)\"\(current)>\(page.label)</a></li>"
        }.joined(separator: "\n")
        return layout.replacingOccurrences(of: "{{title}}", with: fields["title"] ?? "IAPKit")
            .replacingOccurrences(of: "{{script}}", with: fields["script"] ?? "common.js")
            .replacingOccurrences(of: "{{nav}}", with: navigation)
            .replacingOccurrences(of: "{{main}}", with: String(fragment.dropFirst(header.count + 1)))
    }

    static let securityHeaders: HTTPFields = [
        HTTPField.Name("Content-Security-Policy")!:
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
        HTTPField.Name("X-Content-Type-Options")!: "nosniff",
        HTTPField.Name("Referrer-Policy")!: "no-referrer",
        .cacheControl: "no-cache",
    ]

    func add(to router: Router<ServerRequestContext>) {
        for page in Self.pages {
            router.get(RouterPath(page.path)) { request, _ in try Self.serve(page.file, request) }
        }
        router.get("/assets/:file") { request, context in
            let file = try context.parameters.require("file")
            guard !file.hasSuffix(".html") else { throw APIError(404, "notFound", "no such file: \(file)") }
            return try Self.serve(file, request)
        }
    }

    private static func serve(_ file: String, _ request: Request) throws(APIError) -> Response {
        guard let asset = assets[file] else { throw APIError(404, "notFound", "no such page or file: \(file)") }
        var headers = securityHeaders
        headers[.eTag] = asset.etag
        if request.headers[.ifNoneMatch] == asset.etag {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = asset.contentType
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: asset.bytes))
    }

    private static func contentType(of name: String) -> String {
        switch name.split(separator: ".").last {
        case "html": "text/html; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        default: "application/octet-stream"
        }
    }
}
