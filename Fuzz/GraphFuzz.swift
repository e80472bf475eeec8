import Foundation

/// libFuzzer target: random networks. The bytes choose one or two inputs and up to twelve
/// layers of every type with every option — often sensible, sometimes absurd (zero, negative,
/// `Int.max`, NaN) — wired to any earlier tensor, sometimes re-applying an earlier layer.
/// Building either throws an `AnvilError` or gives a model that writes to a model file and
/// reads back the same, compiles with random parameters and runs a batch of 1 and of 2.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let seed = UInt64(input.byte())
    let validate = input.bool()
    var inputs: [Input] = []
    for k in 0 ..< 1 + input.choose(2) {
        inputs.append(Input(width: input.size(1, 7), height: input.size(1, 7), channels: input.size(1, 4),
                            name: input.choose(4) == 0 ? nil : "in\(k)"))
    }
    var tensors: [SymbolicTensor] = inputs
    var layers: [any Layer] = []
    for _ in 0 ..< input.choose(13) {
        // Mostly the newest tensor, so chains get deep; sometimes any earlier one.
        let source = input.choose(3) == 0 ? tensors[input.choose(tensors.count)] : tensors[tensors.count - 1]
        if !layers.isEmpty, input.choose(12) == 0 {
            let layer = layers[input.choose(layers.count)]
            if layer.inputCountRange.contains(1) { tensors.append(source --> layer) }
            continue
        }
        let layer = makeLayer(&input)
        layers.append(layer)
        if layer.inputCountRange.lowerBound >= 2 || input.choose(16) == 0 {
            var sources = [source]
            for _ in 0 ..< 1 + input.choose(3) { sources.append(tensors[input.choose(tensors.count)]) }
            tensors.append(sources --> layer)
        } else {
            tensors.append(source --> layer)
        }
    }
    var outputs = [tensors[tensors.count - 1]]
    if input.choose(4) == 0 { outputs.append(tensors[input.choose(tensors.count)]) }
    let model: Model
    do {
        model = try Model(inputs: inputs, outputs: outputs)
    } catch let error as AnvilError {
        fuzzLog("refused: \(error)")
        return 0
    } catch {
        fuzzFailure("Model threw a non-Anvil error: \(error)")
    }
    _ = model.summary()
    fuzzLog("built: \(model.layers.map { "\($0.name) \($0.outputShape)" }.joined(separator: ", "))")
    ModelExercise.roundTrip(model)
    ModelExercise.run(model, seed: seed, validate: validate)
    return 0
}

private func pair(_ input: inout FuzzInput, _ low: Int, _ high: Int) -> (Int, Int) {
    (input.size(low, high), input.size(low, high))
}

private func padding(_ input: inout FuzzInput) -> Padding {
    switch input.choose(3) {
    case 0: return .same
    case 1: return .valid
    default: return .explicit(top: input.size(0, 2), left: input.size(0, 2), bottom: input.size(0, 2), right: input.size(0, 2))
    }
}

private func activation(_ input: inout FuzzInput) -> ActivationFunction {
    switch input.choose(13) {
    case 0: return .relu
    case 1: return .relu6
    case 2: return .clip(min: input.float(), max: input.float())
    case 3: return .leakyRelu(alpha: input.float())
    case 4: return .sigmoid
    case 5: return .tanh
    case 6: return .elu(alpha: input.float())
    case 7: return .selu
    case 8: return .hardSigmoid(alpha: input.float(), beta: input.float())
    case 9: return .hardSwish
    case 10: return .linear(a: input.float(), b: input.float())
    default: return .none
    }
}

private func name(_ input: inout FuzzInput) -> String? {
    switch input.choose(8) {
    case 0: return "n\(input.choose(3))"  // collisions on purpose
    case 1: return input.choose(4) == 0 ? "" : "in0"
    default: return nil
    }
}

private func makeLayer(_ input: inout FuzzInput) -> any Layer {
    switch input.choose(20) {
    case 0, 1:
        return Convolution(kernel: pair(&input, 1, 4), channels: input.size(1, 6), stride: pair(&input, 1, 3),
                           padding: padding(&input), dilation: pair(&input, 1, 2), groups: input.choose(3) == 0 ? input.size(1, 4) : 1,
                           useBias: input.bool(), activation: activation(&input), name: name(&input))
    case 2:
        return DepthwiseConvolution(kernel: pair(&input, 1, 4), multiplier: input.size(1, 3), stride: pair(&input, 1, 3),
                                    padding: padding(&input), dilation: pair(&input, 1, 2), useBias: input.bool(),
                                    activation: activation(&input), name: name(&input))
    case 3:
        return PointwiseConvolution(channels: input.size(1, 6), useBias: input.bool(), activation: activation(&input), name: name(&input))
    case 4:
        return MaxPooling(kernel: pair(&input, 1, 3), stride: input.bool() ? nil : pair(&input, 1, 3), padding: padding(&input),
                          dilation: pair(&input, 1, 2), ceilMode: input.bool(), name: name(&input))
    case 5:
        return AveragePooling(kernel: pair(&input, 1, 3), stride: input.bool() ? nil : pair(&input, 1, 3), padding: padding(&input),
                              dilation: pair(&input, 1, 2), ceilMode: input.bool(), countIncludesPadding: input.bool(),
                              name: name(&input))
    case 6: return GlobalAveragePooling(name: name(&input))
    case 7: return GlobalMaxPooling(name: name(&input))
    case 8, 9: return Dense(neurons: input.size(1, 8), useBias: input.bool(), activation: activation(&input), name: name(&input))
    case 10: return Flatten(order: input.bool() ? .channelsLast : .channelsFirst, name: name(&input))
    case 11: return Activation(activation(&input), name: name(&input))
    case 12: return PReLU(name: name(&input))
    case 13: return Softmax(name: name(&input))
    case 14: return LogSoftmax(name: name(&input))
    case 15: return BatchNormalization(epsilon: input.bool() ? 0.001 : input.float(), name: name(&input))
    case 16: return Add(activation: activation(&input), name: name(&input))
    case 17: return Concatenate(name: name(&input))
    default:
        let coordinates = Resize.Coordinates.allCases[input.choose(Resize.Coordinates.allCases.count)]
        if input.bool() {
            return Resize(height: input.size(1, 9), width: input.size(1, 9), coordinates: coordinates, name: name(&input))
        }
        return Resize(scaleHeight: input.float(), scaleWidth: input.float(), coordinates: coordinates, name: name(&input))
    }
}
