public import Foundation
public import IAPSignedData
import NIOHTTP1

/// The filters of a transaction history request (`GET /inApps/v2/history/{transactionId}`); every page of one
/// listing repeats them.
public struct TransactionHistoryQuery: Sendable, Hashable {
    /// The order of a listing by purchase date.
    public enum Sort: String, Sendable, Hashable {
        case ascending = "ASCENDING"
        case descending = "DESCENDING"
    }

    public var productIDs: [String]
    /// `AUTO_RENEWABLE`, `NON_RENEWABLE`, `CONSUMABLE`, `NON_CONSUMABLE`.
    public var productTypes: [String]
    public var sort: Sort?
    /// Only refunded and revoked transactions (true) or only the others (false).
    public var revoked: Bool?
    /// `PURCHASED` or `FAMILY_SHARED`.
    public var ownership: String?
    public var startDate: Date?
    public var endDate: Date?

    public init(
        productIDs: [String] = [], productTypes: [String] = [], sort: Sort? = nil, revoked: Bool? = nil,
        ownership: String? = nil, startDate: Date? = nil, endDate: Date? = nil
    ) {
        self.productIDs = productIDs
        self.productTypes = productTypes
        self.sort = sort
        self.revoked = revoked
        self.ownership = ownership
        self.startDate = startDate
        self.endDate = endDate
    }

    /// The query items (lists repeat their key), with the page's revision.
    func queryItems(revision: String?) -> [URLQueryItem] {
        var items: [URLQueryItem] = []
        if let revision { items.append(URLQueryItem(name: "revision", value: revision)) }
        items += productIDs.map { URLQueryItem(name: "productId", value: $0) }
        items += productTypes.map { URLQueryItem(name: "productType", value: $0) }
        if let sort { items.append(URLQueryItem(name: "sort", value: sort.rawValue)) }
        if let revoked { items.append(URLQueryItem(name: "revoked", value: revoked ? "true" : "false")) }
        if let ownership { items.append(URLQueryItem(name: "inAppOwnershipType", value: ownership)) }
        if let startDate {
            items.append(URLQueryItem(name: "startDate", value: String(ServerAPIClient.milliseconds(startDate))))
        }
        if let endDate {
            items.append(URLQueryItem(name: "endDate", value: String(ServerAPIClient.milliseconds(endDate))))
        }
        return items
    }
}

/// One page of a paged answer (a history, the refunds, the notification history), every document verified.
public struct ServerAPIPage<Element: Sendable>: Sendable {
    public var items: [Element]
    /// The signed form of each item, in the same order (to keep or pass on as received).
    public var documents: [String] = []
    /// What asks for the next page (a history's `revision`, the notification history's `paginationToken`).
    public var next: String?
    public var hasMore: Bool
}

/// A paged answer read as an async sequence: pages are fetched as the caller reads, until the server says there is no
/// more. A server that says "more" without moving on ends the listing with an error instead of looping.
public struct ServerAPIListing<Element: Sendable>: AsyncSequence, Sendable {
    public typealias Failure = ServerAPIError

    let fetch: @Sendable (_ next: String?) async throws(ServerAPIError) -> ServerAPIPage<Element>

    public func makeAsyncIterator() -> Iterator { Iterator(fetch: fetch) }

    /// Reads the pages in order.
    public struct Iterator: AsyncIteratorProtocol {
        let fetch: @Sendable (String?) async throws(ServerAPIError) -> ServerAPIPage<Element>
        var buffer: [Element] = []
        var next: String?
        var finished = false

        public mutating func next() async throws(ServerAPIError) -> Element? {
            while buffer.isEmpty {
                if finished { return nil }
                let page = try await fetch(next)
                if page.hasMore, page.next == nil || page.next == next || page.items.isEmpty {
                    throw ServerAPIError(.malformedAnswer, "the listing says there is more but does not move on")
                }
                buffer = page.items
                next = page.next
                finished = !page.hasMore
            }
            return buffer.removeFirst()
        }
    }

    /// Every element, read to the end.
    public func collect() async throws(ServerAPIError) -> [Element] {
        var all: [Element] = []
        var iterator = makeAsyncIterator()
        while let element = try await iterator.next() { all.append(element) }
        return all
    }
}

extension ServerAPIClient {
    /// `GET /inApps/v2/history/{transactionId}`: one page of the customer's transactions, every one verified.
    public func transactionHistoryPage(
        _ transactionID: String, query: TransactionHistoryQuery = TransactionHistoryQuery(), revision: String? = nil
    ) async throws(ServerAPIError) -> ServerAPIPage<TransactionPayload> {
        let answer = try await decode(
            AppStoreServerAPI.HistoryResponse.self, .GET, "/inApps/v2/history/\(Self.segment(transactionID))",
            query: query.queryItems(revision: revision))
        return ServerAPIPage(
            items: try await verifiedTransactions(answer.signedTransactions), documents: answer.signedTransactions,
            next: answer.revision, hasMore: answer.hasMore)
    }

    /// The customer's whole history (any of their transaction ids), page by page as it is read.
    public func transactionHistory(
        _ transactionID: String, query: TransactionHistoryQuery = TransactionHistoryQuery()
    ) -> ServerAPIListing<TransactionPayload> {
        ServerAPIListing { (revision) throws(ServerAPIError) in
            try await transactionHistoryPage(transactionID, query: query, revision: revision)
        }
    }

    /// `GET /inApps/v2/refund/lookup/{transactionId}`: one page of the customer's refunded transactions, oldest
    /// refund first.
    public func refundHistoryPage(_ transactionID: String, revision: String? = nil) async throws(ServerAPIError)
        -> ServerAPIPage<TransactionPayload>
    {
        let answer = try await decode(
            AppStoreServerAPI.RefundHistoryResponse.self, .GET,
            "/inApps/v2/refund/lookup/\(Self.segment(transactionID))",
            query: revision.map { [URLQueryItem(name: "revision", value: $0)] } ?? [])
        return ServerAPIPage(
            items: try await verifiedTransactions(answer.signedTransactions), documents: answer.signedTransactions,
            next: answer.revision, hasMore: answer.hasMore)
    }

    /// Every refunded transaction of the customer, page by page as it is read.
    public func refundHistory(_ transactionID: String) -> ServerAPIListing<TransactionPayload> {
        ServerAPIListing { (revision) throws(ServerAPIError) in
            try await refundHistoryPage(transactionID, revision: revision)
        }
    }
}
