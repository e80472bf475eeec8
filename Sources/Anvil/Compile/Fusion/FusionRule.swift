/// One way the planner fuses graph nodes into a step of an ``ExecutionPlan``; the rules and
/// the order they run in are ``ExecutionPlan/fusionRules``.
///
/// The conforming type is the rule: its static methods match on the graph while the plan is
/// built. A value is one match, kept in the step's ``ExecutionPlan/Step/fusions``: it holds
/// the layer it matched, and when the compiler builds the step's kernel it says what the step
/// reads and fills the kernel's context.
protocol FusionRule: Sendable {
    /// The node fused away (for a Transpose → Flatten, the Transpose).
    var node: Int { get }

    /// Folds node `index`, about to make a step, into the step of a later node when the rule
    /// matches there: marks what it fused and keeps the match for that step
    /// (``PlanBuilder/keep(_:forStepOf:)``). Returns whether it did; the node then makes no step.
    static func foldIntoConsumer(at index: Int, _ builder: inout PlanBuilder) -> Bool

    /// Fuses into `step`, just made, what the rule matches there: matches kept for it, or the
    /// node after its tail (``PlanBuilder/tail``).
    static func fuse(into step: inout ExecutionPlan.Step, _ builder: inout PlanBuilder)

    /// Changes `shapes`, those of the buffers the step reads (its node's input shapes at
    /// first), to what the fusion makes the step read.
    func adjustReadShapes(_ shapes: inout [Shape], graph: Graph)

    /// Tensors, besides those the step reads and writes, whose shapes the kernel depends on: a
    /// kernel built for another input size is reused only where they match too.
    func shapeDependencies(graph: Graph) -> [Int]

    /// Tells the layer, through `context`, the work fused into its kernel.
    func fill(_ context: inout KernelContext, graph: Graph,
              parameters: [ObjectIdentifier: [ParameterKind: ParameterData]]) throws

    /// `kernel` (the step's kernel, its fused epilogue completed) checked against this fusion,
    /// or wrapped to do it. `outputShape` is that of the tensor the step writes.
    func finish(_ kernel: any Kernel, context: KernelContext, outputShape: Shape) throws -> any Kernel
}

extension FusionRule {
    /// None: the rule fuses nodes after a step's node, not before it.
    static func foldIntoConsumer(at index: Int, _ builder: inout PlanBuilder) -> Bool { false }

    /// No change: the step reads its node's inputs.
    func adjustReadShapes(_ shapes: inout [Shape], graph: Graph) {}

    /// None.
    func shapeDependencies(graph: Graph) -> [Int] { [] }

    /// Nothing to tell.
    func fill(_ context: inout KernelContext, graph: Graph,
              parameters: [ObjectIdentifier: [ParameterKind: ParameterData]]) throws {}

    /// `kernel` unchanged: the kernel does the fused work.
    func finish(_ kernel: any Kernel, context: KernelContext, outputShape: Shape) throws -> any Kernel { kernel }
}
