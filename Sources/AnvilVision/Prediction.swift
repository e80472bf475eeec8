/// One entry of a top-k list: a class, its label and its probability (or score).
public struct Prediction: Sendable, Hashable, CustomStringConvertible {
    /// The output index (the class number).
    public let index: Int
    /// The class's label.
    public let label: String
    /// The probability: the score itself for ``ScoreKind/probabilities``, the softmax of the
    /// logits for ``ScoreKind/logits``.
    public let probability: Float

    /// Creates an entry.
    public init(index: Int, label: String, probability: Float) {
        self.index = index
        self.label = label
        self.probability = probability
    }

    /// `"<label> (<index>): <probability × 100>%"`, e.g. `"tabby (281): 63.21%"`.
    public var description: String {
        let percent = (Double(probability) * 10000).rounded() / 100
        return "\(label) (\(index)): \(percent)%"
    }
}

/// What a classifier's output vector holds, for `top(k:labels:scores:)` on a score vector.
public enum ScoreKind: String, Sendable, Hashable, CaseIterable {
    /// Probabilities (a softmax output): used as they are.
    case probabilities
    /// Logits (unnormalised scores): softmax is applied before ranking is reported, so
    /// ``Prediction/probability`` is a probability. The order is the same either way.
    case logits
}
