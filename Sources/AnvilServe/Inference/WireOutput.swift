/// One output of an answered request, in the model's wire layout, before either protocol writes it.
struct WireOutput: Sendable {
    /// The model output's name.
    var name: String
    /// The batch size, then the output's axes in the wire layout.
    var shape: [Int]
    /// The values, row-major in the wire layout.
    var values: [Float]
}
