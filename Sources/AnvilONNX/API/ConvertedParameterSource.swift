import Anvil

/// The parameter tensors of an ``ONNXConversion`` moved into the aligned storage `compile`
/// reads, one tensor at a time, each array's pages given back as they are copied
/// (`ParameterData(moving:)`): opening an `.onnx` file never holds a tensor twice
/// (``ArrayParameterSource`` copies each tensor when `compile` asks for it, while all the
/// arrays stay alive).
struct ConvertedParameterSource: ParameterSource {
    /// The tensors by name.
    private let tensors: [String: ParameterData]

    /// Takes `tensors`, leaving it empty; the first tensor of a repeated name wins (as
    /// ``ONNXConversion/parameterSource`` does).
    init(taking tensors: inout [(name: String, values: [Float])]) {
        var byName: [String: ParameterData] = [:]
        byName.reserveCapacity(tensors.count)
        for position in tensors.indices {
            let name = tensors[position].name
            if byName[name] == nil { byName[name] = ParameterData(moving: &tensors[position].values) }
            tensors[position].values = []
        }
        tensors = []
        self.tensors = byName
    }

    /// The named tensor.
    func data(for request: ParameterRequest) throws -> ParameterData {
        guard let data = tensors[request.tensorName] else {
            throw AnvilError(.missingParameter, "no tensor '\(request.tensorName)' for \(request)")
        }
        return data
    }

    /// The names.
    var tensorNames: [String]? { Array(tensors.keys) }
}
