import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// Nothing half-loaded: a compile that fails — at any tensor, at any stage, from any source —
/// leaves the model exactly as it was: uncompiled, or compiled with its old weights and
/// giving bit-identical answers. And inputs `predict` cannot run are refused up front.
@Suite("Failure: compile atomicity and predict")
struct FailureCompileTests {
    final class Counter { var value = 0 }
    struct Unavailable: Error {}

    /// conv --> bn (folded) --> relu --> dense --> bn2 (folded into the dense layer): 12 tensors.
    static func normalizedModel() throws -> Model {
        let input = Input(width: 4, height: 4, channels: 2)
        return try Model(input: input, output: input --> Convolution(kernel: (3, 3), channels: 3, name: "conv")
            --> BatchNormalization(name: "bn") --> Activation(.relu) --> Dense(neurons: 2, name: "fc")
            --> BatchNormalization(name: "bn2"))
    }

    static func values(_ count: Int, _ kind: ParameterKind, shift: Float) -> [Float] {
        (0 ..< count).map { i in
            let x = Float((i * 7919) % 13) / 13 - 0.5 + shift
            return kind == .variance ? abs(x) + 0.5 : x
        }
    }

    @Test("A source failing at the k-th tensor, for every k: the compiled model keeps its old weights")
    func failingAtEveryTensor() throws {
        let model = try Self.normalizedModel()
        try model.compile { _, count, kind in ParameterData(Self.values(count, kind, shift: 0)) }
        let x = try Tensor(batch: 3, shape: Shape(height: 4, width: 4, channels: 2), values: (0 ..< 96).map { Float($0 % 11) / 11 })
        let before = try model.predict(x)
        let requests = Counter()
        try Self.normalizedModel().compile { _, count, kind in
            requests.value += 1
            return ParameterData(Self.values(count, kind, shift: 0))
        }
        #expect(requests.value == 12)
        for failAt in 0 ..< requests.value {
            let calls = Counter()
            Failure.expect(.missingParameter, mentioning: ["cannot load"], "failing at request \(failAt)") {
                try model.compile { _, count, kind in
                    defer { calls.value += 1 }
                    if calls.value == failAt { throw Unavailable() }
                    return ParameterData(Self.values(count, kind, shift: 1))  // other weights, never used
                }
            }
            #expect(model.isCompiled)
            #expect(try model.predict(x).values.map(\.bitPattern) == before.values.map(\.bitPattern), "after a failure at request \(failAt)")
        }
        // Failures after every tensor loaded: a kernel refusing its parameters (bn2's variance,
        // folded into the last layer), non-finite values found by validation.
        Failure.expect(.invalidParameter, mentioning: ["bn2"], "last kernel refuses") {
            try model.compile { name, count, kind in
                ParameterData(name == "bn2" && kind == .variance ? [Float](repeating: -1, count: count) : Self.values(count, kind, shift: 1))
            }
        }
        #expect(try model.predict(x) == before)
        Failure.expect(.invalidParameter, mentioning: ["bn2_variance", "non-finite"], "validation of the last tensor") {
            try model.compile(validateParameters: true) { name, count, kind in
                var values = Self.values(count, kind, shift: 1)
                if name == "bn2" && kind == .variance { values[count - 1] = .nan }
                return ParameterData(values)
            }
        }
        #expect(try model.predict(x) == before)
        // A successful compile does replace the weights.
        try model.compile { _, count, kind in ParameterData(Self.values(count, kind, shift: 1)) }
        #expect(try model.predict(x) != before)
    }

    @Test("A model never compiled stays uncompiled after failed compiles; predict says so")
    func uncompiledStaysUncompiled() throws {
        let model = try Failure.model()
        var tensors = Dictionary(uniqueKeysWithValues: Failure.tensors.map { ($0.name, $0.values) })
        tensors["fc_b"] = nil
        for _ in 0 ..< 3 {
            #expect(throws: AnvilError.self) { try model.compile(from: ArrayParameterSource(tensors)) }
            #expect(!model.isCompiled)
            Failure.expect(.notCompiled, mentioning: ["compiled before predict"]) { _ = try model.predict(Failure.input()) }
            Failure.expect(.notCompiled) { _ = try model.profile() }
            model.releaseWorkspaces()  // harmless
        }
    }

    @Test("Recompiling from broken weight files fails and keeps the previous weights",
          arguments: FailureParameterFileTests.brokenDirectories.indices)
    func brokenFilesKeepOldWeights(_ index: Int) throws {
        let (context, code, _, breakIt) = FailureParameterFileTests.brokenDirectories[index]
        let dir = try Failure.temporaryDirectory()
        defer { Failure.cleanUp(dir) }
        try Failure.writeDirectory(dir)
        let model = try Failure.model()
        // Copied: the files are about to be broken under the compiled model.
        try model.compile(from: try DirectoryParameterSource(directory: dir, loading: .copied))
        let before = try model.predict(Failure.input())
        // Other, valid weights in the other files, so a half-load would show.
        for (name, values) in Failure.tensors { try Failure.write(values.map { $0 * -2 }, to: dir.appendingPathComponent("\(name).bin")) }
        try breakIt(dir)
        for loading in [ParameterLoading.memoryMapped, .copied] {
            Failure.expect(code, mentioning: [], "\(context), \(loading)") {
                try model.compile(from: try DirectoryParameterSource(directory: dir, loading: loading))
            }
            #expect(model.isCompiled)
            #expect(try model.predict(Failure.input()) == before, "\(context): outputs changed after a failed compile")
        }
    }

    @Test("ModelFile.compiledModel failing (blob too short) leaves the file's model uncompiled, then compiles once fixed")
    func modelFileCompileFailure() throws {
        let dir = try Failure.temporaryDirectory()
        defer { Failure.cleanUp(dir) }
        let index = try Failure.writeBlob(dir.appendingPathComponent("weights.bin"))
        var tensors: [(String, JSONValue)] = []
        for (name, entry) in index.sorted(by: { $0.key < $1.key }) {
            tensors.append((name, .object([("offset", .int(entry.offset)), ("count", .int(entry.count))])))
        }
        tensors[0].1 = .object([("offset", .int(0)), ("count", .int(53))])  // conv_W: one float short
        let parameters: JSONValue = .object([("source", .object([("type", .string("blob")), ("path", .string("weights.bin")),
                                                                 ("tensors", .object(tensors))]))])
        try Failure.model().writeModelFile(to: dir.appendingPathComponent("model.json"), parameters: parameters)
        let file = try ModelFile(contentsOf: dir.appendingPathComponent("model.json"))
        Failure.expect(.invalidParameter, mentioning: ["conv_W", "53", "54"]) { _ = try file.compiledModel() }
        #expect(!file.model.isCompiled)
    }

    /// Found by Scripts/dev/fuzz.sh (graph target): a model whose parameter count passes
    /// Int.max / 4 — each layer's weights fit in Int, their sum saturates — made `summary()`
    /// trap computing the weight bytes; it now saturates.
    @Test("summary() of a model with more than Int.max / 4 parameters does not trap")
    func summaryWeightBytesOverflow() async {
        await #expect(processExitsWith: .success) {
            let input = Input(width: 1, height: 1, channels: 1 << 31, name: "wide")
            let model = try Model(input: input, output: input --> Dense(neurons: 1 << 31, name: "huge"))
            _ = model.summary()
            exit(0)
        }
    }

    // MARK: - predict

    @Test("A batch whose GEMM rows exceed OpenBLAS's 32-bit sizes: invalidInput before allocating, not a trap")
    func batchBeyondInt32() async {
        await #expect(processExitsWith: .success) {
            let input = Input(width: 64, height: 64, channels: 1)
            do {
                let model = try Model(input: input, output: input --> PointwiseConvolution(channels: 1))
                try model.compile(from: RandomParameterSource())
                // 2^20 images of 2^12 pixels: 2^32 GEMM rows. The buffers are never read: the
                // batch must be refused first.
                let batch = 1 << 20
                let storage = UnsafeMutablePointer<Float>.allocate(capacity: 1)
                let fake = UnsafeMutableBufferPointer(start: storage, count: batch * 4096)
                try model.predict(UnsafeBufferPointer(fake), batch: batch, into: fake)
                exit(2)
            } catch let error as AnvilError {
                exit(error.code == .invalidInput && error.message.contains("32-bit") ? 0 : 3)
            }
        }
    }

    @Test("A parameter tensor beyond 2^31 - 1 values: an error at compile, before it is requested")
    func parameterBeyondInt32() throws {
        let input = Input(width: 1, height: 1, channels: 1 << 16)
        let model = try Model(input: input, output: input --> Dense(neurons: 1 << 16, name: "huge"))
        let requested = Counter()
        Failure.expect(.invalidShape, mentioning: ["huge_W", "32-bit"]) {
            try model.compile { _, count, _ in
                requested.value += 1
                return ParameterData([Float](repeating: 0, count: min(count, 4)))
            }
        }
        #expect(requested.value == 0)
    }

    @Test("NaN or infinity in an input is not an error; it stays in its own image")
    func nonFiniteInput() throws {
        let model = try Failure.model()
        try model.compile(from: Failure.arraySource)
        let clean = try Failure.input()
        var dirty = clean
        dirty.values[3] = .nan
        dirty.values[5] = .infinity
        let a = try model.predict(clean), b = try model.predict(dirty)
        #expect(b.image(0).contains { !$0.isFinite })
        #expect(b.image(1).map(\.bitPattern) == a.image(1).map(\.bitPattern), "image 1 was affected by image 0's NaN")
    }
}
