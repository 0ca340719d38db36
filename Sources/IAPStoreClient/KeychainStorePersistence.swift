#if canImport(Security)
    public import Foundation
    import Security

    /// The cache in the keychain, where StoreHelper keeps consumable counts on Apple platforms: it survives the app's
    /// deletion and reinstallation on the device and is not in the app's container for anyone to edit. One generic
    /// password item per `service` and `account`, replaced on each save.
    ///
    /// Written from Apple's Security API declarations; it has not yet run on Apple hardware (IAPKit's tests use
    /// ``FileStorePersistence`` and ``MemoryStorePersistence``).
    public struct KeychainStorePersistence: StorePersistence {
        public let service: String
        public let account: String

        public init(service: String, account: String = "store-cache") {
            self.service = service
            self.account = account
        }

        private var query: [String: Any] {
            [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                kSecAttrAccount as String: account,
            ]
        }

        public func load() async throws(StoreError) -> StoreCache? {
            var search = query
            search[kSecReturnData as String] = true
            search[kSecMatchLimit as String] = kSecMatchLimitOne
            var found: CFTypeRef?
            let status = SecItemCopyMatching(search as CFDictionary, &found)
            if status == errSecItemNotFound { return nil }
            guard status == errSecSuccess, let data = found as? Data else {
                throw StoreError(.persistenceFailed, "cannot read the store cache from the keychain (status \(status))")
            }
            do { return try JSONDecoder().decode(StoreCache.self, from: data) } catch {
                throw StoreError(.persistenceFailed, "the store cache in the keychain cannot be read: \(error)")
            }
        }

        public func save(_ cache: StoreCache) async throws(StoreError) {
            let data: Data
            do { data = try JSONEncoder().encode(cache) } catch {
                throw StoreError(.persistenceFailed, "cannot encode the store cache: \(error)")
            }
            var status = SecItemUpdate(query as CFDictionary, [kSecValueData as String: data] as CFDictionary)
            if status == errSecItemNotFound {
                var item = query
                item[kSecValueData as String] = data
                item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlock
                status = SecItemAdd(item as CFDictionary, nil)
            }
            guard status == errSecSuccess else {
                throw StoreError(.persistenceFailed, "cannot write the store cache to the keychain (status \(status))")
            }
        }
    }
#endif
