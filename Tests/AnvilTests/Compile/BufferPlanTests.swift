import Testing
@testable import Anvil
import AnvilModels
@testable import AnvilTestSupport

/// The buffers of compiled models, checked against a liveness computed here from the compiled
/// steps alone (who writes each tensor, who reads it last), not by ``BufferPlan``: no two tensors
/// alive at once overlap in a workspace, except an output written over an input its kernel
/// declares (``Kernel/inPlaceInput``), and that happens wherever the input dies at the step.
@Suite("Buffer plan")
struct BufferPlanTests {
    /// `2 * input`, computed value by value: it may write over its input.
    final class InPlaceDoubling: Layer {
        let name: String?
        init(name: String) { self.name = name }
        func outputShape(for inputs: [Shape]) throws -> Shape { inputs[0] }
        func makeKernel(_ context: KernelContext) throws -> any Kernel { InPlaceDoublingKernel() }
    }

    /// `output = 2 * input[0]`, each value read just before the one written in its place.
    struct InPlaceDoublingKernel: Kernel {
        var inPlaceInput: Int? { 0 }
        func run(_ io: KernelIO) {
            for i in 0 ..< io.batch * io.outputShape.count { io.output[i] = 2 * io.inputs[0][i] }
        }
    }

    /// A tensor's life in the steps of a compiled model: from the step that writes it (`-1`, a
    /// model input) to the last step that reads it (the step count, a model output).
    struct Lifetime {
        var written: Int
        var lastRead: Int
        func overlaps(_ other: Lifetime) -> Bool { written <= other.lastRead && other.written <= lastRead }
    }

    /// The lifetime of every tensor the steps of `model` read or write, and of its inputs and outputs.
    static func lifetimes(_ model: CompiledModel) -> [Int: Lifetime] {
        var lives: [Int: Lifetime] = [:]
        for input in model.inputTensors { lives[input] = Lifetime(written: -1, lastRead: -1) }
        for (position, step) in model.steps.enumerated() {
            for input in step.inputs { lives[input]!.lastRead = position }
            lives[step.output] = Lifetime(written: position, lastRead: position)
        }
        for output in model.outputTensors { lives[output]!.lastRead = model.steps.count }
        return lives
    }

    /// Whether step `position` of `model` may write its output over the tensor at its input
    /// `slot`, by the rule of ``Kernel/inPlaceInput``: the input dies at the step, is not a model
    /// input, is read once by the step and is as large as the output.
    static func mayWriteInPlace(_ model: CompiledModel, step position: Int, lives: [Int: Lifetime]) -> Int? {
        let step = model.steps[position]
        guard let slot = step.kernel.inPlaceInput, slot < step.inputs.count else { return nil }
        let tensor = step.inputs[slot]
        guard !model.inputTensors.contains(tensor), step.inputs.filter({ $0 == tensor }).count == 1,
              lives[tensor]!.lastRead == position,
              model.shapes[tensor].count == model.shapes[step.output].count else { return nil }
        return tensor
    }

    /// Checks a workspace of `model` for `batch` images against the lifetimes; returns how many
    /// steps write in place.
    @discardableResult
    static func checkBuffers(_ model: CompiledModel, batch: Int, _ label: String) throws -> Int {
        let workspace = try CompiledModel.Workspace(model: model, batch: batch)
        let lives = lifetimes(model)
        var address: [Int: UnsafePointer<Float>] = [:]
        for (index, input) in model.inputTensors.enumerated() { address[input] = UnsafePointer(workspace.inputs[index]) }
        for (position, step) in model.steps.enumerated() {
            for (slot, input) in step.inputs.enumerated() {
                #expect(workspace.io[position].inputs[slot] == address[input], "\(label): step \(position) reads its input \(slot) where it was written")
            }
            address[step.output] = UnsafePointer(workspace.io[position].output)
        }
        for (index, output) in model.outputTensors.enumerated() {
            #expect(workspace.outputs[index] == address[output], "\(label): output \(index)")
        }
        // The pairs allowed to share: a step's output and the input it writes over.
        var inPlace: [Int: Int] = [:]
        for position in model.steps.indices {
            guard let input = mayWriteInPlace(model, step: position, lives: lives) else { continue }
            let output = model.steps[position].output
            #expect(address[output] == address[input], "\(label): step \(position) may write over its dying input but does not")
            inPlace[output] = input
        }
        func range(_ tensor: Int) -> Range<UnsafePointer<Float>> {
            address[tensor]! ..< address[tensor]! + batch * model.shapes[tensor].count
        }
        let tensors = lives.keys.sorted()
        for (i, a) in tensors.enumerated() {
            for b in tensors[(i + 1)...] where lives[a]!.overlaps(lives[b]!) && inPlace[a] != b && inPlace[b] != a {
                #expect(!range(a).overlaps(range(b)), "\(label): tensors \(a) and \(b) are alive at once in overlapping buffers")
            }
        }
        return inPlace.count
    }

    @Test("An in-place kernel writes over its input where the input dies, and only there")
    func inPlaceWhereInputDies() throws {
        let x = Input(width: 4, height: 3, channels: 5, name: "x")
        let a = x --> Activation(.tanh, name: "a")
        // `a` dies at "dies"; "kept" reads `b`, which "sum" reads again; "fromInput" reads the model input.
        let b = a --> InPlaceDoubling(name: "dies")
        let c = b --> InPlaceDoubling(name: "kept")
        let d = x --> InPlaceDoubling(name: "fromInput")
        let model = try Model(inputs: [x], outputs: [[c, b] --> Add(name: "sum"), d])
        try model.compile(from: ArrayParameterSource([:]))
        let compiled = try model.compilation().model(for: model.inputShapes)
        let names = compiled.stepNodes.map { model.graph.nodes[$0].name }
        let shared = Dictionary(uniqueKeysWithValues: zip(names, compiled.buffers.sharedInputs.map { $0 ?? -1 }))
        #expect(shared == ["a": -1, "dies": 0, "kept": -1, "fromInput": -1, "sum": -1])
        #expect(try Self.checkBuffers(compiled, batch: 3, "in-place doubling") == 1)
        let before = BufferPlan(graph: model.graph, plan: model.plan)
        #expect(before.sharedInputs.allSatisfy { $0 == nil }, "before kernels, nothing is written in place")

        var random = RefRandom(seed: 4_242)
        let input = random.tensor(n: 3, h: 3, w: 4, c: 5)
        func scaled(_ tensor: RefTensor, by factor: Double) -> RefTensor {
            var scaled = tensor
            scaled.v = tensor.v.map { factor * $0 }
            return scaled
        }
        let outputs = try model.predict([try input.tensor()])
        refExpectClose(outputs[0], scaled(Naive.activation(input, .tanh), by: 6), "2 · 2 tanh(x) + 2 tanh(x)")
        refExpectClose(outputs[1], scaled(input, by: 2), "2x")
    }

    @Test("A residual Add fused into the direct kernel writes over the shortcut when it dies there")
    func residualInPlace() throws {
        // The last convolution, 64 → 256 channels at 56 × 56, runs on the direct kernel.
        let x = Input(width: 56, height: 56, channels: 64, name: "x")
        let a = x --> PointwiseConvolution(channels: 256, name: "a")
        let c = a --> PointwiseConvolution(channels: 64, activation: .relu, name: "b") --> PointwiseConvolution(channels: 256, name: "c")
        let model = try Model(input: x, output: [c, a] --> Add(activation: .relu, name: "add"))
        try model.compile(from: RandomParameterSource(seed: 5))
        let compiled = try model.compilation().model(for: model.inputShapes)
        let last = try #require(compiled.steps.last)
        try #require(last.kernel is DirectConvolutionKernel && last.inputs.count == 2)
        #expect(compiled.buffers.slot[last.output] == compiled.buffers.slot[last.inputs[1]])
        #expect(compiled.buffers.sharedInputs == [nil, nil, 1])
        #expect(try Self.checkBuffers(compiled, batch: 2, "residual") == 1)
    }

    @Test("No two live tensors of a zoo network share memory", arguments: ["ResNet-50", "MobileNet v2", "ShuffleNet v2", "DenseNet-121", "EfficientNet-B0", "GoogLeNet"])
    func zooNetworks(name: String) throws {
        let model: Model
        switch name {
        case "ResNet-50": model = try ResNet50.model(classes: 10, width: 0.25, inputSize: 64)
        case "MobileNet v2": model = try MobileNetV2.model(classes: 10, width: 0.5, inputSize: 64)
        case "ShuffleNet v2": model = try ShuffleNetV2.model(classes: 10, width: 0.5, inputSize: 64)
        case "DenseNet-121": model = try DenseNet121.model(classes: 10, width: 0.25, inputSize: 64)
        case "EfficientNet-B0": model = try EfficientNetB0.model(classes: 10, width: 0.5, inputSize: 64)
        default: model = try GoogLeNet.model(classes: 10, width: 0.25, inputSize: 64)
        }
        try model.compile(from: RandomParameterSource(seed: 6))
        let compiled = try model.compilation().model(for: model.inputShapes)
        for batch in [1, 3] { try Self.checkBuffers(compiled, batch: batch, "\(name), batch \(batch)") }
        // Every slot is as large as what it holds, and the slots do not overlap.
        let buffers = compiled.buffers
        for (tensor, slot) in buffers.slot.enumerated() where slot >= 0 {
            #expect(buffers.slotSizes[slot] >= compiled.shapes[tensor].count, "\(name): tensor \(tensor)")
        }
        for slot in buffers.slotSizes.indices {
            #expect(buffers.slotOffsets[slot] % 16 == 0)
            let end = buffers.slotOffsets[slot] + buffers.slotSizes[slot]
            #expect(end <= (slot + 1 < buffers.slotSizes.count ? buffers.slotOffsets[slot + 1] : buffers.workspaceFloatsPerImage))
        }
    }
}
