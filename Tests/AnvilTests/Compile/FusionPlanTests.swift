import Testing
@testable import Anvil

/// The execution plans of representative blocks, written out by hand from which nodes fuse: the
/// steps (by node name, in graph order), what each reads and writes, which tensor holds each
/// model output, and the slot sizes (floats per image) of the best-fit buffer reuse (``BufferPlan``). A change to
/// a fusion rule that changes a plan fails here, not only in the speed of a benchmark.
@Suite("Execution plans of fused blocks")
struct FusionPlanTests {
    /// A step of a plan by names: its node, the tensors it reads, the tensor it writes.
    struct NamedStep: Equatable, CustomStringConvertible {
        let node: String
        let inputs: [String]
        let output: String

        init(_ node: String, reads inputs: [String], writes output: String) {
            self.node = node
            self.inputs = inputs
            self.output = output
        }

        var description: String { "\(node)(\(inputs.joined(separator: ", "))) -> \(output)" }
    }

    /// `plan`'s steps by names.
    static func namedSteps(_ plan: ExecutionPlan, _ graph: Graph) -> [NamedStep] {
        plan.steps.map { step in
            NamedStep(graph.nodes[step.node].name, reads: step.inputs.map(graph.name(ofTensor:)),
                      writes: graph.name(ofTensor: step.output))
        }
    }

    /// The tensor holding each model output, by name.
    static func outputHolders(_ plan: ExecutionPlan, _ graph: Graph) -> [String] {
        graph.outputs.map { graph.name(ofTensor: plan.storage[$0]) }
    }

    /// The buffers of `model`'s plan before kernels are built (no step writes in place).
    static func buffers(_ model: Model) -> BufferPlan { BufferPlan(graph: model.graph, plan: model.plan) }

    @Test("ResNet block: conv → BN → ReLU in one step, conv → BN → Add → ReLU in one step reading the shortcut")
    func residualBlock() throws {
        let x = Input(width: 4, height: 4, channels: 3, name: "x")
        let stem = x --> Convolution(kernel: (1, 1), channels: 8, padding: .valid, activation: .relu, name: "stem")
        let main = stem --> Convolution(kernel: (3, 3), channels: 8, useBias: false, name: "conv1")
            --> BatchNormalization(name: "bn1") --> Activation(.relu, name: "relu1")
            --> Convolution(kernel: (3, 3), channels: 8, useBias: false, name: "conv2") --> BatchNormalization(name: "bn2")
        let model = try Model(input: x, output: [main, stem] --> Add(name: "add") --> Activation(.relu, name: "relu2"))
        let plan = model.plan
        #expect(Self.namedSteps(plan, model.graph) == [
            NamedStep("stem", reads: ["x"], writes: "stem"),
            NamedStep("conv1", reads: ["stem"], writes: "conv1"),
            NamedStep("conv2", reads: ["conv1", "stem"], writes: "conv2"),
        ])
        #expect(Self.outputHolders(plan, model.graph) == ["conv2"])
        // x (48) dies after the stem; conv1 grows its slot; conv2 needs a third while stem and conv1 live.
        let buffers = Self.buffers(model)
        #expect(buffers.slotSizes == [128, 128, 128])
        #expect(buffers.slot[plan.storage[model.graph.outputs[0]]] == 2)
        // Written over the shortcut (its second input), which dies there: two slots.
        let shared = BufferPlan(graph: model.graph, plan: plan, inPlaceInputs: [nil, nil, 1])
        #expect(shared.slotSizes == [128, 128] && shared.sharedInputs == [nil, nil, 1])
        #expect(shared.slot[plan.storage[model.graph.outputs[0]]] == shared.slot[plan.steps[2].inputs[1]])
    }

    @Test("ShuffleNet block: the kept half's Slice and the shuffle fold into the concatenation")
    func shuffleBlock() throws {
        let x = Input(width: 4, height: 4, channels: 8, name: "x")
        let kept = x --> Slice(axis: -1, start: 0, end: 4, name: "keep")
        let branch = x --> Slice(axis: -1, start: 4, end: 8, name: "split")
            --> PointwiseConvolution(channels: 4, activation: .relu, name: "pw")
        let model = try Model(input: x, output: [kept, branch] --> Concatenate(name: "cat")
            --> ChannelShuffle(groups: 2, name: "shuffle"))
        let plan = model.plan
        // The split half is read by a convolution, not the concatenation: it runs.
        #expect(Self.namedSteps(plan, model.graph) == [
            NamedStep("split", reads: ["x"], writes: "split"),
            NamedStep("pw", reads: ["split"], writes: "pw"),
            NamedStep("cat", reads: ["x", "pw"], writes: "cat"),
        ])
        #expect(Self.outputHolders(plan, model.graph) == ["cat"])
        // x (128) lives to the concatenation; split (64) is free when cat (128) grows it.
        #expect(Self.buffers(model).slotSizes == [128, 128, 64])
    }

    @Test("Squeeze and excitation: the gate's last convolution multiplies the map, the product is its output")
    func squeezeExcitationBlock() throws {
        let x = Input(width: 4, height: 4, channels: 8, name: "x")
        let map = x --> Convolution(kernel: (3, 3), channels: 8, activation: .relu, name: "conv")
        let gate = map --> GlobalAveragePooling(name: "squeeze")
            --> Convolution(kernel: (1, 1), channels: 2, padding: .valid, activation: .relu, name: "fc1")
            --> Convolution(kernel: (1, 1), channels: 8, padding: .valid, activation: .sigmoid, name: "fc2")
        let model = try Model(input: x, output: [map, gate] --> Elementwise(.multiply, name: "scale")
            --> PointwiseConvolution(channels: 4, name: "proj"))
        let plan = model.plan
        #expect(Self.namedSteps(plan, model.graph) == [
            NamedStep("conv", reads: ["x"], writes: "conv"),
            NamedStep("squeeze", reads: ["conv"], writes: "squeeze"),
            NamedStep("fc1", reads: ["squeeze"], writes: "fc1"),
            NamedStep("fc2", reads: ["fc1", "conv"], writes: "scale"),
            NamedStep("proj", reads: ["scale"], writes: "proj"),
        ])
        #expect(Self.outputHolders(plan, model.graph) == ["proj"])
        // squeeze (8) and then the product (128) reuse x's slot; fc1 (2) gets one of its own.
        #expect(Self.buffers(model).slotSizes == [128, 128, 2])
    }

    @Test("A zero Pad and an activation around a convolution: one step reading the unpadded input")
    func padConvolution() throws {
        let x = Input(width: 4, height: 4, channels: 3, name: "x")
        let model = try Model(input: x, output: x --> Pad(top: 1, left: 1, bottom: 1, right: 1, name: "pad")
            --> Convolution(kernel: (3, 3), channels: 8, padding: .valid, name: "conv") --> Activation(.relu, name: "relu"))
        let plan = model.plan
        #expect(Self.namedSteps(plan, model.graph) == [NamedStep("conv", reads: ["x"], writes: "conv")])
        #expect(Self.outputHolders(plan, model.graph) == ["conv"])
        #expect(Self.buffers(model).slotSizes == [48, 128])
    }

    @Test("Transpose → Flatten → Dense: one Dense step reading the untransposed input")
    func transposeFlattenDense() throws {
        let x = Input(shape: Shape(height: 2, width: 3, channels: 4), name: "x")
        let model = try Model(input: x, output: x --> Transpose(permutation: [0, 3, 1, 2], name: "transpose")
            --> Flatten(name: "flatten") --> Dense(neurons: 5, name: "fc"))
        let plan = model.plan
        #expect(Self.namedSteps(plan, model.graph) == [NamedStep("fc", reads: ["x"], writes: "fc")])
        #expect(Self.outputHolders(plan, model.graph) == ["fc"])
        #expect(Self.buffers(model).slotSizes == [24, 5])
    }
}
