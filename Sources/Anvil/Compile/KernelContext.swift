/// What a layer gets when `compile` asks it for its kernel: its shapes, its loaded
/// parameters, and the layout they were supplied in.
public struct KernelContext {
    /// The layer's resolved name (for error messages).
    public let layerName: String
    /// The shapes of its inputs (one image each).
    public let inputShapes: [Shape]
    /// The shape of its output.
    public let outputShape: Shape
    /// The layout the weight tensors are in.
    public let layout: WeightLayout
    let parameters: [ParameterKind: ParameterData]
    /// The values of the inputs known when the plan was built (indices, target shapes), `nil`
    /// for the inputs computed at `predict`.
    public internal(set) var inputValues: [TensorValue?] = []
    /// A per-channel affine map `y = scale * y + shift` to apply after the layer's own
    /// computation (a BatchNormalization folded into a convolution or dense layer). A layer whose
    /// kernel applies it says so in what it builds (``FusedKernel/appliesFoldedAffine``);
    /// otherwise the compiler applies it after the kernel.
    var foldedAffine: (scale: [Float], shift: [Float])? = nil
    /// An activation that follows the layer and is fused into it (after the residual, if any).
    var fusedActivation: ActivationFunction? = nil
    /// Whether an `Add` of a second tensor is fused into the layer: its kernel gets that tensor
    /// as a second input and adds it before the activation.
    var fusedResidual = false
    /// Set when a `Transpose` → `Flatten` before a `Dense` is folded into it: value `i` of the
    /// layer's (flattened) input is at position `inputOrder[i]` of the buffer the kernel reads.
    var inputOrder: [Int]? = nil
    /// Set when a zero ``Pad`` before the layer is folded into it (a ``PadAbsorbingLayer``):
    /// ``inputShapes`` still name the padded tensor, but the kernel reads the one before the
    /// pad, so its window must absorb these rows and columns (``WindowGeometry/absorbing(_:)``).
    var absorbedPad: AbsorbedPad? = nil
    /// Set when a ``ChannelShuffle`` after the layer (a ``Concatenate`` along the channels) is
    /// fused into it: its number of groups. The kernel writes the shuffled order
    /// (``ChannelShuffle/destination(of:channels:groups:)``) and reports it
    /// (``EpilogueReportingKernel/appliedShuffleGroups``).
    var fusedShuffleGroups: Int? = nil
    /// Set when channel ``Slice``s producing inputs of the layer (a ``Concatenate`` along the
    /// channels) are folded into it, by input position: the kernel reads that input from the
    /// sliced tensor, whose pixels hold `stride` channels, starting at channel `first`.
    var foldedSliceWindows: [Int: (first: Int, stride: Int)] = [:]

    /// Where kernels built for the different input sizes of an open model keep what they can
    /// share (reordered, packed or transformed weights); `nil` for a fixed-size model.
    var sharedData: SharedKernelData? = nil
    /// Where transformed weights are kept between compiles (``WeightCache``), if anywhere.
    var weightCache: WeightCache? = nil
    /// This step's key in ``sharedData`` (its position in the execution plan, the same at every size).
    var sharedKey = ""

    /// The value `make` builds, made once per layer application and `label` and shared by the
    /// kernels built for every input size of an open model (weights reordered or transformed
    /// once, not once per size); for a fixed-size model simply `make()`. `label` must name
    /// everything the value depends on besides the layer's parameters (an algorithm, say).
    func sharedAcrossSizes<T: Sendable>(_ label: String, _ make: () throws -> T) rethrows -> T {
        guard let sharedData else { return try make() }
        return try sharedData.value(for: sharedKey + "/" + label, make)
    }

    /// The loaded tensor of `kind`; throws if the layer did not declare it.
    public func parameter(_ kind: ParameterKind) throws -> ParameterData {
        guard let data = parameters[kind] else {
            throw AnvilError(.missingParameter, "layer '\(layerName)' has no \(kind.rawValue) parameter")
        }
        return data
    }
}

/// Values shared by the kernels of every input size of an open model (see
/// ``KernelContext/sharedAcrossSizes(_:_:)``): one per layer application and label, kept for
/// the compiled model's lifetime (a few per layer, whatever the number of sizes).
final class SharedKernelData: Sendable {
    private let values = TracedMutex<[String: any Sendable]>([:])

    /// The value under `key`, made by `make` the first time (outside the lock; if two threads
    /// race, the first stored value wins).
    func value<T: Sendable>(for key: String, _ make: () throws -> T) rethrows -> T {
        if let known = values.withLock({ $0[key] }) as? T { return known }
        let made = try make()
        return values.withLock { values in
            if let known = values[key] as? T { return known }
            values[key] = made
            return made
        }
    }

    /// How many values are kept (tests check that sizes share them).
    var count: Int { values.withLock { $0.count } }
}
