/// A layer that only moves values (``Transpose``, ``Slice``, ``Concatenate``, ``Reshape``, ...):
/// it works on tensors of any element type, and on known values (shape computations) it is
/// evaluated when the plan is built by running its copies on the elements.
protocol LayoutLayer: Layer {
    /// The strided copies that make the output from the inputs of `inputs` (each output element
    /// written once); `nil` when the values keep their row-major order (a reshape).
    func copies(for inputs: [Shape], output: Shape) throws -> [StridedCopy]?
}

extension LayoutLayer {
    /// The inputs' known values moved by ``copies(for:output:)``, when every input is known
    /// (what each layout layer's ``Layer/value(for:values:)`` returns).
    func movedValue(for inputs: [Shape], values: [TensorValue?]) throws -> TensorValue? {
        let known = values.compactMap { $0 }
        guard known.count == values.count, let first = known.first else { return nil }
        let output = try outputShape(for: inputs, values: values)
        guard let copies = try copies(for: inputs, output: output) else {
            return try first.reshaped(output.dimensions)
        }
        return try TensorValue.moving(known, by: copies, into: output)
    }
}

extension StridedCopy {
    /// Runs the copy on one item's elements (a known value), any element type.
    func apply<Element>(_ input: [Element], into output: inout [Element]) {
        guard !dims.contains(0) else { return }
        var index = [Int](repeating: 0, count: dims.count)
        var from = inputOffset, to = outputOffset
        let total = dims.reduce(1, *)
        for _ in 0 ..< total {
            output[to] = input[from]
            var k = dims.count - 1
            while k >= 0 {
                index[k] += 1
                from += inputStrides[k]
                to += outputStrides[k]
                if index[k] < dims[k] { break }
                from -= inputStrides[k] * dims[k]
                to -= outputStrides[k] * dims[k]
                index[k] = 0
                k -= 1
            }
        }
    }
}
