/// Checks of names and ids a client sends, made on Unicode scalars: a `Character` (a grapheme cluster) can hold any
/// number of combining marks, so a limit counted in characters bounds nothing, and a letter followed by a thousand
/// marks is still one letter.
extension StringProtocol {
    /// Whether the text has no control character (C0, DEL, C1) and no line or paragraph separator.
    package var isOneLineOfText: Bool {
        !unicodeScalars.contains {
            switch $0.properties.generalCategory {
            case .control, .lineSeparator, .paragraphSeparator: true
            default: false
            }
        }
    }

    /// Whether the text is 1 to `maximum` letters, digits and the ASCII characters in `also`, counted in scalars.
    package func isIdentifier(maximum: Int, also: String = "-_") -> Bool {
        var count = 0
        for scalar in unicodeScalars {
            count += 1
            guard count <= maximum, scalar.isLetterOrDigit || (scalar.isASCII && also.unicodeScalars.contains(scalar))
            else { return false }
        }
        return count > 0
    }
}

extension Unicode.Scalar {
    /// A letter of any script or a decimal digit: not a combining mark, a symbol or punctuation.
    package var isLetterOrDigit: Bool {
        switch properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .decimalNumber: true
        default: false
        }
    }
}
