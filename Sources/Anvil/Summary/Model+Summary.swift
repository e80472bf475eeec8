import Foundation

extension Model {
    /// A Keras-style table: each layer's name, type, output shape, parameters and
    /// multiply-accumulates, then totals (layers, parameters, MACs, weight bytes, peak
    /// activation bytes per image). Parameters are counted as Keras counts them, normalization
    /// statistics included; the total says how many of them those are. Returns the text; print
    /// it yourself.
    ///
    /// With open inputs, `?` marks a dimension (and MACs) that depend on the input size; see
    /// ``summary(inputShapes:)`` for the table at one size.
    public func summary() -> String {
        let layers = self.layers
        var totals: [String]
        if hasOpenInputs {
            totals = ["Open input size: \(openInputShapes.map(\.description).joined(separator: ", ")); MACs and activation memory depend on it"]
        } else {
            totals = ["MACs per image: \(Self.grouped(macs)) (\(Self.grouped(saturatingProduct(2, macs))) FLOPs)",
                      "Peak activation memory per image: \(Self.bytes(activationBytesPerImage))"]
        }
        return table(inputs: openInputShapes.map(\.description), layers: layers, totals: totals)
    }

    /// The table of ``summary()`` for inputs of `inputShapes` (one image each): concrete shapes,
    /// MACs and activation memory at that size (for a model with an open input size). Throws
    /// when a shape does not match its input or does not fit a layer.
    public func summary(inputShapes: [Shape]) throws -> String {
        let layers = try layers(forInputShapes: inputShapes)
        let macs = saturatingSum(layers.map(\.macs))
        let memory = try activationBytesPerImage(forInputShapes: inputShapes)
        return table(inputs: inputShapes.map(\.description), layers: layers, totals: [
            "MACs per image: \(Self.grouped(macs)) (\(Self.grouped(saturatingProduct(2, macs))) FLOPs)",
            "Peak activation memory per image: \(Self.bytes(memory))",
        ])
    }

    private func table(inputs: [String], layers: [LayerInfo], totals: [String]) -> String {
        var rows: [[String]] = [["Layer (type)", "Output shape", "Params", "MACs"]]
        for (i, name) in inputNames.enumerated() {
            rows.append(["\(name) (Input)", inputs[i], "0", "0"])
        }
        for layer in layers {
            let parameters = layer.sharesParameters ? "shared" : layer.parametersDependOnInputSize ? "?" : Self.grouped(layer.parameterCount)
            rows.append(["\(layer.name) (\(layer.layer.typeName))",
                         layer.openOutputShape.isOpen ? layer.openOutputShape.description : layer.outputShape.description,
                         parameters, layer.macsDependOnInputSize ? "?" : Self.grouped(layer.macs)])
        }
        let widths = (0 ..< 4).map { column in rows.map { $0[column].count }.max() ?? 0 }
        func line(_ row: [String]) -> String {
            let left = row[0].padding(toLength: widths[0], withPad: " ", startingAt: 0)
            let shape = row[1].padding(toLength: widths[1], withPad: " ", startingAt: 0)
            let params = String(repeating: " ", count: widths[2] - row[2].count) + row[2]
            let macs = String(repeating: " ", count: widths[3] - row[3].count) + row[3]
            return "\(left)   \(shape)   \(params)   \(macs)"
        }
        let width = widths.reduce(9, +)
        var text = [line(rows[0]), String(repeating: "=", count: width)]
        text += rows.dropFirst().map(line)
        text.append(String(repeating: "=", count: width))
        let parameterCount = saturatingSum(layers.map(\.parameterCount))
        let weightBytes = saturatingProduct(parameterCount, MemoryLayout<Float>.size)
        text.append("Layers: \(layers.count)")
        let statistics = saturatingSum(layers.map(\.normalizationStatisticCount))
        // Keras's count; PyTorch leaves the running statistics out, so say how many there are.
        let ofWhich = statistics > 0 ? ", of which \(Self.grouped(statistics)) normalization statistics (running mean, variance)" : ""
        text.append("Parameters: \(Self.grouped(parameterCount)) (\(Self.bytes(weightBytes)))\(ofWhich)")
        text += totals
        return text.joined(separator: "\n") + "\n"
    }

    /// `1234567` → `1,234,567`.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (i, digit) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return value < 0 ? "-" + result : result
    }

    /// Bytes in B, KB, MB or GB (powers of 1024), two decimals.
    static func bytes(_ value: Int) -> String {
        let units = ["B", "KB", "MB", "GB"]
        var amount = Double(value)
        var unit = 0
        while amount >= 1024 && unit < units.count - 1 { amount /= 1024; unit += 1 }
        return unit == 0 ? "\(value) B" : String(format: "%.2f %@", amount, units[unit])
    }
}
