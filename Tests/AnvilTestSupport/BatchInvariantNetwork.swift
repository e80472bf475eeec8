import Anvil

/// A small fully convolutional network (direct convolutions, pooling, an element-wise gate)
/// whose kernels sum each output in an order that does not depend on the batch: a request's
/// answer is bit-identical whatever batch a runner or server put it in, so coalescing can be
/// checked against `predict` on each request alone. Compiled with random weights of `seed`.
func refBatchInvariantNetwork(open: Bool = false, seed: UInt64) throws -> (model: Model, input: Input) {
    let input = open ? Input(channels: 3) : Input(width: 12, height: 10, channels: 3)
    let x = input
        --> Convolution(kernel: (3, 3), channels: 8, activation: .relu, name: "c1")
        --> MaxPooling(kernel: (2, 2), stride: (2, 2))
        --> Convolution(kernel: (3, 3), channels: 6, activation: .silu, name: "c2")
    let model = try Model(input: input, output: [x, x --> Activation(.sigmoid)] --> Elementwise(.multiply))
    try model.compile(from: RandomParameterSource(seed: seed))
    return (model, input)
}
