/// A tensor in a network definition: it has no values, only a place in the graph.
///
/// You get one from ``Input`` and from applying a layer with `-->`; ``Model`` turns the
/// symbolic tensors reachable from its outputs into a graph and infers every shape.
///
/// Immutable, so it can be shared between threads (a network defined once, built anywhere).
public class SymbolicTensor: @unchecked Sendable {
    // @unchecked only because the class is not final (Input subclasses it): every stored
    // property, here and in Input, is a `let` of a Sendable type, and the class is not `open`,
    // so no subclass outside Anvil can add mutable state.

    enum Origin: Sendable {
        case input(shape: Shape, name: String?)
        case layer(any Layer, inputs: [SymbolicTensor])
    }

    let origin: Origin

    init(origin: Origin) {
        self.origin = origin
    }

    /// The tensors this one is computed from.
    var sources: [SymbolicTensor] {
        if case .layer(_, let inputs) = origin { return inputs }
        return []
    }
}
