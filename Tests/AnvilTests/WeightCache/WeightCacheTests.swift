import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// Weights in a blob file, mapped as a model file maps them (the cache keys only mapped weights).
private struct MappedWeights {
    let directory: URL
    let source: BlobParameterSource
    let tensors: [String: [Float]]

    /// `sizes` tensors of random values written to `weights.bin` in a fresh folder.
    init(_ sizes: [String: Int], seed: UInt64) throws {
        directory = try Fixtures.temporaryDirectory(prefix: "anvil-weight-cache")
        var random = RefRandom(seed: Int(seed))
        let named = sizes.keys.sorted().map { (name: $0, values: random.floats(sizes[$0]!, -0.2, 0.2)) }
        let url = directory.appendingPathComponent("weights.bin")
        let index = try Fixtures.writeBlob(named, to: url)
        self.tensors = Dictionary(uniqueKeysWithValues: named.map { ($0.name, $0.values) })
        source = try BlobParameterSource(url: url, index: index)
    }

    var cacheDirectory: URL { directory.appendingPathComponent("cache") }

    /// The weights of `name`, mapped.
    func data(_ name: String) throws -> ParameterData {
        try source.data(for: ParameterRequest(layer: String(name.dropLast(2)), kind: .weights, count: tensors[name]!.count))
    }
}

/// The bits of filters, for bit-for-bit comparison.
private func bits(_ filters: WinogradFilters) -> [UInt32] {
    (0 ..< filters.count).map { filters.pointer[$0].bitPattern }
}

/// Transformed filters made with and without a cache, for a layer of `inputs` → `outputs`.
private func transform(_ weights: ParameterData, variant: WinogradVariant, inputs: Int, outputs: Int, scale: [Float]? = nil,
                       isa: InstructionSet, cache: WeightCache?) -> WinogradFilters {
    WinogradConvolutionKernel.makeFilters(variant: variant, weights: weights, layout: .pytorch, scale: scale,
                                          inputChannels: inputs, outputChannels: outputs, instructionSet: isa,
                                          cache: cache)
}

@Suite("Weight cache")
struct WeightCacheTests {
    @Test("a second compile maps the filters the first wrote, bit for bit", arguments: WinogradVariant.allCases, refInstructionSets)
    func roundTrip(variant: WinogradVariant, isa: InstructionSet) throws {
        try refRequireSupported(isa)
        let weights = try MappedWeights(["c_W": 21 * 9 * 13], seed: 3)
        defer { try? FileManager.default.removeItem(at: weights.directory) }
        var random = RefRandom(seed: 4)
        let scale = random.floats(21, 0.5, 1.5)
        let cache = WeightCache(directory: weights.cacheDirectory)
        let made = transform(try weights.data("c_W"), variant: variant, inputs: 13, outputs: 21, scale: scale, isa: isa, cache: nil)
        let first = transform(try weights.data("c_W"), variant: variant, inputs: 13, outputs: 21, scale: scale, isa: isa, cache: cache)
        #expect(cache.statistics == WeightCache.Statistics(misses: 1, written: 1))
        let second = transform(try weights.data("c_W"), variant: variant, inputs: 13, outputs: 21, scale: scale, isa: isa, cache: cache)
        #expect(cache.statistics.hits == 1)
        #expect(bits(first) == bits(made) && bits(second) == bits(made))
        // Another scale, variant or body is another entry, not this one.
        _ = transform(try weights.data("c_W"), variant: variant, inputs: 13, outputs: 21, scale: nil, isa: isa, cache: cache)
        #expect(cache.statistics.hits == 1 && cache.statistics.misses == 2)
    }

    @Test("a whole model compiled from a model file's blob: the second compile hits, same outputs")
    func model() throws {
        let weights = try MappedWeights(["c1_W": 32 * 9 * 16, "c1_b": 32, "c2_W": 24 * 9 * 32, "c2_b": 24], seed: 9)
        defer { try? FileManager.default.removeItem(at: weights.directory) }
        let shape = Shape(height: 20, width: 20, channels: 16)
        func build() throws -> Model {
            let input = Input(shape: shape)
            return try Model(input: input, output: input
                --> Convolution(kernel: (3, 3), channels: 32, activation: .relu, name: "c1")
                --> Convolution(kernel: (3, 3), channels: 24, name: "c2"))
        }
        var random = RefRandom(seed: 10)
        let image = try Tensor(batch: 2, shape: shape, values: random.floats(2 * shape.count))
        let plain = try build()
        try plain.compile(layout: .pytorch, from: ArrayParameterSource(weights.tensors))
        let expected = try plain.predict(image).values

        let cache = WeightCache(directory: weights.cacheDirectory)
        let first = try build()
        try first.compile(layout: .pytorch, weightCache: cache, from: weights.source)
        let written = cache.statistics.written
        let second = try build()
        try second.compile(layout: .pytorch, weightCache: cache, from: weights.source)
        #expect(try first.predict(image).values == expected)
        #expect(try second.predict(image).values == expected)
        // As many entries as layers the selection gives Winograd (the first at least, unless
        // ANVIL_CONVOLUTION forces another algorithm).
        if ConvolutionOverride.current == .auto {
            let winograd = try [(16, 32), (32, 24)].filter { inputs, outputs in
                let geometry = try WindowGeometry(input: Shape(height: 20, width: 20, channels: inputs), kernel: (3, 3),
                                                  stride: (1, 1), dilation: (1, 1), padding: .same)
                return ConvolutionSelection.algorithm(geometry: geometry, inputChannels: inputs, outputChannels: outputs,
                                                      groups: 1).winogradVariant != nil
            }.count
            #expect(winograd >= 1)
            #expect(written == winograd && cache.statistics.hits == winograd, "written \(written), \(cache.statistics)")
        }
    }

    @Test("a stale, truncated or foreign entry is refused and replaced")
    func damagedEntries() throws {
        let weights = try MappedWeights(["c_W": 16 * 9 * 8], seed: 11)
        defer { try? FileManager.default.removeItem(at: weights.directory) }
        let isa = InstructionSet.current
        let cache = WeightCache(directory: weights.cacheDirectory)
        let made = bits(transform(try weights.data("c_W"), variant: .f4x4, inputs: 8, outputs: 16, isa: isa, cache: cache))
        let files = try FileManager.default.contentsOfDirectory(atPath: weights.cacheDirectory.path)
        #expect(files.count == 1 && files[0].hasSuffix(".anvilweights"))
        let url = weights.cacheDirectory.appendingPathComponent(files[0])
        let original = try Data(contentsOf: url)

        // Values from a different transform (every value one step off, as another build's
        // rounding would be): the sample differs, the entry is made again.
        var stale = original
        let start = original.count - made.count * 4
        stale.withUnsafeMutableBytes { bytes in
            let floats = bytes.baseAddress!.advanced(by: start).assumingMemoryBound(to: UInt32.self)
            for i in 0 ..< made.count { floats[i] = floats[i] ^ 1 }
        }
        try stale.write(to: url)
        var filters = transform(try weights.data("c_W"), variant: .f4x4, inputs: 8, outputs: 16, isa: isa, cache: cache)
        #expect(bits(filters) == made)
        #expect(cache.statistics.rejected == 1 && cache.statistics.written == 2)
        #expect(try Data(contentsOf: url) == original, "the refused entry is rewritten")

        // Truncated, and not an entry at all.
        for damaged in [original.prefix(original.count - 4), Data("not a cache entry".utf8)] {
            try damaged.write(to: url)
            filters = transform(try weights.data("c_W"), variant: .f4x4, inputs: 8, outputs: 16, isa: isa, cache: cache)
            #expect(bits(filters) == made)
        }
        #expect(cache.statistics.rejected == 3 && cache.statistics.hits == 0)
        filters = transform(try weights.data("c_W"), variant: .f4x4, inputs: 8, outputs: 16, isa: isa, cache: cache)
        #expect(cache.statistics.hits == 1 && bits(filters) == made)
    }

    @Test("rewritten weights are never served from the old entry")
    func rewrittenWeights() throws {
        let weights = try MappedWeights(["c_W": 16 * 9 * 8], seed: 12)
        defer { try? FileManager.default.removeItem(at: weights.directory) }
        let cache = WeightCache(directory: weights.cacheDirectory)
        _ = transform(try weights.data("c_W"), variant: .f2x2, inputs: 8, outputs: 16, isa: .current, cache: cache)
        // New values in the same file (same size), mapped again.
        let url = weights.directory.appendingPathComponent("weights.bin")
        var random = RefRandom(seed: 13)
        let values = random.floats(16 * 9 * 8, -0.2, 0.2)
        try values.withUnsafeBytes { try Data($0).write(to: url) }
        let source = try BlobParameterSource(url: url, index: ["c_W": .init(offset: 0, count: values.count)])
        let data = try source.data(for: ParameterRequest(layer: "c", kind: .weights, count: values.count))
        let fresh = transform(ParameterData(values), variant: .f2x2, inputs: 8, outputs: 16, isa: .current, cache: nil)
        let served = transform(data, variant: .f2x2, inputs: 8, outputs: 16, isa: .current, cache: cache)
        #expect(bits(served) == bits(fresh))
        #expect(cache.statistics.hits == 0)
    }

    @Test("weights in memory are not cached; a folder that cannot be written only means no cache")
    func notCached() throws {
        let weights = try MappedWeights(["c_W": 16 * 9 * 8], seed: 14)
        defer { try? FileManager.default.removeItem(at: weights.directory) }
        let inMemory = WeightCache(directory: weights.cacheDirectory)
        _ = transform(ParameterData(weights.tensors["c_W"]!), variant: .f4x4, inputs: 8, outputs: 16, isa: .current, cache: inMemory)
        #expect(inMemory.statistics == WeightCache.Statistics())
        #expect(!FileManager.default.fileExists(atPath: weights.cacheDirectory.path))

        // A regular file where the folder should be.
        let blocked = weights.directory.appendingPathComponent("blocked")
        try Data("file".utf8).write(to: blocked)
        let unwritable = WeightCache(directory: blocked.appendingPathComponent("cache"))
        let made = transform(try weights.data("c_W"), variant: .f4x4, inputs: 8, outputs: 16, isa: .current, cache: unwritable)
        let expected = transform(ParameterData(weights.tensors["c_W"]!), variant: .f4x4, inputs: 8, outputs: 16, isa: .current, cache: nil)
        #expect(bits(made) == bits(expected))
        #expect(unwritable.statistics.writeFailures == 1 && unwritable.statistics.written == 0)
    }
}
