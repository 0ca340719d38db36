/// Converting between the typed model and the attribute sets of the wire format.
extension AppReceipt {
    /// Reads a receipt payload: the DER or BER `SET OF ReceiptAttribute` a receipt signs.
    public init(payload: ArraySlice<UInt8>) throws(ReceiptParsingError) {
        let attributes: [ReceiptAttribute]
        do {
            attributes = try ReceiptAttribute.parseSet(payload)
        } catch {
            throw ReceiptParsingError(.notAReceipt, "the signed content is not a set of receipt attributes (\(error))")
        }
        try self.init(attributes: attributes)
    }

    /// Builds the model from payload attributes; a known attribute may appear only once.
    public init(attributes: [ReceiptAttribute]) throws(ReceiptParsingError) {
        try ReceiptAttribute.refuseDuplicates(in: attributes, of: Self.singleTypes, context: "attribute")
        var bundle: ReceiptAttribute?
        var appVersion: String?
        self.init(bundleID: "", appVersion: "")
        for attribute in attributes {
            switch attribute.type {
            case ReceiptAttributeType.receiptType:
                environment = ReceiptEnvironment(rawValue: try attribute.stringValue())
            case ReceiptAttributeType.appItemID: appItemID = try attribute.integerValue()
            case ReceiptAttributeType.bundleID: bundle = attribute
            case ReceiptAttributeType.appVersion: appVersion = try attribute.stringValue()
            case ReceiptAttributeType.opaqueValue: opaqueValue = Array(attribute.value)
            case ReceiptAttributeType.sha1Hash: sha1Hash = Array(attribute.value)
            case ReceiptAttributeType.creationDate: creationDate = try attribute.dateValue()
            case ReceiptAttributeType.inAppPurchase:
                let inner: [ReceiptAttribute]
                do {
                    inner = try ReceiptAttribute.parseSet(attribute.value)
                } catch {
                    throw ReceiptParsingError(.malformedAttribute, "attribute 17 is not a set of attributes (\(error))")
                }
                inAppPurchases.append(try InAppPurchase(attributes: inner))
            case ReceiptAttributeType.originalPurchaseDate: originalPurchaseDate = try attribute.dateValue()
            case ReceiptAttributeType.originalAppVersion: originalAppVersion = try attribute.stringValue()
            case ReceiptAttributeType.expirationDate: expirationDate = try attribute.dateValue()
            default: unknownAttributes.append(attribute)
            }
        }
        guard let bundle else { throw ReceiptParsingError(.notAReceipt, "the payload has no bundle id (attribute 2)") }
        guard let appVersion else {
            throw ReceiptParsingError(.notAReceipt, "the payload has no app version (attribute 3)")
        }
        self.bundleID = try bundle.stringValue()
        self.bundleIDData = Array(bundle.value)
        self.appVersion = appVersion
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
        typealias T = ReceiptAttributeType
        try ReceiptAttribute.refuseDuplicates(in: attributes, of: Self.knownTypes, context: "in-app attribute")
        var productID: String?
        var transactionID: String?
        self.init(productID: "", transactionID: "")
        for attribute in attributes {
            switch attribute.type {
            case T.quantity: quantity = try attribute.intValue()
            case T.productID: productID = try attribute.stringValue()
            case T.transactionID: transactionID = try attribute.stringValue()
            case T.purchaseDate: purchaseDate = try attribute.dateValue()
            case T.originalTransactionID: originalTransactionID = try attribute.stringValue()
            case T.inAppOriginalPurchaseDate: originalPurchaseDate = try attribute.dateValue()
            case T.productType: productType = ProductType(rawValue: try attribute.intValue())
            case T.expiresDate: expiresDate = try attribute.dateValue()
            case T.webOrderLineItemID: webOrderLineItemID = try attribute.integerValue()
            case T.cancellationDate: cancellationDate = try attribute.dateValue()
            case T.isTrialPeriod: isTrialPeriod = try attribute.boolValue()
            case T.isInIntroOfferPeriod: isInIntroOfferPeriod = try attribute.boolValue()
            case T.promotionalOfferID:
                let offer = try attribute.stringValue()
                promotionalOfferID = offer.isEmpty ? nil : offer
            default: unknownAttributes.append(attribute)
            }
        }
        guard let productID else {
            throw ReceiptParsingError(.malformedAttribute, "an in-app record has no product id (1702)")
        }
        guard let transactionID else {
            throw ReceiptParsingError(.malformedAttribute, "an in-app record has no transaction id (1703)")
        }
        self.productID = productID
        self.transactionID = transactionID
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

extension ReceiptAttribute {
    /// Throws when one of `types` appears more than once: a forged receipt must not carry two bundle ids and hope one
    /// check reads the first while another reads the second.
    static func refuseDuplicates(in attributes: [ReceiptAttribute], of types: AttributeTypeSet, context: String)
        throws(ReceiptParsingError)
    {
        var seen: UInt64 = 0
        for attribute in attributes {
            guard let bit = types.bit(for: attribute.type) else { continue }
            guard seen & bit == 0 else {
                throw ReceiptParsingError(.malformedAttribute, "\(context) \(attribute.type) appears more than once")
            }
            seen |= bit
        }
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

    /// The type's bit when it is in the set.
    func bit(for type: Int) -> UInt64? {
        let offset = type - base
        guard offset >= 0, offset < 64, mask & (1 << UInt64(offset)) != 0 else { return nil }
        return 1 << UInt64(offset)
    }
}
