import Anvil
import NIOConcurrencyHelpers
import Synchronization

/// A compiled model served under a name: its batching ``Runner``, its wire layout and the
/// metadata clients read before sending requests.
public final class ServedModel: Sendable {
    /// The name in `/v2/models/{name}`.
    public let name: String
    /// The compiled model.
    public let model: Model
    /// Coalesces this model's concurrent requests into batches.
    public let runner: Runner
    /// The layout of its tensors on the wire (the layout its model file declares).
    public let layout: WireLayout
    /// What `GET /v2/models/{name}` answers.
    public let metadata: ModelMetadata
    /// What `GET /v2/models/{name}/config` answers (Triton's model configuration).
    public let configuration: ModelConfiguration
    /// Its requests' counts and times (Triton's statistics extension).
    let statistics = InferenceStatistics()
    /// Who hears of each batch the runner starts (the server's metrics, once it runs).
    private let batchListener: BatchListener

    /// The closure a runner calls for each batch, set once the server runs.
    private final class BatchListener: Sendable {
        let listener = NIOLockedValueBox<(@Sendable (Int) -> Void)?>(nil)
    }

    /// Serves `model` (compiled) as `name`, its tensors in `layout` on the wire, through a runner
    /// that batches up to `maximumBatch` images arriving within `maximumWait`. Throws unless the
    /// name can be a URL path segment, the model is compiled and the batching options are valid.
    public init(name: String, model: Model, maximumBatch: Int = 16, maximumWait: Duration = .milliseconds(2),
                layout: WireLayout = .channelsLast) throws {
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }) else {
            throw AnvilError(.invalidOption, "model name '\(name)' must be ASCII letters, digits, '-', '_' or '.' (it is a URL path segment)")
        }
        guard model.isCompiled else { throw AnvilError(.notCompiled, "model '\(name)' must be compiled before it is served") }
        let listener = BatchListener()
        self.name = name
        self.model = model
        self.layout = layout
        batchListener = listener
        runner = try Runner(model: model, maximumBatch: maximumBatch, maximumWait: maximumWait) { images in
            listener.listener.withLockedValue { $0 }?(images)
        }
        func tensors(_ names: [String], _ shapes: [OpenShape]) -> [TensorMetadata] {
            zip(names, shapes).map { name, shape in
                TensorMetadata(name: name, datatype: TensorDatatype(shape.elementType).rawValue, shape: [-1] + layout.dimensions(of: shape).map { $0 ?? -1 },
                               parameters: layout.axesName(rank: shape.rank).map { ["layout": $0] })
            }
        }
        metadata = ModelMetadata(name: name, platform: "anvil", inputs: tensors(model.inputNames, model.openInputShapes),
                                 outputs: tensors(model.outputNames, model.openOutputShapes))
        // Triton's dims leave out the batch axis when max_batch_size is above 0, as here.
        func configured(_ names: [String], _ shapes: [OpenShape], input: Bool) -> [ModelConfigurationTensor] {
            zip(names, shapes).map { name, shape in
                let format = input ? (shape.rank == 4 ? (layout == .channelsLast ? "FORMAT_NHWC" : "FORMAT_NCHW") : "FORMAT_NONE") : nil
                return ModelConfigurationTensor(name: name, dataType: TensorDatatype(shape.elementType).configurationName, format: format, dims: layout.dimensions(of: shape).map { $0 ?? -1 })
            }
        }
        let waitMicroseconds = Int(InferenceStatistics.nanoseconds(maximumWait) / 1000)
        configuration = ModelConfiguration(
            name: name, platform: "anvil", backend: "anvil", maxBatchSize: maximumBatch,
            input: configured(model.inputNames, model.openInputShapes, input: true),
            output: configured(model.outputNames, model.openOutputShapes, input: false),
            dynamicBatching: maximumBatch > 1 ? DynamicBatchingConfiguration(preferredBatchSize: [maximumBatch], maxQueueDelayMicroseconds: waitMicroseconds) : nil)
    }

    /// Sends the image count of every batch this model runs from now on to `listener`.
    func listenToBatches(_ listener: @escaping @Sendable (Int) -> Void) {
        batchListener.listener.withLockedValue { $0 = listener }
    }
}
