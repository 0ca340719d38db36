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

    /// The pages, by path.
    static let pages = [
        "/": "index.html", "/store": "store.html", "/manager": "manager.html", "/inspector": "inspector.html",
        "/customers": "customers.html",
    ]

    /// Everything in the resources' `Pages` folder, by file name; empty when the resources are missing.
    static let assets: [String: Asset] = {
        guard let folder = Bundle.module.url(forResource: "Pages", withExtension: nil),
            let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path)
        else { return [:] }
        var assets: [String: Asset] = [:]
        for name in names {
            guard let data = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path) else {
                continue
            }
            let digest = SHA256.hash(data: data).prefix(12).map { String(format: "%02x", $0) }.joined()
            assets[name] = Asset(
                bytes: ByteBuffer(bytes: data), contentType: contentType(of: name), etag: "\"\(digest)\"")
        }
        return assets
    }()

    static let securityHeaders: HTTPFields = [
        HTTPField.Name("Content-Security-Policy")!:
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
        HTTPField.Name("X-Content-Type-Options")!: "nosniff",
        HTTPField.Name("Referrer-Policy")!: "no-referrer",
        .cacheControl: "no-cache",
    ]

    func add(to router: Router<ServerRequestContext>) {
        for (path, file) in Self.pages {
            router.get(RouterPath(path)) { request, _ in try Self.serve(file, request) }
        }
        router.get("/assets/:file") { request, context in
            let file = try context.parameters.require("file")
            guard !file.hasSuffix(".html") else { throw APIError(404, "notFound", "no such file") }
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
