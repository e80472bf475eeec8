precedencegroup ChainingPrecedence {
    associativity: left
    higherThan: ComparisonPrecedence
    lowerThan: AdditionPrecedence
}

/// Applies a layer to a tensor: `input --> Convolution(...) --> MaxPooling(...)`.
infix operator --> : ChainingPrecedence

/// Applies `layer` to `tensor` and returns the layer's output tensor.
@discardableResult
public func --> (tensor: SymbolicTensor, layer: any Layer) -> SymbolicTensor {
    SymbolicTensor(origin: .layer(layer, inputs: [tensor]))
}

/// Applies a merging layer (``Add``, ``Concatenate``) to several tensors: `[a, b] --> Add()`.
@discardableResult
public func --> (tensors: [SymbolicTensor], layer: any Layer) -> SymbolicTensor {
    SymbolicTensor(origin: .layer(layer, inputs: tensors))
}

extension Layer {
    /// Applies the layer to one tensor, as `tensor --> layer` does.
    public func callAsFunction(_ tensor: SymbolicTensor) -> SymbolicTensor {
        tensor --> self
    }

    /// Applies the layer to several tensors, as `[a, b] --> layer` does.
    public func callAsFunction(_ tensors: [SymbolicTensor]) -> SymbolicTensor {
        tensors --> self
    }
}
