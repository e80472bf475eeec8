// Size arithmetic shared by layers, kernels and the planner: checked where an overflow is
// an error the user must see, saturating where it only feeds a statistic.

/// Multiplies sizes, throwing instead of trapping when the product overflows.
func checkedProduct(_ factors: [Int], what: String) throws -> Int {
    var product = 1
    for factor in factors {
        let (result, overflow) = product.multipliedReportingOverflow(by: factor)
        guard !overflow, factor >= 0 else {
            throw AnvilError(.invalidShape, "\(what) is too large (\(factors.map(String.init).joined(separator: " × ")))")
        }
        product = result
    }
    return product
}

/// The product of `factors`, saturating at `Int.max` (for statistics such as MAC counts,
/// which must never trap on a huge but valid model).
func saturatingProduct(_ factors: Int...) -> Int {
    var product = 1
    for factor in factors {
        let (result, overflow) = product.multipliedReportingOverflow(by: factor)
        if overflow { return Int.max }
        product = result
    }
    return product
}

/// The sum of `values`, saturating at `Int.max`.
func saturatingSum<S: Sequence>(_ values: S) -> Int where S.Element == Int {
    var total = 0
    for value in values {
        let (result, overflow) = total.addingReportingOverflow(value)
        if overflow { return Int.max }
        total = result
    }
    return total
}
