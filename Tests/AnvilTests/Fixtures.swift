import Foundation
@testable import AnvilTestSupport

extension Fixtures {
    /// `Tests/AnvilTests/Fixtures` as copied into the test bundle: `converters/`, `onnx/` and
    /// `safetensors/` (model files and their reference outputs).
    static var root: URL { Bundle.module.resourceURL!.appendingPathComponent("Fixtures") }
}
