/// A tensor that depends only on the input size and constants, on a model whose input size is
/// open: the shape arithmetic exporters write (`Shape → Gather → Concat → Reshape`, an anchor
/// grid from `Range`). It is written as the engine's shape-computation layers (`ShapeOf`,
/// `Gather`, `Range`, `Concatenate`, ...), which Anvil evaluates once per input size when it
/// builds that size's plan, never at `predict`.
///
/// A plan tensor has no batch axis: ONNX's axes are the engine tensor's axes after its batch
/// axis, and the engine broadcasts the value over every item. The batch size itself is not
/// known when a plan is built (one plan serves every batch size), so a vector that holds it
/// (`Shape(x)` of a computed tensor) keeps that element out of the engine tensor: ``slots``
/// says, for each ONNX element, whether it is the batch size or which engine element it is.
struct PlanTensor {
    /// What one element of a vector is.
    enum Slot: Equatable {
        /// The batch size times `times` (not in the engine tensor): a Shape of a tensor whose
        /// batch is folded into an axis, or the batch size multiplied by a known number.
        case batch(times: Int)
        /// The engine tensor's element at this position.
        case element(Int)

        /// Whether the element is (a multiple of) the batch size.
        var isBatch: Bool {
            if case .batch = self { return true }
            return false
        }
    }

    /// The engine layer holding the value; `nil` when no element is in it (only the batch size).
    var name: String?
    /// ONNX's shape; `nil` where it depends on the open input size.
    var shape: [Int?]
    /// Whether the values are integers (int64) rather than float32.
    var isInteger: Bool
    /// For a vector (rank 0 or 1) of integers: each element's source. `nil` for other tensors.
    var slots: [Slot]?
    /// For a vector: each element's value when known at conversion (a constant part).
    var known: [Int64?]?

    /// A tensor without the batch size among its elements.
    init(name: String, shape: [Int?], isInteger: Bool) {
        self.name = name
        self.shape = shape
        self.isInteger = isInteger
        if shape.count <= 1, let count = shape.count == 0 ? 1 : shape[0], isInteger {
            slots = (0 ..< count).map { .element($0) }
            known = [Int64?](repeating: nil, count: count)
        }
    }

    /// A vector of `slots` (rank 0 when `scalar`), the engine tensor `name` holding its elements.
    init(name: String?, slots: [Slot], known: [Int64?], scalar: Bool) {
        self.name = name
        shape = scalar ? [] : [slots.count]
        isInteger = true
        self.slots = slots
        self.known = known
    }

    /// ONNX's rank.
    var rank: Int { shape.count }
    /// Whether an element is the batch size.
    var holdsBatch: Bool { slots?.contains { $0.isBatch } ?? false }
}
