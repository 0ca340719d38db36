import Crypto
public import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Pages and the files they load, read once from one module's resources: the validation server's own
/// (``PageSet/server``), and an addition's (the local App Store's store and manager).
public struct PageSet: Sendable {
    /// One page of the navigation.
    public struct Page: Sendable {
        public var path: String
        public var label: String
        /// The page's fragment among the files.
        public var file: String
        /// Where the navigation lists it: lower first.
        public var order: Int

        public init(path: String, label: String, file: String, order: Int) {
            self.path = path
            self.label = label
            self.file = file
            self.order = order
        }
    }

    public let pages: [Page]
    /// What serving this set turns on, named for the pages' scripts (`simulator`): each page's `<body>` lists the
    /// features on in `data-features`, so a script never asks a route that is not there.
    public let feature: String?
    /// Every file of the folder, by name; empty when the resources are missing.
    let files: [String: Data]

    /// The files of `folder` (a resource folder of the module that serves them) and the pages among them.
    public init(folder: URL?, pages: [Page], feature: String? = nil) {
        self.pages = pages
        self.feature = feature
        var files: [String: Data] = [:]
        if let folder, let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) {
            for name in names {
                files[name] = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path)
            }
        }
        self.files = files
    }

    /// The validation server's pages: home, the overview, the log, the document inspector, the customers, and the shared
    /// layout, style and script.
    public static let server = PageSet(
        folder: Bundle.module.url(forResource: "Pages", withExtension: nil),
        pages: [
            Page(path: "/", label: "Home", file: "index.html", order: 0),
            Page(path: "/overview", label: "Overview", file: "overview.html", order: 5),
            Page(path: "/inspector", label: "Inspector", file: "inspector.html", order: 30),
            Page(path: "/customers", label: "Customers", file: "customers.html", order: 40),
            Page(path: "/log", label: "Log", file: "log.html", order: 50),
        ])
}

/// The pages `iapkit serve` shows people: HTML, CSS and JavaScript from the resources of the modules that serve them,
/// each page put in one layout, served with a content security policy that lets a page load nothing but this server's
/// own files and talk to nothing but this server.
struct PageRoutes: Sendable {
    /// One file ready to serve.
    struct Asset: Sendable {
        let bytes: ByteBuffer
        let contentType: String
        let etag: String
    }

    /// The pages in the order the navigation lists them.
    let pages: [PageSet.Page]
    /// Every file by name, each page put in the layout.
    let assets: [String: Asset]

    init(sets: [PageSet]) {
        var pages = sets.flatMap(\.pages).sorted { $0.order < $1.order }
        let features = sets.compactMap(\.feature)
        // Without the local App Store, the home page's tour has nothing to show: the overview is the first page.
        if features.isEmpty { pages.removeAll { $0.path == "/" } }
        let files = sets.reduce(into: [String: Data]()) { files, set in files.merge(set.files) { old, _ in old } }
        let layout = files["layout.html"].map { String(decoding: $0, as: UTF8.self) } ?? ""
        var assets: [String: Asset] = [:]
        for (name, file) in files where name != "layout.html" {
            var data = file
            if let page = pages.first(where: { $0.file == name }) {
                data = Data(
                    Self.laidOut(
                        String(decoding: data, as: UTF8.self), path: page.path, pages: pages, layout: layout,
                        features: features
                    ).utf8)
            }
            let digest = SHA256.hash(data: data).prefix(12).map { String(format: "%02x", $0) }.joined()
            assets[name] = Asset(
                bytes: ByteBuffer(bytes: data), contentType: Self.contentType(of: name), etag: "\"\(digest)\"")
        }
        self.pages = pages
        self.assets = assets
    }

    /// A page fragment (a first line `<!-- title: ...; script: ... -->`, then its `<main>`) put in the layout, with
    /// the navigation marking the page's own link.
    static func laidOut(
        _ fragment: String, path: String, pages: [PageSet.Page], layout: String, features: [String] = []
    ) -> String {
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
            .replacingOccurrences(of: "{{features}}", with: features.joined(separator: " "))
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
        for page in pages {
            router.get(RouterPath(page.path)) { request, _ in try serve(page.file, request) }
        }
        if !pages.contains(where: { $0.path == "/" }), let first = pages.first {
            router.get("/") { request, _ in try serve(first.file, request) }
        }
        router.get("/assets/:file") { request, context in
            let file = try context.parameters.require("file")
            guard !file.hasSuffix(".html") else { throw APIError(404, "notFound", "no such file: \(file)") }
            return try serve(file, request)
        }
    }

    private func serve(_ file: String, _ request: Request) throws(APIError) -> Response {
        guard let asset = assets[file] else { throw APIError(404, "notFound", "no such page or file: \(file)") }
        var headers = Self.securityHeaders
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
