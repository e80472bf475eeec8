import Foundation

extension Collection where Element == Float {
    /// The `k` highest-scoring classes, highest first, with their labels.
    ///
    /// ```swift
    /// let output = try model.predict(input)                    // 1 × 1000 probabilities
    /// for p in try output.values.top(k: 5, labels: labels) { print(p) }
    /// // logits instead: try logits.top(k: 5, labels: labels, scores: .logits)
    /// ```
    ///
    /// Ties are broken by index, lower first; NaN scores rank below every number. With
    /// ``ScoreKind/logits`` the softmax `exp(x − max) / Σ exp(x − max)` (in double precision)
    /// is applied first; probabilities are passed through unchanged.
    ///
    /// - Parameters:
    ///   - k: How many entries to return; fewer if there are fewer classes. 0 returns none.
    ///   - labels: The class names; `nil` names classes `"class <index>"`.
    ///   - scores: Whether the values are probabilities (default) or logits.
    /// - Throws: ``VisionError`` `.invalidArgument` if `k` is negative, `.countMismatch` if
    ///   `labels` has a different count from the scores.
    public func top(k: Int, labels: Labels? = nil, scores: ScoreKind = .probabilities) throws -> [Prediction] {
        guard k >= 0 else { throw VisionError(.invalidArgument, source: "top(k:)", message: "k is \(k); it must not be negative") }
        let values = Array(self)
        if let labels, labels.count != values.count {
            throw VisionError(.countMismatch, source: "top(k:)",
                              message: "\(values.count) scores but \(labels.count) labels; they must match one to one")
        }
        let probabilities = scores == .logits ? Self.softmax(values) : values
        // Descending by score, NaN last, ties by ascending index.
        func precedes(_ a: Int, _ b: Int) -> Bool {
            let x = probabilities[a], y = probabilities[b]
            if x.isNaN || y.isNaN {
                if x.isNaN != y.isNaN { return y.isNaN }
                return a < b
            }
            return x != y ? x > y : a < b
        }
        let count = Swift.min(k, values.count)
        var chosen: [Int]
        if count <= 16 {
            // Selection keeping a sorted list of at most `count` indices: O(n·k), no full sort.
            chosen = []
            chosen.reserveCapacity(count + 1)
            for i in probabilities.indices {
                guard count > 0 else { break }
                if chosen.count == count, !precedes(i, chosen[count - 1]) { continue }
                var position = chosen.count
                while position > 0, precedes(i, chosen[position - 1]) { position -= 1 }
                chosen.insert(i, at: position)
                if chosen.count > count { chosen.removeLast() }
            }
        } else {
            chosen = Array(probabilities.indices.sorted(by: precedes).prefix(count))
        }
        return chosen.map { Prediction(index: $0, label: labels?[$0] ?? "class \($0)", probability: probabilities[$0]) }
    }

    /// The softmax of `logits`, computed in double precision after subtracting the maximum.
    static func softmax(_ logits: [Float]) -> [Float] {
        guard let maximum = logits.filter({ !$0.isNaN }).max() else { return logits }
        if maximum == .infinity {
            // The infinite logits share the probability; everything else gets 0.
            let infinite = logits.filter { $0 == .infinity }.count
            return logits.map { $0 == .infinity ? 1 / Float(infinite) : ($0.isNaN ? .nan : 0) }
        }
        let exponentials = logits.map { $0.isNaN ? Double.nan : Foundation.exp(Double($0) - Double(maximum)) }
        let total = exponentials.reduce(0) { $1.isNaN ? $0 : $0 + $1 }
        return exponentials.map { Float($0 / total) }
    }
}
