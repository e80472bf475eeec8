import Foundation
import Testing
import Anvil
import AnvilModels
@testable import AnvilTestSupport

/// The same input gives the same bits: run after run, compile after compile, process after
/// process, at a given thread count. Across thread counts and batch sizes results may differ
/// in the last bits (OpenBLAS and Anvil choose different code paths and summation orders);
/// the differences are measured here and bounded. See docs/errors.md, "Determinism".
@Suite("Determinism")
struct DeterminismTests {
    static var weights: URL { Fixtures.repository.appendingPathComponent("Weights/mnist") }

    /// The first `count` MNIST test images (committed fixture), as 0...1 floats.
    static func images(_ count: Int) throws -> [Float] {
        let bytes = try Fixtures.bytes(Fixtures.shared.appendingPathComponent("mnist/images_first256.u8"))
        return bytes.prefix(count * 784).map { Float($0) / 255 }
    }

    static func logitsModel() throws -> Model {
        let model = try MNISTNetwork.deep(probabilities: false)
        try model.compile(from: try DirectoryParameterSource(directory: weights))
        return model
    }

    static func bits(_ values: [Float]) -> [UInt32] { values.map(\.bitPattern) }

    @Test("Same input, same bits: repeated predictions, a fresh compile, a fresh model (MNIST, batches 1, 7, 64)")
    func repeatedRunsInProcess() throws {
        let pixels = try Self.images(64)
        let model = try Self.logitsModel()
        for batch in [1, 7, 64] {
            let input = try Tensor(batch: batch, shape: model.inputShapes[0], values: Array(pixels.prefix(batch * 784)))
            let first = Self.bits(try model.predict(input).values)
            for _ in 0 ..< 3 { #expect(Self.bits(try model.predict(input).values) == first, "batch \(batch), same model") }
            try model.compile(from: try DirectoryParameterSource(directory: Self.weights, loading: .copied))
            #expect(Self.bits(try model.predict(input).values) == first, "batch \(batch), recompiled")
            #expect(Self.bits(try Self.logitsModel().predict(input).values) == first, "batch \(batch), new model")
        }
    }

    @Test("Same input, same bits across processes at 1 and at 2 threads")
    func acrossProcesses() async throws {
        var outputs: [Int: [String]] = [:]
        for threads in [1, 2] {
            for _ in 0 ..< 2 {
                let text = try await Self.childLogits(threads: threads)
                outputs[threads, default: []].append(text)
            }
        }
        for (threads, runs) in outputs.sorted(by: { $0.key < $1.key }) {
            #expect(runs.count == 2 && !runs[0].isEmpty && runs[0] == runs[1], "\(threads) thread(s): two processes disagree")
        }
    }

    @Test("Across thread counts (1 vs 2) and batch sizes: measured differences stay within 1e-5 of the logits")
    func acrossThreadCounts() async throws {
        let one = Self.decode(try await Self.childLogits(threads: 1))
        let two = Self.decode(try await Self.childLogits(threads: 2))
        #expect(one.count == 256 * 10 && two.count == one.count)
        let (absolute, relative) = Self.difference(one, two)
        print("MNIST logits, 256 images, batch 256, 1 vs 2 threads: max |Δ| = \(absolute), max |Δ|/|x| = \(relative), identical: \(one == two)")
        #expect(absolute <= 1e-5)
        func classes(_ logits: [Float]) -> [Int] {
            stride(from: 0, to: logits.count, by: 10).map { start in (0 ..< 10).max { logits[start + $0] < logits[start + $1] }! }
        }
        #expect(classes(one) == classes(two), "a thread count changed a predicted class")

        // Batch 1 (Dense via sgemv) against batch 256 (sgemm), same process and thread count.
        let model = try Self.logitsModel()
        let pixels = try Self.images(256)
        let together = try model.predict(Tensor(batch: 256, shape: model.inputShapes[0], values: pixels)).values
        var alone: [Float] = []
        for image in 0 ..< 256 {
            alone += try model.predict(Tensor(batch: 1, shape: model.inputShapes[0], values: Array(pixels[image * 784 ..< (image + 1) * 784]))).values
        }
        let (batchAbsolute, batchRelative) = Self.difference(together, alone)
        print("MNIST logits, 256 images, batch 256 vs 256 × batch 1: max |Δ| = \(batchAbsolute), max |Δ|/|x| = \(batchRelative)")
        #expect(batchAbsolute <= 1e-4)
        #expect(zip(together, alone).allSatisfy { $0.isFinite && $1.isFinite })
    }

    /// Max absolute and relative difference (relative to max(|a|, |b|, 1e-3)).
    static func difference(_ a: [Float], _ b: [Float]) -> (Float, Float) {
        var absolute: Float = 0, relative: Float = 0
        for (x, y) in zip(a, b) {
            let d = abs(x - y)
            absolute = max(absolute, d)
            relative = max(relative, d / max(abs(x), abs(y), 1e-3))
        }
        return (absolute, relative)
    }

    static func decode(_ text: String) -> [Float] {
        text.split(separator: " ").compactMap { UInt32($0, radix: 16) }.map(Float.init(bitPattern:))
    }

    /// Runs the MNIST logits for 256 images in a child process at `threads` threads and returns
    /// their bit patterns as hexadecimal words.
    static func childLogits(threads: Int) async throws -> String {
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) { [threads = threads as Int] in
            Compute.threadCount = threads
            let model = try Self.logitsModel()
            let output = try model.predict(Tensor(batch: 256, shape: model.inputShapes[0], values: try Self.images(256)))
            print(output.values.map { String($0.bitPattern, radix: 16) }.joined(separator: " "))
            exit(0)
        }
        return String(decoding: result?.standardOutputContent ?? [], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
