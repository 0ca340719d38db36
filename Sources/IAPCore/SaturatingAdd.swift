extension FixedWidthInteger {
    /// Adds, stopping at the type's bounds: amounts come from outside (quantities, prices a signed document claims),
    /// and a sum of them must not trap.
    package mutating func saturatingAdd(_ other: Self) {
        let (sum, overflow) = addingReportingOverflow(other)
        self = overflow ? (other > 0 ? .max : .min) : sum
    }
}
