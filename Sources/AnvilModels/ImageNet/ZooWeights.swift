import Anvil
import Foundation

/// Opens trained weights for a zoo network, in the two forms they come in.
///
/// ```swift
/// let model = try ResNet50.model()
/// let weights = try ZooWeights.open(URL(fileURLWithPath: "resnet50.safetensors"))
/// try model.compile(layout: weights.layout, from: weights.source)
/// ```
public enum ZooWeights {
    /// Where parameters come from, and the layout their tensors are in.
    public struct Opened {
        /// The parameter source to compile from.
        public let source: any ParameterSource
        /// The layout of the weight tensors.
        public let layout: WeightLayout
        /// What was opened, for messages: `"safetensors (PyTorch state_dict)"` or `"Anvil model file"`.
        public let kind: String
    }

    /// Opens `url`:
    ///
    /// - a `.safetensors` file holding a PyTorch `state_dict` (e.g. torchvision's pretrained
    ///   weights, saved with `safetensors.torch.save_file(model.state_dict(), ...)`): layout
    ///   ``WeightLayout/pytorch``, keys matched with ``pytorchModulePaths(in:)``, and the
    ///   `num_batches_tracked` counters and Inception-v3's training-only `AuxLogits.*`
    ///   classifier ignored;
    /// - anything else is read as an Anvil model file (`model.json`, with a blob, directory or
    ///   safetensors source): its parameters and its declared layout. The file's own graph is
    ///   not used; the zoo network's layer names must match its tensors.
    ///
    /// - Throws: ``AnvilError`` if the file cannot be read or parsed, or a model file has no
    ///   parameters.
    public static func open(_ url: URL) throws -> Opened {
        if url.pathExtension.lowercased() == "safetensors" {
            return Opened(source: try pytorchStateDict(url), layout: .pytorch, kind: "safetensors (PyTorch state_dict)")
        }
        let file = try ModelFile(contentsOf: url)
        guard let parameters = file.parameters else {
            throw AnvilError(.missingParameter, "model file '\(url.path)' names no parameters (no \"parameters\" member)")
        }
        return Opened(source: parameters, layout: file.layout, kind: "Anvil model file")
    }

    /// Keys that are not inference parameters of a zoo network: BatchNorm's
    /// `num_batches_tracked` and Inception-v3's auxiliary classifier `AuxLogits.*`.
    public static let ignoredStateDictKeys: @Sendable (String) -> Bool = {
        SafetensorsParameterSource.ignoresBatchCounters($0) || $0.hasPrefix("AuxLogits.")
    }

    /// A safetensors source for a PyTorch `state_dict` whose module paths, with `.` written
    /// as `_`, are the Anvil layer names (see ``pytorchModulePaths(in:)``).
    public static func pytorchStateDict(_ url: URL) throws -> SafetensorsParameterSource {
        let probe = try SafetensorsParameterSource(url: url, ignoring: ignoredStateDictKeys)
        let naming = try pytorchModulePaths(in: probe.tensors.keys.filter { !ignoredStateDictKeys($0) }, file: url.path)
        return try SafetensorsParameterSource(url: url, naming: naming, ignoring: ignoredStateDictKeys)
    }

    /// A naming that finds each layer's tensors among `keys` by module path: key
    /// `Mixed_5b.branch1x1.conv.weight` serves layer `Mixed_5b_branch1x1_conv`, kind weights.
    ///
    /// ``SafetensorsParameterSource/Naming/pytorch`` turns every `_` of a layer name into `.`,
    /// which breaks names whose modules hold underscores themselves (torchvision's
    /// `Mixed_5b`, `Conv2d_1a_3x3`, MobileNet's Keras-style `conv_dw_1`); matching the other
    /// way round, from the file's keys, handles every zoo network. Requests no key matches
    /// fall back to ``SafetensorsParameterSource/Naming/pytorch``, so a missing tensor is
    /// reported under its expected key.
    ///
    /// - Throws: ``AnvilError`` `.invalidFile` if two keys map to the same layer and kind
    ///   (e.g. `a_b.c.weight` and `a.b_c.weight`).
    public static func pytorchModulePaths(in keys: some Sequence<String>, file: String) throws -> SafetensorsParameterSource.Naming {
        var index: [String: String] = [:]
        for key in keys {
            guard let dot = key.lastIndex(of: ".") else { continue }
            let module = key[..<dot].replacingOccurrences(of: ".", with: "_")
            let slot = module + "/" + key[key.index(after: dot)...]
            if let other = index[slot], other != key {
                throw AnvilError(.invalidFile, "'\(file)': keys '\(min(other, key))' and '\(max(other, key))' both map to layer '\(module)'")
            }
            index[slot] = key
        }
        let table = index
        return SafetensorsParameterSource.Naming { request in
            table[request.layer + "/" + SafetensorsParameterSource.Naming.pytorchSuffix(request.kind)]
                ?? SafetensorsParameterSource.Naming.pytorch.key(request)
        }
    }
}
