import Foundation

/// libFuzzer target: the blob parameter source. The input holds a blob file and then either
/// a binary index (checked directly against `BlobParameterSource`) or the JSON `tensors`
/// object of a model file (loaded, compiled and run through `ModelFile`).
///
/// Layout: `[mode] [length high] [length low] [blob bytes ...] [index ...]`; mode bit 0 picks
/// JSON, bit 1 copied loading, bit 2 `validateParameters`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let mode = input.byte()
    let length = Int(input.byte()) << 8 | Int(input.byte())
    let blob = (0 ..< min(length, 4096)).map { _ in input.byte() }
    let url = FuzzScratch.directory.appendingPathComponent("blob.bin")
    do {
        try Data(blob).write(to: url)
    } catch {
        fuzzFailure("cannot write the scratch blob: \(error)")
    }
    let loading: ParameterLoading = mode & 2 == 0 ? .memoryMapped : .copied
    if mode & 1 == 0 {
        binaryIndex(&input, blob: blob, url: url, loading: loading)
    } else {
        jsonIndex(input.remaining, loading: loading, validate: mode & 4 != 0)
    }
    return 0
}

/// Up to eight entries with fuzzed offsets and counts: either every entry is inside the file,
/// aligned and disjoint and each reads back exactly its bytes, or the source refuses the index.
private func binaryIndex(_ input: inout FuzzInput, blob: [UInt8], url: URL, loading: ParameterLoading) {
    let names = ["c_W", "c_b", "d_W", "d_b", "x_gamma", "y_slopes", "z_W", "w_b"]
    var index: [String: BlobParameterSource.Entry] = [:]
    for _ in 0 ..< input.choose(9) {
        let name = names[input.choose(names.count)]
        let offset = input.bool() ? input.size(0, blob.count + 8) : input.int64()
        let count = input.bool() ? input.size(0, blob.count / 4 + 2) : input.int64()
        index[name] = BlobParameterSource.Entry(offset: offset, count: count)
    }
    let source: BlobParameterSource
    do {
        source = try BlobParameterSource(url: url, index: index, loading: loading)
    } catch let error as AnvilError {
        fuzzLog("refused: \(error)")
        // Refused: some entry must really be bad.
        if validIndex(index, fileSize: blob.count) { fuzzFailure("a valid index was refused: \(index): \(error)") }
        return
    } catch {
        fuzzFailure("BlobParameterSource threw a non-Anvil error: \(error)")
    }
    guard validIndex(index, fileSize: blob.count) else { fuzzFailure("an invalid index was accepted: \(index), \(blob.count) bytes") }
    for (name, entry) in index {
        let split = name.split(separator: "_")
        let kind = ParameterKind.allCases.first { $0.suffix == split[1] }!
        let request = ParameterRequest(layer: String(split[0]), kind: kind, count: entry.count)
        do {
            let values = try source.data(for: request)
            guard values.count == entry.count else { fuzzFailure("\(name): \(values.count) values, indexed \(entry.count)") }
            for i in 0 ..< entry.count {
                let o = entry.offset + 4 * i
                let expected = UInt32(blob[o]) | UInt32(blob[o + 1]) << 8 | UInt32(blob[o + 2]) << 16 | UInt32(blob[o + 3]) << 24
                if values.buffer[i].bitPattern != expected { fuzzFailure("\(name)[\(i)] does not hold the file's bytes") }
            }
            // Asking for another count is an error, never a read past the entry.
            _ = try? source.data(for: ParameterRequest(layer: request.layer, kind: kind, count: entry.count + 1))
        } catch {
            fuzzFailure("an accepted entry cannot be read: \(error)")
        }
    }
}

/// The rules the source enforces, restated independently.
private func validIndex(_ index: [String: BlobParameterSource.Entry], fileSize: Int) -> Bool {
    var ranges: [(Int, Int)] = []
    for entry in index.values {
        guard entry.offset >= 0, entry.count >= 0, entry.offset % 4 == 0, entry.offset <= fileSize,
              entry.count <= (fileSize - entry.offset) / 4 else { return false }
        if entry.count > 0 { ranges.append((entry.offset, entry.offset + 4 * entry.count)) }
    }
    ranges.sort { $0.0 < $1.0 }
    return zip(ranges, ranges.dropFirst()).allSatisfy { $0.1 <= $1.0 }
}

/// The fuzzed bytes as the `tensors` object of a fixed two-layer model's blob source.
private func jsonIndex(_ bytes: [UInt8], loading: ParameterLoading, validate: Bool) {
    let tensors: JSONValue
    do {
        tensors = try JSONValue.parse(Data(bytes), source: "tensors")
    } catch is AnvilError {
        return
    } catch {
        fuzzFailure("JSONValue.parse threw a non-Anvil error: \(error)")
    }
    let document: JSONValue = .object([
        ("format", .string("anvil.model")), ("version", .int(1)),
        ("inputs", .array([.object([("name", .string("i")), ("shape", .array([.int(2), .int(2), .int(1)]))])])),
        ("layers", .array([
            .object([("name", .string("c")), ("type", .string("Convolution")), ("inputs", .array([.string("i")])),
                     ("kernel", .array([.int(1), .int(1)])), ("channels", .int(2))]),
            .object([("name", .string("d")), ("type", .string("Dense")), ("inputs", .array([.string("c")])), ("neurons", .int(3))]),
        ])),
        ("outputs", .array([.string("d")])),
        ("parameters", .object([("source", .object([("type", .string("blob")), ("path", .string("blob.bin")), ("tensors", tensors)]))])),
    ])
    do {
        let file = try ModelFile(json: document, source: "fuzz.json", directory: FuzzScratch.directory, loading: loading)
        let model = try file.compiledModel(validateParameters: validate)
        let output = try model.predict(try Tensor(batch: 2, shape: model.inputShapes[0], values: [1, 2, 3, 4, -1, -2, -3, -4]))
        guard output.batch == 2, output.values.count == 6 else { fuzzFailure("wrong output \(output)") }
        if validate, !output.values.allSatisfy(\.isFinite) {
            // Finite weights and inputs can still overflow to infinity; NaN from finite values cannot
            // come out of a convolution and a dense layer unless ∞ - ∞ happened, so accept both.
            fuzzLog("validated weights gave non-finite outputs (overflow): \(output.values)")
        }
        fuzzLog("ran: \(output.values)")
    } catch let error as AnvilError {
        fuzzLog("refused: \(error)")
    } catch {
        fuzzFailure("ModelFile threw a non-Anvil error: \(error)")
    }
}
