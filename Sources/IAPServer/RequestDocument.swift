import Foundation
package import IAPCore
import IAPSignedData

/// A JSON request body read strictly: an object, with only the members an endpoint knows, each of the right type.
/// Anything else is a 400 naming the member, never a crash or a 500.
package struct RequestDocument {
    private let object: JSONObject

    /// Parses `bytes` and refuses members outside `allowed`.
    package init(bytes: [UInt8], allowed: Set<String>) throws(APIError) {
        let value: JSONValue
        do { value = try JSONValue(jsonBytes: bytes) } catch {
            throw .badRequest("malformedJSON", "the body is not JSON: \(error.reason)")
        }
        guard case .object(let object) = value else {
            throw .badRequest("malformedJSON", "the body must be a JSON object")
        }
        try self.init(object: object, allowed: allowed, path: "")
    }

    private init(object: JSONObject, allowed: Set<String>, path: String) throws(APIError) {
        if let unknown = object.keys.first(where: { !allowed.contains($0) }) {
            let known = allowed.isEmpty ? "it takes none" : "known: \(allowed.sorted().joined(separator: ", "))"
            throw .badRequest(
                "unknownField", "'\(path)\(unknown.prefix(100))' is not a field of this request (\(known))")
        }
        self.object = object
    }

    /// A member that is itself an object, read as strictly as the body.
    func object(_ key: String, allowed: Set<String>) throws(APIError) -> RequestDocument? {
        switch object[key] {
        case nil, .null?: return nil
        case .object(let member)?: return try RequestDocument(object: member, allowed: allowed, path: "\(key).")
        default: throw .badRequest("invalidField", "'\(key)' must be an object")
        }
    }

    /// A member that must be a UUID, when present.
    func uuid(_ key: String) throws(APIError) -> UUID? {
        try string(key).map { (text) throws(APIError) in
            guard let uuid = UUID(uuidString: text) else {
                throw .badRequest("invalidField", "'\(key)' must be a UUID")
            }
            return uuid
        }
    }

    func string(_ key: String) throws(APIError) -> String? {
        switch object[key] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        default: throw .badRequest("invalidField", "'\(key)' must be a string")
        }
    }

    func requiredString(_ key: String) throws(APIError) -> String {
        guard let text = try string(key), !text.isEmpty else {
            throw .badRequest("missingField", "'\(key)' is required")
        }
        return text
    }

    func bool(_ key: String) throws(APIError) -> Bool? {
        switch object[key] {
        case nil, .null?: return nil
        case .bool(let flag)?: return flag
        default: throw .badRequest("invalidField", "'\(key)' must be true or false")
        }
    }

    /// A number (whole or not) that is finite and within `range`.
    func number(_ key: String, in range: ClosedRange<Double>) throws(APIError) -> Double? {
        switch object[key] {
        case nil, .null?: return nil
        case .number(let number)?:
            guard let value = number.doubleValue, value.isFinite, range.contains(value) else {
                throw .badRequest(
                    "invalidField", "'\(key)' must be a number from \(range.lowerBound) to \(range.upperBound)")
            }
            return value
        default: throw .badRequest("invalidField", "'\(key)' must be a number")
        }
    }

    func integer(_ key: String, in range: ClosedRange<Int64>) throws(APIError) -> Int64? {
        switch object[key] {
        case nil, .null?: return nil
        case .number(let number)?:
            guard let value = number.int64Value, range.contains(value) else {
                throw .badRequest(
                    "invalidField", "'\(key)' must be a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return value
        default: throw .badRequest("invalidField", "'\(key)' must be a number")
        }
    }
}

extension RequestDocument {
    /// Reads `bytes` as a `T`, as strictly as a document: a JSON object with only `T`'s members (and, in members that
    /// are objects, only theirs), each of the right type. A missing member is `missingField`, a wrong one
    /// `invalidField`, naming the member.
    package static func decode<T: KnownFields>(_ type: T.Type, from bytes: [UInt8]) throws(APIError) -> T {
        let document = try RequestDocument(bytes: bytes, allowed: T.fields)
        for (key, members) in T.objectFields { _ = try document.object(key, allowed: members) }
        do { return try JSONDecoder().decode(T.self, from: Data(bytes)) } catch let error as DecodingError {
            throw Self.refusal(error)
        } catch {
            throw .badRequest("malformedJSON", "the body could not be read: \(error)")
        }
    }

    private static func refusal(_ error: DecodingError) -> APIError {
        func name(_ path: [any CodingKey], _ last: (any CodingKey)? = nil) -> String {
            (path + (last.map { [$0] } ?? [])).map(\.stringValue).joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return .badRequest("missingField", "'\(name(context.codingPath, key))' is required")
        case .valueNotFound(_, let context):
            return .badRequest("missingField", "'\(name(context.codingPath))' is required")
        case .typeMismatch(let type, let context):
            let kind =
                switch type {
                case is String.Type: "a string"
                case is Bool.Type: "true or false"
                case is Int64.Type, is Int.Type: "a whole number"
                case is Double.Type: "a number"
                default: "of another type"
                }
            return .badRequest("invalidField", "'\(name(context.codingPath))' must be \(kind)")
        case .dataCorrupted(let context):
            // Foundation names no member for a number its type cannot hold (1e308 for whole seconds, 2^63).
            let field = name(context.codingPath)
            guard field.isEmpty else {
                return .badRequest("invalidField", "'\(field)' is not valid: \(context.debugDescription)")
            }
            return .badRequest(
                "invalidField", "a member's value does not fit its field (a number too large, or not a whole number?)")
        @unknown default:
            return .badRequest("invalidField", "the body does not have the expected members")
        }
    }
}
