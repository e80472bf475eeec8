import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// One compiled model, many threads: every prediction is bit-identical to the serial answer for
/// the same input, whatever runs beside it — other predictions of other batch sizes, failed
/// recompiles, successful recompiles.
@Suite("Concurrency")
struct ConcurrencyTests {
    /// A small conv net touching the main kernels: conv (GEMM), depthwise, pooling, dense
    /// (sgemv at batch 1, sgemm above), softmax.
    static func model() throws -> Model {
        let input = Input(width: 10, height: 10, channels: 3)
        let output = input
            --> Convolution(kernel: (3, 3), channels: 8, activation: .relu, name: "conv1")
            --> DepthwiseConvolution(kernel: (3, 3), activation: .relu6, name: "dw")
            --> MaxPooling(kernel: (2, 2), name: "pool")
            --> Convolution(kernel: (3, 3), channels: 8, padding: .valid, name: "conv2")
            --> BatchNormalization(name: "bn") --> Activation(.relu)
            --> Dense(neurons: 6, name: "fc")
            --> Softmax()
        return try Model(input: input, output: output)
    }

    /// 48 different inputs, batch sizes 1 to 4.
    static let inputs: [Tensor] = (0 ..< 48).map { i in
        let batch = 1 + i % 4
        var state = UInt32(i * 2654435761 % 4294967291 + 1)
        let values = (0 ..< batch * 300).map { _ -> Float in
            state ^= state << 13; state ^= state >> 17; state ^= state << 5
            return Float(state % 2000) / 1000 - 1
        }
        return try! Tensor(batch: batch, shape: Shape(height: 10, width: 10, channels: 3), values: values)
    }

    static func bits(_ tensor: Tensor) -> [UInt32] { tensor.values.map(\.bitPattern) }

    @Test("8 threads × 1,000 predictions (batches 1-4) on one model: all bit-identical to the serial results")
    func manyThreadsOneModel() throws {
        let model = try Self.model()
        try model.compile(from: RandomParameterSource(seed: 7))
        let serial = try Self.inputs.map { Self.bits(try model.predict($0)) }
        // The serial answers are themselves stable.
        #expect(try Self.inputs.map { Self.bits(try model.predict($0)) } == serial)

        let mismatches = Atomic<Int>(0)
        let errors = Mutex<[String]>([])
        let threads = 8, iterations = 1_000
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for k in 0 ..< iterations {
                let index = (thread * 131 + k * 7) % Self.inputs.count
                do {
                    if Self.bits(try model.predict(Self.inputs[index])) != serial[index] {
                        mismatches.add(1, ordering: .relaxed)
                    }
                } catch {
                    errors.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(mismatches.load(ordering: .relaxed) == 0, "predictions differing from the serial result")
        #expect(errors.withLock { $0 }.isEmpty, "\(errors.withLock { $0.prefix(3) })")
    }

    @Test("An open input size: 6 threads predicting at 5 sizes (3 cached, so sizes are built and dropped meanwhile), all bit-identical to the serial results")
    func openSizesConcurrently() throws {
        func build() throws -> Model {
            let input = Input(channels: 3)
            let output = input
                --> Convolution(kernel: (3, 3), channels: 8, activation: .relu, name: "conv1")
                --> DepthwiseConvolution(kernel: (3, 3), stride: (2, 2), activation: .relu6, name: "dw")
                --> Convolution(kernel: (3, 3), channels: 8, name: "conv2")
                --> BatchNormalization(name: "bn") --> Activation(.relu)
                --> MaxPooling(kernel: (2, 2), padding: .same, name: "pool")
            return try Model(input: input, output: output)
        }
        let sizes = [(5, 9), (8, 8), (13, 6), (4, 4), (16, 11)]
        let inputs: [Tensor] = (0 ..< 20).map { i in
            var rng = RefRandom(seed: 40 + i)
            let (h, w) = sizes[i % sizes.count]
            return try! rng.tensor(n: 1 + i % 3, h: h, w: w, c: 3).tensor()
        }
        let serialModel = try build()
        try serialModel.compile(from: RandomParameterSource(seed: 11))
        let serial = try inputs.map { Self.bits(try serialModel.predict($0)) }
        let model = try build()
        try model.compile(cachedSizes: 3, from: RandomParameterSource(seed: 11))
        let mismatches = Atomic<Int>(0)
        let errors = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 6) { thread in
            for k in 0 ..< 150 {
                let index = (thread * 7 + k * 3) % inputs.count
                do {
                    if Self.bits(try model.predict(inputs[index])) != serial[index] { mismatches.add(1, ordering: .relaxed) }
                } catch {
                    errors.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(mismatches.load(ordering: .relaxed) == 0, "predictions differing from the serial result")
        #expect(errors.withLock { $0 }.isEmpty, "\(errors.withLock { $0.prefix(3) })")
        #expect(model.cachedInputShapes.count == 3)
    }

    @Test("The allocation-free API from 8 threads, each with its own output buffer")
    func unsafeAPIConcurrently() throws {
        let model = try Self.model()
        try model.compile(from: RandomParameterSource(seed: 8))
        let serial = try Self.inputs.map { Self.bits(try model.predict($0)) }
        let mismatches = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            var output = [Float](repeating: 0, count: 4 * 6)
            for k in 0 ..< 250 {
                let index = (thread * 17 + k * 5) % Self.inputs.count
                let input = Self.inputs[index]
                let ok: Bool = input.values.withUnsafeBufferPointer { source in
                    output.withUnsafeMutableBufferPointer { all in
                        let out = UnsafeMutableBufferPointer(rebasing: all[0 ..< input.batch * 6])
                        guard (try? model.predict(source, batch: input.batch, into: out)) != nil else { return false }
                        return out.map(\.bitPattern) == serial[index]
                    }
                }
                if !ok { mismatches.add(1, ordering: .relaxed) }
            }
        }
        #expect(mismatches.load(ordering: .relaxed) == 0)
    }

    @Test("Recompiles during predictions: failed ones change nothing, successful ones switch atomically")
    func recompileWhilePredicting() throws {
        let model = try Self.model()
        let weightsA = RandomParameterSource(seed: 1), weightsB = RandomParameterSource(seed: 2)
        try model.compile(from: weightsB)
        let answersB = try Self.inputs.map { Self.bits(try model.predict($0)) }
        try model.compile(from: weightsA)
        let answersA = try Self.inputs.map { Self.bits(try model.predict($0)) }
        #expect(answersA != answersB)

        // Phase 1: only failing recompiles (a missing tensor) while four threads predict: always A.
        // Phase 2: recompiles alternating A and B: every answer is all-A or all-B, never a mix.
        for phase in 1 ... 2 {
            let stop = Atomic<Bool>(false)
            let wrong = Atomic<Int>(0), done = Atomic<Int>(0)
            let group = DispatchGroup()
            for thread in 0 ..< 4 {
                DispatchQueue.global().async(group: group) {
                    var k = thread
                    while !stop.load(ordering: .relaxed) || done.load(ordering: .relaxed) < 400 {
                        let index = k % Self.inputs.count
                        k += 3
                        guard let bits = try? Self.bits(model.predict(Self.inputs[index])) else {
                            wrong.add(1, ordering: .relaxed)
                            continue
                        }
                        let ok = phase == 1 ? bits == answersA[index] : (bits == answersA[index] || bits == answersB[index])
                        if !ok { wrong.add(1, ordering: .relaxed) }
                        done.add(1, ordering: .relaxed)
                    }
                }
            }
            for attempt in 0 ..< 40 {
                if phase == 1 {
                    #expect(throws: AnvilError.self) {
                        try model.compile { name, count, kind in
                            if name == "fc" && kind == .biases { throw AnvilError(.missingParameter, "gone") }
                            return try RandomParameterSource(seed: 3).data(for: ParameterRequest(layer: name, kind: kind, count: count))
                        }
                    }
                } else {
                    try model.compile(from: attempt % 2 == 0 ? weightsB : weightsA)
                }
            }
            stop.store(true, ordering: .relaxed)
            group.wait()
            #expect(wrong.load(ordering: .relaxed) == 0, "phase \(phase): answers that were neither the old nor the new weights'")
            #expect(model.isCompiled)
        }
    }

    @Test("Compute.threadCount changed over and over while 4 threads predict: every answer within 1e-5 of the serial one")
    func threadCountChangesWhilePredicting() async throws {
        // In a child process, so the tests running beside this one keep their thread count (a
        // different count may change the last bits). A data race on the count shows up under
        // ThreadSanitizer (whose exit status then fails the child) and as a wrong answer.
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            func fail(_ message: String) -> Never {
                FileHandle.standardError.write(Data((message + "\n").utf8))
                exit(1)
            }
            let model = try ConcurrencyTests.model()
            try model.compile(from: RandomParameterSource(seed: 9))
            Compute.threadCount = 0
            guard Compute.threadCount == 1 else { fail("threadCount 0 reads back as \(Compute.threadCount), not 1") }
            let serial = try ConcurrencyTests.inputs.map { try model.predict($0).values }
            Compute.threadCount = .max
            let most = Compute.threadCount
            guard most >= 1 else { fail("threadCount .max reads back as \(most)") }

            let stop = Atomic<Bool>(false)
            let done = Atomic<Int>(0), wrong = Atomic<Int>(0)
            let group = DispatchGroup()
            for thread in 0 ..< 4 {
                DispatchQueue.global().async(group: group) {
                    var k = thread
                    while !stop.load(ordering: .relaxed) || done.load(ordering: .relaxed) < 400 {
                        let index = k % ConcurrencyTests.inputs.count
                        k += 5
                        let values = (try? model.predict(ConcurrencyTests.inputs[index]).values) ?? []
                        let close = values.count == serial[index].count
                            && zip(values, serial[index]).allSatisfy { abs($0 - $1) <= 1e-5 }
                        if !close { wrong.add(1, ordering: .relaxed) }
                        done.add(1, ordering: .relaxed)
                    }
                }
            }
            // Every count from 1 to the most, again and again, for as long as predictions run.
            var toggles = 0
            while toggles < 400 || done.load(ordering: .relaxed) < 200 {
                Compute.threadCount = 1 + toggles % most
                let read = Compute.threadCount
                if read < 1 || read > most { wrong.add(1, ordering: .relaxed) }
                toggles += 1
                usleep(100)
            }
            stop.store(true, ordering: .relaxed)
            group.wait()
            guard wrong.load(ordering: .relaxed) == 0 else {
                fail("\(wrong.load(ordering: .relaxed)) of \(done.load(ordering: .relaxed)) answers were wrong")
            }
            exit(0)
        }
        // The child's own reports (a sanitizer's included) reach this process's log.
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        if !errors.isEmpty { print(errors) }
    }

    @Test("Several models predicting at once do not disturb each other")
    func severalModels() throws {
        let models = try (0 ..< 4).map { seed -> Model in
            let model = try Self.model()
            try model.compile(from: RandomParameterSource(seed: UInt64(seed)))
            return model
        }
        let serial = try models.map { model in try Self.inputs.map { Self.bits(try model.predict($0)) } }
        let mismatches = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for k in 0 ..< 200 {
                let m = (thread + k) % models.count, index = (thread * 5 + k * 3) % Self.inputs.count
                if (try? Self.bits(models[m].predict(Self.inputs[index]))) != serial[m][index] { mismatches.add(1, ordering: .relaxed) }
            }
        }
        #expect(mismatches.load(ordering: .relaxed) == 0)
    }
}
