/// One output of an answered request, in the model's wire layout, before either protocol writes it.
struct WireOutput: Sendable {
    /// The model output's name.
    var name: String
    /// Its datatype: the model output's element type (an ArgMax cast to int64 is INT64, a mask BOOL).
    var datatype: TensorDatatype
    /// The batch size, then the output's axes in the wire layout.
    var shape: [Int]
    /// The values, row-major in the wire layout: floats for FP32, integers, or truth values for BOOL.
    var elements: TensorData.Elements
}
