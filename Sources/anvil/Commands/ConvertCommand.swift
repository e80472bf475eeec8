import Anvil
import AnvilONNX
import ArgumentParser
import Foundation

/// `anvil convert model.onnx out/`: writes an Anvil model file (model.json + weights.bin, layout
/// "pytorch") from an `.onnx` file — the ONNX converter itself; Scripts/convert_onnx.py runs this.
struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert an .onnx file to an Anvil model file (out/model.json + out/weights.bin).",
        discussion: "Supported operators and errors: docs/converters.md. Every node that cannot be converted is listed in one run."
    )

    @Argument(help: "An .onnx file.")
    var model: String?

    @Argument(help: "The output directory (created if needed).")
    var output: String?

    @Option(help: "The model's name in the file (default: the ONNX graph's name, or 'onnx').")
    var name: String?

    @Option(name: .customLong("input-shape"), help: "C,H,W for inputs with open dimensions.")
    var inputShape: String?

    @Option(help: ArgumentHelp("Also write where each ONNX graph input and output sits in Anvil's tensors (JSON: ONNX name -> name, shape, permutation, anvilRank).", valueName: "file"))
    var layouts: String?

    @Flag(help: "Print the ONNX operators the converter supports, one a line, and exit.")
    var operators = false

    func run() throws {
        if operators {
            print(ONNXConversion.supportedOperators.joined(separator: "\n"))
            return
        }
        guard let model, let output else { throw ValidationError("give an .onnx file and an output directory") }
        var shape: (channels: Int, height: Int, width: Int)?
        if let inputShape {
            let parts = inputShape.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count == 3, let c = parts[0], let h = parts[1], let w = parts[2], c > 0, h > 0, w > 0 else {
                throw ValidationError("--input-shape must be C,H,W (three positive integers), got '\(inputShape)'")
            }
            shape = (c, h, w)
        }
        do {
            let conversion = try ONNXConversion(contentsOf: URL(fileURLWithPath: model), name: name, inputShape: shape)
            let written = try conversion.write(to: URL(fileURLWithPath: output))
            if let layouts {
                let document = JSONValue.object(conversion.layouts.sorted { $0.key < $1.key }.map { ($0.key, $0.value.json) })
                do { try Data((document.serialized() + "\n").utf8).write(to: URL(fileURLWithPath: layouts)) } catch {
                    throw CommandFailure("cannot write '\(layouts)': \(error.localizedDescription)")
                }
            }
            let layers = conversion.layerCount
            let parameters = conversion.tensors.reduce(0) { $0 + $1.values.count }
            print("wrote \(written.path): \(layers) layers; \(parameters) parameters")
        } catch let error as ONNXImportError {
            throw CommandFailure(error.message)
        } catch let error as AnvilError {
            throw CommandFailure(error.message)
        }
    }
}
