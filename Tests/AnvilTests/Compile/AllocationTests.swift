import CAllocationCounter
import Foundation
import Testing
@testable import Anvil
import AnvilModels
@testable import AnvilTestSupport

/// After the first call with a given batch size, `predict(_:batch:into:)` allocates nothing —
/// counted by interposing malloc in a child process, so other tests do not interfere.
@Suite struct AllocationTests {
    @Test(arguments: [1, 3, 64])
    func warmPredictionAllocatesNothing(batch: Int) async {
        guard anvil_allocation_counting_enabled() == 1 else {
            print("skipped: allocations are not counted under a sanitizer")
            return
        }
        // The child exits with the number of allocations (capped), so a failure shows the count.
        await #expect(processExitsWith: .success) { [batch] in
            let model = try MNISTNetwork.deep()
            try model.compile(from: RandomParameterSource(seed: 3))
            let input = [Float](repeating: 0.5, count: batch * 784)
            var output = [Float](repeating: 0, count: batch * 10)
            func predict() throws {
                try input.withUnsafeBufferPointer { source in
                    try output.withUnsafeMutableBufferPointer { try model.predict(source, batch: batch, into: $0) }
                }
            }
            try predict()  // the first call at this batch size allocates its workspace
            let before = anvil_allocation_count()
            for _ in 0 ..< 20 { try predict() }
            let allocations = anvil_allocation_count() - before
            exit(allocations == 0 ? 0 : Int32(min(allocations, 200)))
        }
    }

    /// The same for a batch whose first steps run a few images at a time (``BatchPasses``): each
    /// pass's copies and kernel arguments are made with the workspace.
    @Test func warmPredictionInPassesAllocatesNothing() async {
        guard anvil_allocation_counting_enabled() == 1 else { return }
        await #expect(processExitsWith: .success) {
            let model = try MNISTNetwork.deep()
            try model.compile(from: RandomParameterSource(seed: 3))
            let batch = 5
            let input = [Float](repeating: 0.5, count: batch * 784)
            var output = [Float](repeating: 0, count: batch * 10)
            // Two images of the largest step, the first pooling (28 × 28 × 32 in, 14 × 14 × 32 out),
            // fit: passes of 2, 2 and 1.
            try BatchPasses.$budgetOverride.withValue(2 * (28 * 28 * 32 + 14 * 14 * 32) * 4) {
                guard try model.batchPasses(batch: batch)?.size == 2 else { exit(255) }
                func predict() throws {
                    try input.withUnsafeBufferPointer { source in
                        try output.withUnsafeMutableBufferPointer { try model.predict(source, batch: batch, into: $0) }
                    }
                }
                try predict()
                let before = anvil_allocation_count()
                for _ in 0 ..< 20 { try predict() }
                let allocations = anvil_allocation_count() - before
                exit(allocations == 0 ? 0 : Int32(min(allocations, 200)))
            }
        }
    }

    /// The same for fused residual connections: the direct kernel's in-register add and the
    /// wrapper around the Winograd kernels.
    @Test func warmResidualPredictionAllocatesNothing() async {
        guard anvil_allocation_counting_enabled() == 1 else { return }
        await #expect(processExitsWith: .success) {
            let input = Input(width: 14, height: 14, channels: 32)
            let a = [input --> PointwiseConvolution(channels: 32), input] --> Add(activation: .relu)
            let b = [a --> Convolution(kernel: (3, 3), channels: 32), a] --> Add(activation: .relu)
            let c = [b --> Convolution(kernel: (5, 5), channels: 32), b] --> Add()
            let model = try Model(input: input, output: c)
            try model.compile(from: RandomParameterSource(seed: 4))
            let values = [Float](repeating: 0.25, count: 2 * 14 * 14 * 32)
            var output = [Float](repeating: 0, count: values.count)
            func predict() throws {
                try values.withUnsafeBufferPointer { source in
                    try output.withUnsafeMutableBufferPointer { try model.predict(source, batch: 2, into: $0) }
                }
            }
            try predict()
            let before = anvil_allocation_count()
            for _ in 0 ..< 10 { try predict() }
            let allocations = anvil_allocation_count() - before
            exit(allocations == 0 ? 0 : Int32(min(allocations, 200)))
        }
    }

    /// An open input size: after the first call at each of two sizes, alternating between them
    /// allocates nothing (the per-size plans are looked up, not rebuilt).
    @Test func warmPredictionAtTwoOpenSizesAllocatesNothing() async {
        guard anvil_allocation_counting_enabled() == 1 else { return }
        await #expect(processExitsWith: .success) {
            let input = Input(channels: 3)
            let output = input
                --> Convolution(kernel: (3, 3), channels: 16, activation: .relu)
                --> DepthwiseConvolution(kernel: (3, 3), stride: (2, 2))
                --> Convolution(kernel: (3, 3), channels: 16)
                --> MaxPooling(kernel: (2, 2)) --> Convolution(kernel: (5, 5), channels: 8)
            let model = try Model(input: input, output: output)
            try model.compile(from: RandomParameterSource(seed: 6))
            let shapes = [Shape(height: 20, width: 24, channels: 3), Shape(height: 33, width: 17, channels: 3)]
            let outputs = try shapes.map { try model.outputShapes(forInputShapes: [$0])[0] }
            let values = [Float](repeating: 0.5, count: 2 * 33 * 24 * 3)
            var result = [Float](repeating: 0, count: 2 * outputs.map(\.count).max()!)
            func predict(_ index: Int) throws {
                try values.withUnsafeBufferPointer { all in
                    try result.withUnsafeMutableBufferPointer { out in
                        try model.predict(UnsafeBufferPointer(rebasing: all[0 ..< 2 * shapes[index].count]), shape: shapes[index],
                                          batch: 2, into: UnsafeMutableBufferPointer(rebasing: out[0 ..< 2 * outputs[index].count]))
                    }
                }
            }
            try predict(0); try predict(1)  // each size builds its plan, kernels and workspace once
            let before = anvil_allocation_count()
            for k in 0 ..< 20 { try predict(k % 2) }
            let allocations = anvil_allocation_count() - before
            exit(allocations == 0 ? 0 : Int32(min(allocations, 200)))
        }
    }

    /// The same for element-wise layers and the C activations: a squeeze-and-excitation gate
    /// (broadcast multiply with a fused activation), a gate multiplied inside the convolution
    /// computing it (``GatedKernel``), a zero Pad folded into a depthwise convolution, a constant
    /// operand, an N-ary mean, GELU.
    @Test func warmElementwisePredictionAllocatesNothing() async {
        guard anvil_allocation_counting_enabled() == 1 else { return }
        await #expect(processExitsWith: .success) {
            let input = Input(width: 14, height: 14, channels: 32)
            let x = input --> PointwiseConvolution(channels: 32, activation: .silu)
            let gate = x --> GlobalAveragePooling() --> Activation(.sigmoid)
            let se = [x, gate] --> Elementwise(.multiply) --> Activation(.gelu)
            let gate2 = se --> GlobalAveragePooling()
                --> Convolution(kernel: (1, 1), channels: 32, padding: .valid, activation: .sigmoid)
            let gated = [se, gate2] --> Elementwise(.multiply) --> Pad(top: 1, left: 1, bottom: 1, right: 1)
                --> DepthwiseConvolution(kernel: (3, 3), padding: .valid)
            let scaled = gated --> Elementwise(.multiply, constant: .vector(32))
            let output = [scaled, x, input] --> Elementwise(.mean, activation: .mish)
            let model = try Model(input: input, output: output)
            try model.compile(from: RandomParameterSource(seed: 5))
            let values = [Float](repeating: 0.25, count: 2 * 14 * 14 * 32)
            var result = [Float](repeating: 0, count: values.count)
            func predict() throws {
                try values.withUnsafeBufferPointer { source in
                    try result.withUnsafeMutableBufferPointer { try model.predict(source, batch: 2, into: $0) }
                }
            }
            try predict()
            let before = anvil_allocation_count()
            for _ in 0 ..< 10 { try predict() }
            let allocations = anvil_allocation_count() - before
            exit(allocations == 0 ? 0 : Int32(min(allocations, 200)))
        }
    }

    /// The counter itself works (a test that can fail).
    @Test func counterCountsAllocations() {
        guard anvil_allocation_counting_enabled() == 1 else { return }
        let before = anvil_allocation_count()
        let array = [Int](repeating: 1, count: 1000)
        #expect(anvil_allocation_count() > before)
        #expect(array.count == 1000)
    }
}
