/// Converting between the typed model and the attribute sets of the wire format.
extension AppReceipt {
    /// Reads a receipt payload: the DER or BER `SET OF ReceiptAttribute` a receipt signs.
    public init(payload: ArraySlice<UInt8>) throws(ReceiptParsingError) {
        if let receipt = try Self.decode(der: payload) {
            self = receipt
            return
        }
        // BER: normalise to DER with swift-asn1, keeping the order, then read that.
        let normalized: [UInt8]
        do {
            normalized = try ReceiptAttribute.normalizedToDER(payload)
        } catch {
            throw ReceiptParsingError(
                .notAReceipt, "the signed content is not a set of receipt attributes (\(DERReader.message(error)))")
        }
        guard let receipt = try Self.decode(der: normalized[...]) else {
            throw ReceiptParsingError(.notAReceipt, "the signed content could not be normalised to DER")
        }
        self = receipt
    }

    /// Builds the model from payload attributes; a known attribute may appear only once.
    public init(attributes: [ReceiptAttribute]) throws(ReceiptParsingError) {
        try self.init(payload: ReceiptAttribute.serializeSetInOrder(attributes)[...])
    }

    /// Reads a DER payload in place; `nil` when it uses indefinite lengths.
    private static func decode(der payload: ArraySlice<UInt8>) throws(ReceiptParsingError) -> AppReceipt? {
        let result = payload.withUnsafeBufferPointer { buffer -> Result<AppReceipt?, ReceiptParsingError> in
            do throws(ReceiptParsingError) {
                return .success(try decode(buffer, payload: payload))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private static func decode(_ buffer: UnsafeBufferPointer<UInt8>, payload: ArraySlice<UInt8>)
        throws(ReceiptParsingError) -> AppReceipt?
    {
        typealias T = ReceiptAttributeType
        var receipt = AppReceipt(bundleID: "", appVersion: "")
        var duplicates = DuplicateGuard(Self.singleTypes, context: "attribute")
        var bundle: AttributeView?
        var appVersion: String?
        var complete = true
        let walked = try ReceiptAttribute.walkSet(
            buffer,
            failure: {
                ReceiptParsingError(.notAReceipt, "the signed content is not a set of receipt attributes (\($0))")
            }
        ) { attribute throws(ReceiptParsingError) in
            try duplicates.see(attribute.type)
            switch attribute.type {
            case T.receiptType: receipt.environment = ReceiptEnvironment(rawValue: try attribute.string())
            case T.appItemID: receipt.appItemID = try attribute.integer()
            case T.bundleID: bundle = attribute
            case T.appVersion: appVersion = try attribute.string()
            case T.opaqueValue: receipt.opaqueValue = attribute.bytes
            case T.sha1Hash: receipt.sha1Hash = attribute.bytes
            case T.creationDate: receipt.creationDate = try attribute.date()
            case T.inAppPurchase:
                guard let purchase = try InAppPurchase.decode(attribute, payload: payload) else {
                    complete = false
                    return
                }
                receipt.inAppPurchases.append(purchase)
            case T.originalPurchaseDate: receipt.originalPurchaseDate = try attribute.date()
            case T.originalAppVersion: receipt.originalAppVersion = try attribute.string()
            case T.expirationDate: receipt.expirationDate = try attribute.date()
            default:
                receipt.unknownAttributes.append(
                    ReceiptAttribute(
                        type: attribute.type, version: attribute.version,
                        value: DERReader.slice(payload, attribute.range)))
            }
        }
        guard walked, complete else { return nil }
        guard let bundle else { throw ReceiptParsingError(.notAReceipt, "the payload has no bundle id (attribute 2)") }
        guard let appVersion else {
            throw ReceiptParsingError(.notAReceipt, "the payload has no app version (attribute 3)")
        }
        receipt.bundleID = try bundle.string()
        receipt.bundleIDData = bundle.bytes
        receipt.appVersion = appVersion
        return receipt
    }

    /// The known attributes that may appear once (17 appears once per purchase).
    private static let singleTypes = AttributeTypeSet([0, 1, 2, 3, 4, 5, 12, 18, 19, 21])

    /// The payload attributes of this receipt, known fields first then the kept unknown ones.
    public func attributes() -> [ReceiptAttribute] {
        typealias T = ReceiptAttributeType
        var attributes: [ReceiptAttribute] = []
        if let environment { attributes.append(.string(T.receiptType, environment.rawValue)) }
        if let appItemID { attributes.append(.integer(T.appItemID, appItemID)) }
        attributes.append(ReceiptAttribute(type: T.bundleID, value: bundleIDData[...]))
        attributes.append(.string(T.appVersion, appVersion))
        attributes.append(ReceiptAttribute(type: T.opaqueValue, value: opaqueValue[...]))
        attributes.append(ReceiptAttribute(type: T.sha1Hash, value: sha1Hash[...]))
        if let creationDate { attributes.append(.date(T.creationDate, creationDate)) }
        for purchase in inAppPurchases {
            // The in-app attributes always encode: they are built from typed values.
            let set = (try? ReceiptAttribute.serializeSet(purchase.attributes())) ?? []
            attributes.append(ReceiptAttribute(type: T.inAppPurchase, value: set[...]))
        }
        if let originalPurchaseDate { attributes.append(.date(T.originalPurchaseDate, originalPurchaseDate)) }
        if let originalAppVersion { attributes.append(.string(T.originalAppVersion, originalAppVersion)) }
        if let expirationDate { attributes.append(.date(T.expirationDate, expirationDate)) }
        return attributes + unknownAttributes
    }

    /// The DER payload of this receipt: the bytes a signature covers.
    public func payload() throws -> [UInt8] {
        try ReceiptAttribute.serializeSet(attributes())
    }
}

extension InAppPurchase {
    /// Builds a purchase record from the attributes inside an attribute 17.
    public init(attributes: [ReceiptAttribute]) throws(ReceiptParsingError) {
        let set = ReceiptAttribute.serializeSetInOrder(attributes)
        let result = set.withUnsafeBufferPointer { buffer -> Result<InAppPurchase?, ReceiptParsingError> in
            do throws(ReceiptParsingError) {
                let view = AttributeView(
                    type: ReceiptAttributeType.inAppPurchase, version: 1, value: buffer, range: 0..<buffer.count)
                return .success(try InAppPurchase.decode(view, payload: set[...]))
            } catch {
                return .failure(error)
            }
        }
        guard let purchase = try result.get() else {
            throw ReceiptParsingError(.malformedAttribute, "the in-app attributes do not encode as DER")
        }
        self = purchase
    }

    /// Reads the purchase record an attribute 17 holds; `nil` when its set uses indefinite lengths.
    static func decode(_ attribute: AttributeView, payload: ArraySlice<UInt8>) throws(ReceiptParsingError)
        -> InAppPurchase?
    {
        typealias T = ReceiptAttributeType
        var purchase = InAppPurchase(productID: "", transactionID: "")
        var duplicates = DuplicateGuard(Self.knownTypes, context: "in-app attribute")
        var productID: String?
        var transactionID: String?
        let walked = try ReceiptAttribute.walkSet(
            attribute.value, offset: attribute.range.lowerBound,
            failure: { ReceiptParsingError(.malformedAttribute, "attribute 17 is not a set of attributes (\($0))") }
        ) { attribute throws(ReceiptParsingError) in
            try duplicates.see(attribute.type)
            switch attribute.type {
            case T.quantity: purchase.quantity = try attribute.int()
            case T.productID: productID = try attribute.string()
            case T.transactionID: transactionID = try attribute.string()
            case T.purchaseDate: purchase.purchaseDate = try attribute.date()
            case T.originalTransactionID: purchase.originalTransactionID = try attribute.string()
            case T.inAppOriginalPurchaseDate: purchase.originalPurchaseDate = try attribute.date()
            case T.productType: purchase.productType = ProductType(rawValue: try attribute.int())
            case T.expiresDate: purchase.expiresDate = try attribute.date()
            case T.webOrderLineItemID: purchase.webOrderLineItemID = try attribute.integer()
            case T.cancellationDate: purchase.cancellationDate = try attribute.date()
            case T.isTrialPeriod: purchase.isTrialPeriod = try attribute.bool()
            case T.isInIntroOfferPeriod: purchase.isInIntroOfferPeriod = try attribute.bool()
            case T.promotionalOfferID:
                let offer = try attribute.string()
                purchase.promotionalOfferID = offer.isEmpty ? nil : offer
            default:
                purchase.unknownAttributes.append(
                    ReceiptAttribute(
                        type: attribute.type, version: attribute.version,
                        value: DERReader.slice(payload, attribute.range)))
            }
        }
        guard walked else { return nil }
        guard let productID else {
            throw ReceiptParsingError(.malformedAttribute, "an in-app record has no product id (1702)")
        }
        guard let transactionID else {
            throw ReceiptParsingError(.malformedAttribute, "an in-app record has no transaction id (1703)")
        }
        purchase.productID = productID
        purchase.transactionID = transactionID
        return purchase
    }

    private static let knownTypes = AttributeTypeSet([
        1701, 1702, 1703, 1704, 1705, 1706, 1707, 1708, 1711, 1712, 1713, 1719, 1721,
    ])

    /// The attributes of this record, known fields first then the kept unknown ones.
    public func attributes() -> [ReceiptAttribute] {
        typealias T = ReceiptAttributeType
        var attributes: [ReceiptAttribute] = [
            .int(T.quantity, quantity), .string(T.productID, productID), .string(T.transactionID, transactionID),
        ]
        if let purchaseDate { attributes.append(.date(T.purchaseDate, purchaseDate)) }
        if let originalTransactionID { attributes.append(.string(T.originalTransactionID, originalTransactionID)) }
        if let originalPurchaseDate { attributes.append(.date(T.inAppOriginalPurchaseDate, originalPurchaseDate)) }
        if let productType { attributes.append(.int(T.productType, productType.rawValue)) }
        if let expiresDate { attributes.append(.date(T.expiresDate, expiresDate)) }
        if let webOrderLineItemID { attributes.append(.integer(T.webOrderLineItemID, webOrderLineItemID)) }
        if let cancellationDate { attributes.append(.date(T.cancellationDate, cancellationDate)) }
        attributes.append(.bool(T.isTrialPeriod, isTrialPeriod))
        attributes.append(.bool(T.isInIntroOfferPeriod, isInIntroOfferPeriod))
        if let promotionalOfferID { attributes.append(.string(T.promotionalOfferID, promotionalOfferID)) }
        return attributes + unknownAttributes
    }
}

/// Refuses a known attribute seen twice: a forged receipt must not carry two bundle ids and hope one check reads the
/// first while another reads the second.
struct DuplicateGuard {
    let types: AttributeTypeSet
    let context: StaticString
    private var seen: UInt64 = 0

    init(_ types: AttributeTypeSet, context: StaticString) {
        self.types = types
        self.context = context
    }

    mutating func see(_ type: Int) throws(ReceiptParsingError) {
        guard let bit = types.bit(for: type) else { return }
        guard seen & bit == 0 else {
            throw ReceiptParsingError(.malformedAttribute, "\(context) \(type) appears more than once")
        }
        seen |= bit
    }
}

/// A small set of attribute types within 64 of each other, as a bit mask: cheaper than hashing on the hot path.
struct AttributeTypeSet {
    let base: Int
    let mask: UInt64

    init(_ types: [Int]) {
        let base = types.min() ?? 0
        precondition(types.allSatisfy { $0 - base < 64 }, "attribute types too far apart for a mask")
        self.base = base
        self.mask = types.reduce(0) { $0 | 1 << UInt64($1 - base) }
    }

    /// The type's bit when it is in the set. The type comes from the input and may be any `Int`: it is compared
    /// before anything is subtracted from it, so no value can overflow.
    func bit(for type: Int) -> UInt64? {
        guard type >= base, type - base < 64 else { return nil }
        let bit: UInt64 = 1 << UInt64(type - base)
        return mask & bit != 0 ? bit : nil
    }
}
