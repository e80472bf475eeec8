import CAnvilKernels

/// Pads an image on height, width and (optionally) channels with a constant, the reflection or
/// the edge value (ONNX `Pad`, PyTorch `ZeroPad2d` / `ConstantPad2d` / `ReflectionPad2d` /
/// `ReplicationPad2d`, Keras `ZeroPadding2D`).
///
/// ```swift
/// x --> Pad(top: 1, left: 1, bottom: 2, right: 2, mode: .reflect)
/// ```
///
/// A zero `Pad` of height and width whose only reader is a convolution (or an average pooling
/// that counts padding) never runs: the execution plan folds it into that layer's window
/// padding (``PadAbsorbingLayer``). The converters also fold it when they write a model.
public final class Pad: Layer {
    /// How the border is filled (ONNX `mode`).
    public enum Mode: String, Sendable, CaseIterable {
        /// ``Pad/value`` everywhere in the border.
        case constant
        /// The mirror image without repeating the edge (`[a b c] → b | a b c | b`); each pad must
        /// be smaller than its axis.
        case reflect
        /// The edge value repeated (`[a b c] → a | a b c | c`).
        case edge
    }

    /// Rows added at the top and bottom, columns at the left and right.
    public let top: Int, left: Int, bottom: Int, right: Int
    /// Channels added before and after.
    public let front: Int, back: Int
    /// How the border is filled.
    public let mode: Mode
    /// The constant, in `.constant` mode.
    public let value: Float
    /// The user's name for the layer.
    public let name: String?

    /// Creates a padding layer; every pad must be at least 0.
    public init(top: Int = 0, left: Int = 0, bottom: Int = 0, right: Int = 0, front: Int = 0, back: Int = 0,
                mode: Mode = .constant, value: Float = 0, name: String? = nil) {
        self.top = top; self.left = left; self.bottom = bottom; self.right = right
        self.front = front; self.back = back
        self.mode = mode
        self.value = value
        self.name = name
    }

    /// `pad`.
    public var namePrefix: String { "pad" }

    /// The pad as window padding, when it is zeros on height and width only (what a following
    /// windowed layer can absorb).
    var absorbablePad: AbsorbedPad? {
        guard mode == .constant, value == 0, front == 0, back == 0 else { return nil }
        return AbsorbedPad(top: top, left: left, bottom: bottom, right: right)
    }

    /// The input grown by the pads.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        let input = inputs[0]
        let pads = [top, left, bottom, right, front, back]
        guard pads.allSatisfy({ $0 >= 0 && $0 < 1 << 24 }) else {
            throw AnvilError(.invalidOption, "pads \(pads) (top, left, bottom, right, front, back) must be between 0 and 2^24")
        }
        guard value.isFinite || mode != .constant else {
            throw AnvilError(.invalidOption, "pad value \(value) must be finite")
        }
        if mode == .reflect {
            guard max(top, bottom) < input.height, max(left, right) < input.width, max(front, back) < input.channels else {
                throw AnvilError(.invalidShape, "reflect pads \(pads) must be smaller than the padded axis of \(input)")
            }
        }
        let height = input.height + top + bottom, width = input.width + left + right
        let channels = input.channels + front + back
        _ = try checkedProduct([height, width, channels], what: "padded output")
        return try input.windowOutput(height: height, width: width, channels: channels).with(elementType: input.elementType)
    }
    /// Elements of any type.
    public var acceptsTypedInputs: Bool { true }

    /// The C kernel `anvil_pad_lines`.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let input = context.inputShapes[0], output = context.outputShape
        let cMode: anvil_pad_mode
        switch mode {
        case .constant: cMode = ANVIL_PAD_CONSTANT
        case .reflect: cMode = ANVIL_PAD_REFLECT
        case .edge: cMode = ANVIL_PAD_EDGE
        }
        let shape = anvil_pad_shape(input_height: Int32(input.height), input_width: Int32(input.width),
                                    channels: Int32(input.channels), pad_top: Int32(top), pad_left: Int32(left),
                                    pad_front: Int32(front), output_height: Int32(output.height),
                                    output_width: Int32(output.width), output_channels: Int32(output.channels),
                                    mode: cMode, value: value)
        return PadKernel(shape: shape)
    }
}

extension Pad: ModelFileCodable {
    /// `Pad`.
    static var fileTypeName: String { "Pad" }

    /// Reads `pads` (`[top, left, bottom, right]`, required), `channelPads` (`[front, back]`),
    /// `mode` (`"constant"`) and `value` (0).
    convenience init(fields: JSONFields, name: String) throws {
        let pads = try fields.ints("pads", count: 4)
        let channels = fields.has("channelPads") ? try fields.pair("channelPads") : (0, 0)
        let modeName = try fields.string("mode", default: "constant")
        guard let mode = Mode(rawValue: modeName) else {
            throw AnvilError(.invalidFile, "\(fields.context): unknown mode '\(modeName)' (constant, reflect or edge)")
        }
        self.init(top: pads[0], left: pads[1], bottom: pads[2], right: pads[3], front: channels.0, back: channels.1,
                  mode: mode, value: try fields.float("value", default: 0), name: name)
    }

    /// Every option, defaults included.
    func encodeFields() throws -> [(String, JSONValue)] {
        [("pads", .array([.int(top), .int(left), .int(bottom), .int(right)])), ("channelPads", .pair((front, back))),
         ("mode", .string(mode.rawValue)), ("value", .number(value))]
    }
}
