/// Converts Anvil's built-in layers to and from the objects of a model file
/// (`docs/model-format.md`).
enum LayerCoding {
    /// Builds the layer described by `fields` (its `type` and options), named `name`.
    static func decode(_ fields: JSONFields, name: String) throws -> any Layer {
        let type = try fields.string("type")
        switch type {
        case "Convolution":
            return Convolution(kernel: try fields.pair("kernel"), channels: try fields.int("channels"),
                               stride: try fields.pair("stride", default: (1, 1)),
                               padding: try fields.padding("padding", default: .same),
                               dilation: try fields.pair("dilation", default: (1, 1)), groups: try fields.int("groups", default: 1),
                               useBias: try fields.bool("bias", default: true),
                               activation: try fields.activation("activation", default: .none), name: name)
        case "DepthwiseConvolution":
            return DepthwiseConvolution(kernel: try fields.pair("kernel"), multiplier: try fields.int("multiplier", default: 1),
                                        stride: try fields.pair("stride", default: (1, 1)),
                                        padding: try fields.padding("padding", default: .same),
                                        dilation: try fields.pair("dilation", default: (1, 1)),
                                        useBias: try fields.bool("bias", default: true),
                                        activation: try fields.activation("activation", default: .none), name: name)
        case "PointwiseConvolution":
            return PointwiseConvolution(channels: try fields.int("channels"), useBias: try fields.bool("bias", default: true),
                                        activation: try fields.activation("activation", default: .none), name: name)
        case "MaxPooling":
            let kernel = try fields.pair("kernel")
            return MaxPooling(kernel: kernel, stride: try fields.pair("stride", default: kernel),
                              padding: try fields.padding("padding", default: .valid),
                              dilation: try fields.pair("dilation", default: (1, 1)),
                              ceilMode: try fields.bool("ceilMode", default: false), name: name)
        case "AveragePooling":
            let kernel = try fields.pair("kernel")
            return AveragePooling(kernel: kernel, stride: try fields.pair("stride", default: kernel),
                                  padding: try fields.padding("padding", default: .valid),
                                  dilation: try fields.pair("dilation", default: (1, 1)),
                                  ceilMode: try fields.bool("ceilMode", default: false),
                                  countIncludesPadding: try fields.bool("countIncludesPadding", default: false), name: name)
        case "GlobalAveragePooling": return GlobalAveragePooling(name: name)
        case "GlobalMaxPooling": return GlobalMaxPooling(name: name)
        case "Dense":
            return Dense(neurons: try fields.int("neurons"), useBias: try fields.bool("bias", default: true),
                         activation: try fields.activation("activation", default: .none), name: name)
        case "Flatten":
            let order = try fields.string("order", default: "hwc")
            guard let parsed = Flatten.Order(rawValue: order) else {
                throw AnvilError(.invalidFile, "\(fields.context): field 'order' must be \"hwc\" or \"chw\"")
            }
            return Flatten(order: parsed, name: name)
        case "Activation":
            guard fields.has("function") else { throw AnvilError(.invalidFile, "\(fields.context): missing field 'function'") }
            return Activation(try fields.activation("function", default: .none), name: name)
        case "PReLU": return PReLU(name: name)
        case "Softmax": return Softmax(name: name)
        case "LogSoftmax": return LogSoftmax(name: name)
        case "BatchNormalization":
            return BatchNormalization(epsilon: try fields.float("epsilon", default: 0.001), name: name)
        case "Add": return Add(activation: try fields.activation("activation", default: .none), name: name)
        case "Concatenate": return Concatenate(name: name)
        case "Resize":
            let coordinates = try fields.string("coordinates", default: "halfPixel")
            guard let mode = Resize.Coordinates(rawValue: coordinates) else {
                throw AnvilError(.invalidFile, "\(fields.context): unknown coordinates '\(coordinates)'")
            }
            if fields.has("size") {
                let size = try fields.pair("size")
                return Resize(height: size.0, width: size.1, coordinates: mode, name: name)
            }
            guard fields.has("scale") else { throw AnvilError(.invalidFile, "\(fields.context): Resize needs 'size' or 'scale'") }
            let scale = try fields.floatPair("scale")
            return Resize(scaleHeight: scale.0, scaleWidth: scale.1, coordinates: mode, name: name)
        default:
            throw AnvilError(.invalidFile, "\(fields.context): unknown layer type '\(type)'")
        }
    }

    /// The options of a built-in layer as model-file members (without name and inputs);
    /// throws for custom layers, which model files cannot describe.
    static func encode(_ layer: any Layer, name: String) throws -> [(String, JSONValue)] {
        func pair(_ p: (Int, Int)) -> JSONValue { .array([.int(p.0), .int(p.1)]) }
        func padding(_ p: Padding) -> JSONValue {
            switch p {
            case .same: return .string("same")
            case .valid: return .string("valid")
            case .explicit(let t, let l, let b, let r): return .array([.int(t), .int(l), .int(b), .int(r)])
            }
        }
        var members: [(String, JSONValue)] = [("type", .string(layer.typeName))]
        switch layer {
        case let l as Convolution:
            members += [("kernel", pair(l.kernel)), ("channels", .int(l.channels)), ("stride", pair(l.stride)),
                        ("padding", padding(l.padding)), ("dilation", pair(l.dilation)), ("groups", .int(l.groups)),
                        ("bias", .bool(l.useBias)), ("activation", activation(l.activation))]
        case let l as DepthwiseConvolution:
            members += [("kernel", pair(l.kernel)), ("multiplier", .int(l.multiplier)), ("stride", pair(l.stride)),
                        ("padding", padding(l.padding)), ("dilation", pair(l.dilation)),
                        ("bias", .bool(l.useBias)), ("activation", activation(l.activation))]
        case let l as PointwiseConvolution:
            members += [("channels", .int(l.channels)), ("bias", .bool(l.useBias)), ("activation", activation(l.activation))]
        case let l as MaxPooling:
            members += [("kernel", pair(l.kernel)), ("stride", pair(l.stride)), ("padding", padding(l.padding)),
                        ("dilation", pair(l.dilation)), ("ceilMode", .bool(l.ceilMode))]
        case let l as AveragePooling:
            members += [("kernel", pair(l.kernel)), ("stride", pair(l.stride)), ("padding", padding(l.padding)),
                        ("dilation", pair(l.dilation)), ("ceilMode", .bool(l.ceilMode)),
                        ("countIncludesPadding", .bool(l.countIncludesPadding))]
        case is GlobalAveragePooling, is GlobalMaxPooling, is PReLU, is Softmax, is LogSoftmax, is Concatenate:
            break
        case let l as Dense:
            members += [("neurons", .int(l.neurons)), ("bias", .bool(l.useBias)), ("activation", activation(l.activation))]
        case let l as Flatten:
            members += [("order", .string(l.order.rawValue))]
        case let l as Activation:
            members += [("function", activation(l.function))]
        case let l as BatchNormalization:
            members += [("epsilon", .number(l.epsilon))]
        case let l as Add:
            members += [("activation", activation(l.activation))]
        case let l as Resize:
            if let size = l.size { members += [("size", pair(size))] }
            if let scale = l.scale { members += [("scale", .array([.number(scale.height), .number(scale.width)]))] }
            members += [("coordinates", .string(l.coordinates.rawValue))]
        default:
            throw AnvilError(.invalidOption, "layer '\(name)' has custom type \(layer.typeName), which model files cannot describe")
        }
        // JSON has no NaN or infinity (serialized() would write null, which does not read back).
        if let (key, _) = members.first(where: { $0.1.holdsNonFiniteNumber }) {
            throw AnvilError(.invalidOption, "layer '\(name)': field '\(key)' holds NaN or infinity, which a model file (JSON) cannot store")
        }
        return members
    }

    /// An activation as a name or an object with its constants.
    static func activation(_ function: ActivationFunction) -> JSONValue {
        func object(_ type: String, _ constants: [(String, Float)]) -> JSONValue {
            .object([("type", .string(type))] + constants.map { ($0.0, .number($0.1)) })
        }
        switch function {
        case .clip(let lo, let hi): return object("clip", [("min", lo), ("max", hi)])
        case .leakyRelu(let alpha): return object("leakyRelu", [("alpha", alpha)])
        case .elu(let alpha): return object("elu", [("alpha", alpha)])
        case .hardSigmoid(let alpha, let beta): return object("hardSigmoid", [("alpha", alpha), ("beta", beta)])
        case .linear(let a, let b): return object("linear", [("a", a), ("b", b)])
        default: return .string(function.description)
        }
    }
}

extension JSONValue {
    /// Whether a NaN or infinite number occurs anywhere in the value.
    fileprivate var holdsNonFiniteNumber: Bool {
        switch self {
        case .double(let value): return !value.isFinite
        case .array(let values): return values.contains { $0.holdsNonFiniteNumber }
        case .object(let members): return members.contains { $0.1.holdsNonFiniteNumber }
        default: return false
        }
    }
}
