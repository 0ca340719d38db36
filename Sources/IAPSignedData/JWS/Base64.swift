/// Byte-level base64: the URL alphabet without padding for JWS parts (RFC 7515), the standard alphabet with padding
/// for `x5c` certificates.
///
/// Decoding is strict: no whitespace, no characters from the other alphabet, no padding where none is allowed, and no
/// non-zero leftover bits, so each byte string has exactly one accepted encoding.
enum Base64 {
    enum Alphabet {
        /// `A-Z a-z 0-9 + /`, padded with `=` to a multiple of four.
        case standard
        /// `A-Z a-z 0-9 - _`, never padded.
        case url
    }

    private static let standardCharacters = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlCharacters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let invalid: UInt8 = 0xFF

    private static func table(for characters: [UInt8]) -> [UInt8] {
        var table = [UInt8](repeating: invalid, count: 256)
        for (value, character) in characters.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }
    private static let standardTable = table(for: standardCharacters)
    private static let urlTable = table(for: urlCharacters)

    /// The bytes `text` encodes, or nil when it is not canonical base64 in `alphabet`.
    static func decode(_ text: UnsafeBufferPointer<UInt8>, alphabet: Alphabet) -> [UInt8]? {
        var count = text.count
        if alphabet == .standard {
            guard count % 4 == 0 else { return nil }
            if count > 0, text[count - 1] == UInt8(ascii: "=") { count -= 1 }
            if count > 0, text[count - 1] == UInt8(ascii: "=") { count -= 1 }
        }
        guard count % 4 != 1 else { return nil }
        let table = alphabet == .standard ? standardTable : urlTable
        return table.withUnsafeBufferPointer { table -> [UInt8]? in
            let fullGroups = count / 4
            let tail = count % 4
            let outputCount = fullGroups * 3 + (tail == 0 ? 0 : tail - 1)
            var valid = true
            let output = [UInt8](unsafeUninitializedCapacity: outputCount) { out, initialized in
                var o = 0
                var i = 0
                for _ in 0..<fullGroups {
                    let a = table[Int(text[i])]
                    let b = table[Int(text[i + 1])]
                    let c = table[Int(text[i + 2])]
                    let d = table[Int(text[i + 3])]
                    if (a | b | c | d) & 0xC0 != 0 {
                        valid = false
                        break
                    }
                    out[o] = a << 2 | b >> 4
                    out[o + 1] = b << 4 | c >> 2
                    out[o + 2] = c << 6 | d
                    o += 3
                    i += 4
                }
                if valid, tail > 0 {
                    let a = table[Int(text[i])]
                    let b = table[Int(text[i + 1])]
                    let c = tail == 3 ? table[Int(text[i + 2])] : 0
                    if (a | b | c) & 0xC0 != 0 {
                        valid = false
                    } else if tail == 2 {
                        out[o] = a << 2 | b >> 4
                        valid = b & 0x0F == 0
                        o += 1
                    } else {
                        out[o] = a << 2 | b >> 4
                        out[o + 1] = b << 4 | c >> 2
                        valid = c & 0x03 == 0
                        o += 2
                    }
                }
                initialized = valid ? o : 0
            }
            return valid ? output : nil
        }
    }

    static func decode(_ text: some Collection<UInt8>, alphabet: Alphabet) -> [UInt8]? {
        if let result = text.withContiguousStorageIfAvailable({ decode($0, alphabet: alphabet) }) { return result }
        return Array(text).withUnsafeBufferPointer { decode($0, alphabet: alphabet) }
    }

    /// The encoding of `bytes`: padded in the standard alphabet, unpadded in the URL one.
    static func encode(_ bytes: some Collection<UInt8>, alphabet: Alphabet) -> [UInt8] {
        let characters = alphabet == .standard ? standardCharacters : urlCharacters
        let input = Array(bytes)
        var output: [UInt8] = []
        output.reserveCapacity((input.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= input.count {
            let value = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
            for shift in [18, 12, 6, 0] { output.append(characters[Int(value >> UInt32(shift) & 0x3F)]) }
            i += 3
        }
        let rest = input.count - i
        if rest > 0 {
            let value = UInt32(input[i]) << 16 | (rest == 2 ? UInt32(input[i + 1]) << 8 : 0)
            output.append(characters[Int(value >> 18 & 0x3F)])
            output.append(characters[Int(value >> 12 & 0x3F)])
            if rest == 2 { output.append(characters[Int(value >> 6 & 0x3F)]) }
            if alphabet == .standard { output += Array(repeating: UInt8(ascii: "="), count: 3 - rest) }
        }
        return output
    }
}
