public import Foundation

/// An App Store storefront: a three-letter country code with the currency prices are shown in and the locale they are
/// formatted for.
public struct Storefront: Hashable, Sendable, CustomStringConvertible, Codable {
    /// ISO 3166-1 alpha-3, as the App Store writes it (`USA`, `GBR`, `FRA`).
    public let countryCode: String
    /// ISO 4217 currency code.
    public let currency: String
    /// The locale identifier prices are formatted in.
    public let locale: String

    public init(countryCode: String, currency: String, locale: String) {
        self.countryCode = countryCode
        self.currency = currency
        self.locale = locale
    }

    public var description: String { countryCode }

    /// The storefronts IAPKit knows, by country code. Others can be made with ``init(countryCode:currency:locale:)``.
    public static let known: [String: Storefront] = {
        let table: [(String, String, String)] = [
            ("USA", "USD", "en_US"), ("GBR", "GBP", "en_GB"), ("CAN", "CAD", "en_CA"), ("AUS", "AUD", "en_AU"),
            ("NZL", "NZD", "en_NZ"), ("IRL", "EUR", "en_IE"), ("FRA", "EUR", "fr_FR"), ("DEU", "EUR", "de_DE"),
            ("ITA", "EUR", "it_IT"), ("ESP", "EUR", "es_ES"), ("NLD", "EUR", "nl_NL"), ("BEL", "EUR", "fr_BE"),
            ("AUT", "EUR", "de_AT"), ("PRT", "EUR", "pt_PT"), ("FIN", "EUR", "fi_FI"), ("CHE", "CHF", "de_CH"),
            ("SWE", "SEK", "sv_SE"), ("NOR", "NOK", "nb_NO"), ("DNK", "DKK", "da_DK"), ("POL", "PLN", "pl_PL"),
            ("JPN", "JPY", "ja_JP"), ("KOR", "KRW", "ko_KR"), ("CHN", "CNY", "zh_CN"), ("TWN", "TWD", "zh_TW"),
            ("HKG", "HKD", "zh_HK"), ("IND", "INR", "en_IN"), ("BRA", "BRL", "pt_BR"), ("MEX", "MXN", "es_MX"),
            ("TUR", "TRY", "tr_TR"), ("ZAF", "ZAR", "en_ZA"), ("SGP", "SGD", "en_SG"), ("ARE", "AED", "ar_AE"),
            ("SAU", "SAR", "ar_SA"), ("ISR", "ILS", "he_IL"), ("IDN", "IDR", "id_ID"), ("THA", "THB", "th_TH"),
        ]
        return Dictionary(
            uniqueKeysWithValues: table.map { ($0.0, Storefront(countryCode: $0.0, currency: $0.1, locale: $0.2)) })
    }()

    /// The storefront with this country code, if IAPKit knows it.
    public static func named(_ countryCode: String) -> Storefront? { known[countryCode.uppercased()] }

    /// `price` formatted in this storefront's currency and locale (never converted from another currency).
    public func format(_ price: Decimal) -> String {
        price.formatted(.currency(code: currency).locale(Locale(identifier: locale)))
    }
}
