/// A JSON request body type that names its members, so the side that reads it can refuse a member it does not know
/// (a misspelt option silently ignored is worse than a 400). Its `CodingKeys` list every member.
public protocol KnownFields: Decodable {
    /// The members: the type's coding keys.
    associatedtype Fields: CodingKey & CaseIterable
    /// Members that are objects themselves, with their own members.
    static var objectFields: [String: Set<String>] { get }
}

extension KnownFields {
    public static var objectFields: [String: Set<String>] { [:] }

    /// The member names.
    public static var fields: Set<String> { Set(Fields.allCases.map(\.stringValue)) }
}
