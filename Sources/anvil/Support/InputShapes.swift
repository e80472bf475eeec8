import Anvil
import ArgumentParser

/// The shape of one image of each of `model`'s inputs from `--shape` options (`run`, `bench`,
/// `summary`): `options[i]` (HxWxC, LxC for a sequence, C for a vector) sets the size of input
/// `i` if it is open and is checked against it if fixed; an input without an option keeps its
/// fixed shape, and an open one without it is an error.
func inputShapes(of model: Model, options: [String]) throws -> [Shape] {
    guard options.count <= model.inputShapes.count else {
        throw ValidationError("the model has \(model.inputShapes.count) input(s); \(options.count) --shape given")
    }
    return try model.openInputShapes.enumerated().map { index, pattern in
        let name = model.inputNames[index]
        guard index < options.count else {
            guard let fixed = pattern.fixed else {
                throw ValidationError("input '\(name)' has an open size \(pattern); give it with --shape \(pattern.rank == 3 ? "LxC" : "HxWxC")")
            }
            return fixed
        }
        let text = options[index]
        let dims = text.split(separator: "x", omittingEmptySubsequences: false).map { Int($0) }
        guard (1 ... 3).contains(dims.count), dims.allSatisfy({ $0 != nil }),
              let given = try? Shape(dimensions: dims.map { $0! }) else {
            throw ValidationError("--shape \(text) is not HxWxC (three integers, e.g. 224x224x3; LxC for a sequence, C for a vector)")
        }
        guard dims.allSatisfy({ $0! > 0 }) else {
            throw ValidationError("--shape \(text): every dimension must be positive")
        }
        guard pattern.accepts(given) else {
            throw ValidationError("--shape \(text) does not match the model's input '\(name)' \(pattern)")
        }
        return given
    }
}
