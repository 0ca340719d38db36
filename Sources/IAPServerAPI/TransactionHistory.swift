public import Foundation
public import IAPSignedData
import NIOHTTP1

/// The filters of a transaction history request (`GET /inApps/v2/history/{transactionId}`); every page of one
/// listing repeats them.
public struct TransactionHistoryQuery: Sendable, Hashable {
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

    /// The query string (lists repeat their key), with the page's revision.
    func queryString(revision: String?) -> String {
        var items: [URLQueryItem] = []
        if let revision { items.append(URLQueryItem(name: "revision", value: revision)) }
        items += productIDs.map { URLQueryItem(name: "productId", value: $0) }
        items += productTypes.map { URLQueryItem(name: "productType", value: $0) }
        if let sort { items.append(URLQueryItem(name: "sort", value: sort.rawValue)) }
        if let revoked { items.append(URLQueryItem(name: "revoked", value: revoked ? "true" : "false")) }
        if let ownership { items.append(URLQueryItem(name: "inAppOwnershipType", value: ownership)) }
        if let startDate { items.append(URLQueryItem(name: "startDate", value: Self.milliseconds(startDate))) }
        if let endDate { items.append(URLQueryItem(name: "endDate", value: Self.milliseconds(endDate))) }
        var components = URLComponents()
        components.queryItems = items
        return items.isEmpty ? "" : "?" + (components.percentEncodedQuery ?? "")
    }

    private static func milliseconds(_ date: Date) -> String { String(Int64(date.timeIntervalSince1970 * 1000)) }
}

/// One page of a customer's history, every transaction verified.
public struct TransactionHistoryPage: Sendable {
    public var transactions: [TransactionPayload]
    /// Where the next page starts.
    public var revision: String
    public var hasMore: Bool
}

/// A customer's whole history as an async sequence: pages are fetched as the caller reads, until Apple says there is no
/// more. A server that says "more" without moving on ends the listing with an error instead of looping.
public struct TransactionHistory: AsyncSequence, Sendable {
    public typealias Element = TransactionPayload
    public typealias Failure = ServerAPIError

    let client: ServerAPIClient
    let transactionID: String
    let query: TransactionHistoryQuery

    public func makeAsyncIterator() -> Iterator {
        Iterator(client: client, transactionID: transactionID, query: query)
    }

    public struct Iterator: AsyncIteratorProtocol {
        let client: ServerAPIClient
        let transactionID: String
        let query: TransactionHistoryQuery
        var buffer: [TransactionPayload] = []
        var revision: String?
        var finished = false

        init(client: ServerAPIClient, transactionID: String, query: TransactionHistoryQuery) {
            self.client = client
            self.transactionID = transactionID
            self.query = query
        }

        public mutating func next() async throws(ServerAPIError) -> TransactionPayload? {
            while buffer.isEmpty {
                if finished { return nil }
                let page = try await client.transactionHistoryPage(transactionID, query: query, revision: revision)
                if page.hasMore, page.revision == revision || page.transactions.isEmpty {
                    throw ServerAPIError(.malformedAnswer, "the history says there is more but does not move on")
                }
                buffer = page.transactions
                revision = page.revision
                finished = !page.hasMore
            }
            return buffer.removeFirst()
        }
    }
}

extension ServerAPIClient {
    /// `GET /inApps/v2/history/{transactionId}`: one page, every transaction verified.
    public func transactionHistoryPage(
        _ transactionID: String, query: TransactionHistoryQuery = TransactionHistoryQuery(), revision: String? = nil
    ) async throws(ServerAPIError) -> TransactionHistoryPage {
        struct Answer: Decodable {
            var revision: String
            var hasMore: Bool
            var signedTransactions: [String]
        }
        let answer = try await decode(
            Answer.self, .GET,
            "/inApps/v2/history/\(Self.segment(transactionID))\(query.queryString(revision: revision))")
        var transactions: [TransactionPayload] = []
        for jws in answer.signedTransactions { transactions.append(try await verifiedTransaction(jws)) }
        return TransactionHistoryPage(transactions: transactions, revision: answer.revision, hasMore: answer.hasMore)
    }

    /// The customer's whole history, page by page as it is read.
    public func transactionHistory(
        _ transactionID: String, query: TransactionHistoryQuery = TransactionHistoryQuery()
    ) -> TransactionHistory {
        TransactionHistory(client: self, transactionID: transactionID, query: query)
    }
}
