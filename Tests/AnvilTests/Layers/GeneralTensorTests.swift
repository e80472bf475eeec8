import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// Tensors of any rank (up to 8) and shape computations known when the plan is built, each
/// checked against a naive reference written here: index arithmetic over row-major arrays.
@Suite struct GeneralTensorTests {
    /// Row-major strides of `dims`.
    static func strides(_ dims: [Int]) -> [Int] {
        var s = [Int](repeating: 1, count: dims.count)
        for k in stride(from: dims.count - 2, through: 0, by: -1) { s[k] = s[k + 1] * dims[k + 1] }
        return s
    }

    /// The multi-index of flat position `flat` in `dims`.
    static func index(_ flat: Int, _ dims: [Int]) -> [Int] {
        var rest = flat
        return strides(dims).map { s in defer { rest %= s }; return rest / s }
    }

    @Test("A rank-8 Transpose and Reshape (batch first) match the naive permutation at batch 2")
    func rank8TransposeAndReshape() throws {
        var rng = RefRandom(seed: 8)
        let dims = [2, 3, 1, 4, 2, 3, 2]  // after the batch axis: rank 8
        let batch = 2
        let permutation = [0, 5, 3, 7, 1, 2, 6, 4]
        let input = Input(shape: try Shape(dimensions: dims))
        let model = try Model(input: input, output: input --> Transpose(permutation: permutation) --> Reshape([6, -1]))
        #expect(model.outputShapes[0].dimensions == [6, dims.reduce(1, *) / 6])
        try model.compile(from: ArrayParameterSource([:]))
        let count = dims.reduce(1, *)
        let x = (0 ..< batch * count).map { _ in rng.float() }
        let y = try model.predict(Tensor(batch: batch, shape: try Shape(dimensions: dims), values: x))
        let full = [batch] + dims
        let outDims = permutation.map { full[$0] }
        var expected = [Float](repeating: 0, count: x.count)
        let inStrides = Self.strides(full)
        for o in 0 ..< x.count {
            let at = Self.index(o, outDims)
            var source = 0
            for (axis, i) in at.enumerated() { source += i * inStrides[permutation[axis]] }
            expected[o] = x[source]
        }
        #expect(y.values == expected)
        #expect(y.shape.rank == 3)
    }

    @Test("Element-wise broadcasting at rank 6 matches NumPy's rule (aligned on the last axes)")
    func rank6Broadcast() throws {
        var rng = RefRandom(seed: 6)
        let a = [3, 1, 4, 2, 5], b = [1, 2, 1]
        let left = Input(shape: try Shape(dimensions: a), name: "a"), right = Input(shape: try Shape(dimensions: b), name: "b")
        let model = try Model(inputs: [left, right], outputs: [[left, right] --> Elementwise(.subtract)])
        let out = [3, 1, 4, 2, 5]
        #expect(model.outputShapes[0].dimensions == out)
        try model.compile(from: ArrayParameterSource([:]))
        let xa = (0 ..< a.reduce(1, *)).map { _ in rng.float() }, xb = (0 ..< b.reduce(1, *)).map { _ in rng.float() }
        let y = try model.predict([Tensor(batch: 1, shape: try Shape(dimensions: a), values: xa),
                                   Tensor(batch: 1, shape: try Shape(dimensions: b), values: xb)])[0]
        let sa = Self.strides(a), sb = Self.strides(b)
        for o in 0 ..< out.reduce(1, *) {
            let at = Self.index(o, out)
            let ia = zip(at, zip(a, sa)).reduce(0) { $0 + ($1.1.0 == 1 ? 0 : $1.0 * $1.1.1) }
            let tail = Array(at.suffix(b.count))
            let ib = zip(tail, zip(b, sb)).reduce(0) { $0 + ($1.1.0 == 1 ? 0 : $1.0 * $1.1.1) }
            #expect(y.values[o] == xa[ia] - xb[ib])
        }
    }

    /// `x + column index` built from the input's own shape: ShapeOf → Gather → Range → Cast →
    /// Unsqueeze, added to an open-size image (an anchor grid, as a detection head makes).
    static func columnGridModel() throws -> (Model, Input) {
        let input = Input(channels: 2, name: "image")
        let shape = input --> ShapeOf()
        let width = [shape, Constant.tensor(try TensorValue(shape: Shape.scalar.with(elementType: .int64), integers: [1]))]
            --> Gather(axis: 1)
        let zero = Constant.tensor(try TensorValue(shape: Shape.scalar.with(elementType: .int64), integers: [0]))
        let one = Constant.tensor(try TensorValue(shape: Shape.scalar.with(elementType: .int64), integers: [1]))
        let columns = [zero, width, one] --> Arange() --> Cast(to: .float32) --> Unsqueeze(axes: [2])
        let output = [input, columns] --> Elementwise(.add, name: "grid")
        return (try Model(input: input, output: output), input)
    }

    @Test("A shape computation compiles once and is evaluated per input size: x + column index at two sizes")
    func shapeComputationPerInputSize() throws {
        let (model, _) = try Self.columnGridModel()
        #expect(model.hasOpenInputs)
        try model.compile(from: ArrayParameterSource([:]))
        var rng = RefRandom(seed: 3)
        for (h, w) in [(3, 5), (4, 7), (3, 5)] {
            let shape = Shape(height: h, width: w, channels: 2)
            let x = (0 ..< 2 * shape.count).map { _ in rng.float() }
            let y = try model.predict(Tensor(batch: 2, shape: shape, values: x))
            var expected = x
            for i in expected.indices { expected[i] += Float(i / 2 % w) }
            #expect(y.values == expected, "at \(h)×\(w)")
        }
    }

    @Test("Shape computations survive the model file (version 2) and the known values are in the summary's shapes")
    func shapeComputationThroughTheModelFile() throws {
        let (model, _) = try Self.columnGridModel()
        let json = try model.modelFileJSON(name: "grid")
        let file = try ModelFile(json: try JSONValue.parse(Data(json.serialized().utf8), source: "grid.json"), source: "grid.json", directory: URL(fileURLWithPath: "/"))
        let loaded = file.model
        try loaded.compile(from: ArrayParameterSource([:]))
        let shape = Shape(height: 2, width: 3, channels: 2)
        let y = try loaded.predict(Tensor(zeros: shape))
        #expect(y.values == (0 ..< 12).map { Float($0 / 2 % 3) })
        #expect(json.serialized().contains("\"version\":2") || json.serialized().contains("\"version\": 2"))
        let types = try loaded.layers(forInputShapes: [shape]).map(\.outputShape.elementType)
        #expect(types.contains(.int64) && types.last == .float32)
    }

    @Test("Model files of version 1 still load; version 2 reads ranks up to 8, open axes anywhere and element types")
    func modelFileVersions() throws {
        let v1 = try JSONValue.parse(Data(#"{"format":"anvil.model","version":1,"inputs":[{"name":"x","shape":[null,4,3]}],"layers":[{"name":"t","type":"Transpose","inputs":["x"],"permutation":[0,3,1,2]}],"outputs":["t"]}"#.utf8), source: "v1")
        let old = try ModelFile(json: v1, source: "v1.json", directory: URL(fileURLWithPath: "/"))
        #expect(old.model.openInputShapes[0] == OpenShape(height: nil, width: 4, channels: 3))
        let v2 = try JSONValue.parse(Data(#"{"format":"anvil.model","version":2,"inputs":[{"name":"x","shape":[2,null,1,3,2,2,null]},{"name":"ids","shape":[null],"elementType":"int64"}],"layers":[{"name":"s","type":"ShapeOf","inputs":["ids"]},{"name":"r","type":"Reshape","inputs":["x"],"shape":[0,-1]}],"outputs":["r","s"]}"#.utf8), source: "v2")
        let new = try ModelFile(json: v2, source: "v2.json", directory: URL(fileURLWithPath: "/"))
        #expect(new.model.openInputShapes[0].dimensions == [2, nil, 1, 3, 2, 2, nil])
        #expect(new.model.openInputShapes[1] == OpenShape(dimensions: [nil], elementType: .int64))
        let v3 = try JSONValue.parse(Data(#"{"format":"anvil.model","version":3,"inputs":[],"layers":[],"outputs":[]}"#.utf8), source: "v3")
        #expect(throws: AnvilError.self) { try ModelFile(json: v3, source: "v3.json", directory: URL(fileURLWithPath: "/")) }
    }

    @Test("Gather of a computed tensor with known indices matches NumPy's take along an inner axis")
    func gatherComputedTensor() throws {
        var rng = RefRandom(seed: 12)
        let dims = [4, 3, 5]
        let input = Input(shape: try Shape(dimensions: dims))
        let indices = Constant.tensor(try TensorValue(shape: Shape(unchecked: [2, 2], elementType: .int64), integers: [2, 0, -1, 1]))
        let model = try Model(input: input, output: [input, indices] --> Gather(axis: 2))
        #expect(model.outputShapes[0].dimensions == [4, 2, 2, 5])
        try model.compile(from: ArrayParameterSource([:]))
        let x = (0 ..< 2 * 60).map { _ in rng.float() }
        let y = try model.predict(Tensor(batch: 2, shape: try Shape(dimensions: dims), values: x))
        let taken = [2, 0, 2, 1]
        var expected: [Float] = []
        for b in 0 ..< 2 { for i in 0 ..< 4 { for t in taken { for k in 0 ..< 5 { expected.append(x[b * 60 + i * 15 + t * 5 + k]) } } } }
        #expect(y.values == expected)
    }

    @Test("Expand of a computed tensor matches NumPy's broadcast_to: repeated axes of extent 1, a longer target")
    func expandComputedTensor() throws {
        var rng = RefRandom(seed: 13)
        let dims = [3, 1, 4]
        let target = [2, 3, 5, 4]
        let input = Input(shape: try Shape(dimensions: dims))
        let shape = Constant.tensor(.int64(target))
        let model = try Model(input: input, output: [input, shape] --> Expand())
        #expect(model.outputShapes[0].dimensions == target)
        try model.compile(from: ArrayParameterSource([:]))
        let x = (0 ..< 2 * 12).map { _ in rng.float() }
        let y = try model.predict(Tensor(batch: 2, shape: try Shape(dimensions: dims), values: x))
        var expected: [Float] = []
        for b in 0 ..< 2 {
            for _ in 0 ..< 2 { for i in 0 ..< 3 { for _ in 0 ..< 5 { for k in 0 ..< 4 { expected.append(x[b * 12 + i * 4 + k]) } } } }
        }
        #expect(y.values == expected)
    }

    @Test("Expand of a known value is evaluated when the plan is built: a column index grid added to the input")
    func expandKnownValue() throws {
        var rng = RefRandom(seed: 14)
        let input = Input(shape: OpenShape(dimensions: [nil, nil]))
        let scalar = { (value: Int64) in Constant.tensor(try! TensorValue(shape: Shape(unchecked: [], elementType: .int64), integers: [value])) }
        let size = input --> ShapeOf()
        let width = [size, scalar(1)] --> Gather(axis: 1)
        let columns = [scalar(0), width, scalar(1)] --> Arange() --> Cast(to: .float32)
        let output = [input, [columns, size] --> Expand()] --> Elementwise(.add)
        let model = try Model(input: input, output: output)
        try model.compile(from: ArrayParameterSource([:]))
        for (h, w) in [(2, 3), (4, 5)] {
            let shape = try Shape(dimensions: [h, w])
            let x = (0 ..< h * w).map { _ in rng.float() }
            let y = try model.predict(Tensor(batch: 1, shape: shape, values: x))
            let expected = (0 ..< h * w).map { x[$0] + Float($0 % w) }
            #expect(y.values == expected, "at \(h)x\(w)")
        }
    }

    @Test("Shape computations that cannot be evaluated throw naming the layer")
    func shapeComputationErrors() throws {
        let input = Input(shape: .vector(3))
        // Range over a tensor computed at predict.
        let computed = input --> Slice(axis: 1, start: 0, end: 1) --> Reshape([])
        let one = Constant.tensor(try TensorValue(shape: .scalar, floats: [1]))
        #expect(throws: AnvilError.self) { try Model(input: input, output: [one, computed, one] --> Arange(name: "steps")) }
        do {
            _ = try Model(input: input, output: [one, computed, one] --> Arange(name: "steps"))
        } catch let error as AnvilError {
            #expect(error.message.contains("'steps'") && error.message.contains("known"))
        }
        // Gather out of range.
        let bad = Constant.tensor(.int64([3]))
        #expect(throws: AnvilError.self) { try Model(input: input, output: [input, bad] --> Gather(axis: 1)) }
        // An int64 tensor fed to a convolution.
        let ids = Input(shape: OpenShape(dimensions: [4], elementType: .int64))
        #expect(throws: AnvilError.self) { try Model(input: ids, output: ids --> Softmax()) }
    }

    @Test("An input no output depends on is accepted: predict checks its shape and ignores its values")
    func unusedInputIsIgnored() throws {
        let x = Input(shape: try Shape(dimensions: [3]), name: "x"), spare = Input(shape: try Shape(dimensions: [2]), name: "spare")
        let model = try Model(inputs: [x, spare], outputs: [x --> Activation(.negative)])
        try model.compile(from: ArrayParameterSource([:]))
        let values: [Float] = [1, -2, 3]
        let y = try model.predict([Tensor(batch: 1, shape: try Shape(dimensions: [3]), values: values),
                                   Tensor(batch: 1, shape: try Shape(dimensions: [2]), values: [.nan, 7])])
        #expect(y[0].values == values.map { -$0 })
        #expect(throws: AnvilError.self) {
            try model.predict([Tensor(batch: 1, shape: try Shape(dimensions: [3]), values: values),
                               Tensor(batch: 1, shape: try Shape(dimensions: [3]), values: [1, 2, 3])])
        }
    }
}
