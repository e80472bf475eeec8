import Anvil
import Foundation

/// Reads the values of an ONNX `TensorProto` (an initializer, a Constant's value, a test vector):
/// `raw_data` (little-endian), the typed `*_data` fields, or external data in a file next to the
/// model (mapped, offsets checked). NumPy's `numpy_helper.to_array` for the types Anvil uses.
struct TensorDecoding {
    /// The folder of the model file (external data paths are relative to it), or nil.
    let directory: URL?
    /// Mapped external-data files by path, opened once each.
    private let files = MappedFiles()

    /// Holds the mapped external-data files.
    final class MappedFiles {
        /// The files opened so far.
        var byPath: [String: MappedFile] = [:]
    }

    /// A decoder resolving external data against `directory`.
    init(directory: URL?) {
        self.directory = directory
    }

    /// ONNX element types read as floats.
    static let floatTypes: Set<Int32> = [1, 10, 11, 16]

    /// The engine's element type for a tensor of ONNX data type `type` computed at `predict`:
    /// float32 for the float types (Anvil computes them in float32), the integer and truth types
    /// themselves; nil for the others (strings, complex, 8-bit and 4-bit floats).
    static func engineType(_ type: Int32) -> ElementType? {
        switch type {
        case 1, 10, 11, 16: .float32
        case 2: .uint8
        case 3: .int8
        case 4: .uint16
        case 5: .int16
        case 6: .int32
        case 7: .int64
        case 9: .bool
        case 12: .uint32
        case 13: .uint64
        default: nil
        }
    }

    /// The byte size of one element of ONNX data type `type`, or nil for types Anvil does not read.
    static func elementSize(_ type: Int32) -> Int? {
        switch type {
        case 1, 6, 12: return 4        // float, int32, uint32
        case 2, 3, 9: return 1         // uint8, int8, bool
        case 4, 5, 10, 16: return 2    // uint16, int16, float16, bfloat16
        case 7, 11, 13: return 8       // int64, double, uint64
        default: return nil
        }
    }

    /// The lower-case name of an ONNX data type.
    static func typeName(_ type: Int32) -> String {
        let names: [Int32: String] = [0: "undefined", 1: "float", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32",
                                      7: "int64", 8: "string", 9: "bool", 10: "float16", 11: "double", 12: "uint32", 13: "uint64",
                                      14: "complex64", 15: "complex128", 16: "bfloat16", 17: "float8e4m3fn", 18: "float8e4m3fnuz",
                                      19: "float8e5m2", 20: "float8e5m2fnuz", 21: "uint4", 22: "int4", 23: "float4e2m1", 24: "float8e8m0",
                                      25: "uint2", 26: "int2"]
        return names[type] ?? "type \(type)"
    }

    /// The tensor's values; `what` names it in errors ("initializer 'conv1.weight'"). `rawData`,
    /// when given, is the tensor's `raw_data` read in place (``ONNXInitializers``), with what
    /// gives its decoded pages back.
    func constant(_ tensor: Onnx_TensorProto, what: String, rawData: InPlaceBytes? = nil) throws -> ConstantTensor {
        let shape = try tensor.dims.map { dim -> Int in
            guard dim >= 0, dim <= Int64(Int32.max) else { throw ImportFailure("\(what) has dimension \(dim) in its shape \(tensor.dims)") }
            return Int(dim)
        }
        let count: Int
        do { count = try ConstantTensor.elementCount(shape) } catch { throw ImportFailure("\(what): \(error)") }
        let type = tensor.dataType
        guard let size = Self.elementSize(type) else {
            throw ImportFailure("\(what) holds \(Self.typeName(type)) values, which Anvil does not read")
        }
        if tensor.hasDataLocation, tensor.dataLocation == .external {
            let (file, bytes) = try externalBytes(tensor, count: count, size: size, what: what)
            // Decoded stretches of the file need not stay resident.
            let constant = try Self.fromRaw(bytes, type: type, shape: shape, consumed: file.releasePages)
            file.releasePages(bytes)  // the pages a stretch's edges shared
            return constant
        }
        func fromRawData(_ bytes: UnsafeRawBufferPointer, consumed: ((UnsafeRawBufferPointer) -> Void)?) throws -> ConstantTensor {
            guard bytes.count == count * size else {
                throw ImportFailure("\(what) has \(bytes.count) bytes of raw_data for shape \(shape) of \(Self.typeName(type)) (\(count * size) expected)")
            }
            return try Self.fromRaw(bytes, type: type, shape: shape, consumed: consumed)
        }
        if let rawData { return try fromRawData(rawData.bytes, consumed: rawData.release) }
        if tensor.hasRawData { return try tensor.rawData.withUnsafeBytes { try fromRawData($0, consumed: nil) } }
        func check(_ found: Int, _ field: String) throws {
            guard found == count else { throw ImportFailure("\(what) has \(found) values in \(field) for shape \(shape) (\(count) expected)") }
        }
        switch type {
        case 1:
            try check(tensor.floatData.count, "float_data")
            return ConstantTensor(shape: shape, floats: tensor.floatData)
        case 11:
            try check(tensor.doubleData.count, "double_data")
            return ConstantTensor(shape: shape, floats: tensor.doubleData.map { Float($0) })
        case 10, 16:
            try check(tensor.int32Data.count, "int32_data")
            return ConstantTensor(shape: shape, floats: tensor.int32Data.map { Self.halfToFloat(UInt16(truncatingIfNeeded: $0), brain: type == 16) })
        case 7:
            try check(tensor.int64Data.count, "int64_data")
            return ConstantTensor(shape: shape, integers: tensor.int64Data)
        case 12, 13:
            try check(tensor.uint64Data.count, "uint64_data")
            return ConstantTensor(shape: shape, integers: tensor.uint64Data.map { Int64(truncatingIfNeeded: $0) })
        default:
            try check(tensor.int32Data.count, "int32_data")
            return ConstantTensor(shape: shape, integers: tensor.int32Data.map { Int64($0) })
        }
    }

    /// The bytes of an external tensor and the mapped file they are in: `location` (relative,
    /// inside the model's folder), `offset` and `length` checked against the file.
    private func externalBytes(_ tensor: Onnx_TensorProto, count: Int, size: Int, what: String) throws -> (MappedFile, UnsafeRawBufferPointer) {
        var fields: [String: String] = [:]
        for entry in tensor.externalData { fields[entry.key] = entry.value }
        guard let location = fields["location"], !location.isEmpty else {
            throw ImportFailure("\(what) is stored externally but has no 'location'")
        }
        guard let directory else { throw ImportFailure("\(what) is stored in '\(location)', but the model was not read from a file") }
        let parts = location.split(separator: "/", omittingEmptySubsequences: false)
        guard !location.hasPrefix("/"), !parts.contains(".."), !location.contains("\0") else {
            throw ImportFailure("\(what): external data location '\(location)' must be a relative path inside the model's folder")
        }
        func number(_ key: String) throws -> Int? {
            guard let text = fields[key] else { return nil }
            guard let value = Int(text), value >= 0 else { throw ImportFailure("\(what): external data \(key) '\(text)' is not a non-negative integer") }
            return value
        }
        let offset = try number("offset") ?? 0
        let expected = count * size
        let length = try number("length") ?? expected
        guard length == expected else {
            throw ImportFailure("\(what): external data length \(length) does not match shape \(tensor.dims) of \(Self.typeName(tensor.dataType)) (\(expected) bytes)")
        }
        let path = directory.appendingPathComponent(location).path
        let file: MappedFile
        if let opened = files.byPath[path] {
            file = opened
        } else {
            do { file = try MappedFile(path: path) } catch let error as AnvilError {
                throw ImportFailure("\(what): cannot read its external data: \(error.message)")
            }
            files.byPath[path] = file
        }
        guard offset <= file.bytes.count, length <= file.bytes.count - offset else {
            throw ImportFailure("\(what): external data at offset \(offset) with length \(length) runs past the end of '\(location)' (\(file.bytes.count) bytes)")
        }
        return (file, UnsafeRawBufferPointer(rebasing: file.bytes[offset ..< offset + length]))
    }

    /// Values from little-endian bytes. `consumed`, when given, is called with each stretch of
    /// `bytes` (a megabyte or so) once it is decoded, so the pages of a mapped file can leave
    /// resident memory while the rest is read: a 411 MB tensor is then not held twice.
    static func fromRaw(_ bytes: UnsafeRawBufferPointer, type: Int32, shape: [Int],
                        consumed: ((UnsafeRawBufferPointer) -> Void)? = nil) throws -> ConstantTensor {
        let size = elementSize(type) ?? 1
        let count = bytes.count / size
        func load<T: FixedWidthInteger>(_: T.Type, _ i: Int) -> T {
            T(littleEndian: bytes.loadUnaligned(fromByteOffset: i * MemoryLayout<T>.size, as: T.self))
        }
        func values<T>(_ value: (Int) -> T) -> [T] {
            let chunk = max((1 << 20) / size, 1)
            return [T](unsafeUninitializedCapacity: count) { result, initialized in
                for start in stride(from: 0, to: count, by: chunk) {
                    let end = min(start + chunk, count)
                    for i in start ..< end { (result.baseAddress! + i).initialize(to: value(i)) }
                    consumed?(UnsafeRawBufferPointer(rebasing: bytes[start * size ..< end * size]))
                }
                initialized = count
            }
        }
        switch type {
        case 1: return ConstantTensor(shape: shape, floats: values { Float(bitPattern: load(UInt32.self, $0)) })
        case 11: return ConstantTensor(shape: shape, floats: values { Float(Double(bitPattern: load(UInt64.self, $0))) })
        case 10, 16: return ConstantTensor(shape: shape, floats: values { halfToFloat(load(UInt16.self, $0), brain: type == 16) })
        case 2, 9: return ConstantTensor(shape: shape, integers: values { Int64(load(UInt8.self, $0)) })
        case 3: return ConstantTensor(shape: shape, integers: values { Int64(load(Int8.self, $0)) })
        case 4: return ConstantTensor(shape: shape, integers: values { Int64(load(UInt16.self, $0)) })
        case 5: return ConstantTensor(shape: shape, integers: values { Int64(load(Int16.self, $0)) })
        case 6: return ConstantTensor(shape: shape, integers: values { Int64(load(Int32.self, $0)) })
        case 12: return ConstantTensor(shape: shape, integers: values { Int64(load(UInt32.self, $0)) })
        case 7: return ConstantTensor(shape: shape, integers: values { load(Int64.self, $0) })
        case 13: return ConstantTensor(shape: shape, integers: values { Int64(truncatingIfNeeded: load(UInt64.self, $0)) })
        default: throw ImportFailure("\(typeName(type)) values are not read")
        }
    }

    /// An IEEE half (or bfloat16) bit pattern as a float.
    static func halfToFloat(_ bits: UInt16, brain: Bool) -> Float {
        if brain { return Float(bitPattern: UInt32(bits) << 16) }
        let sign = UInt32(bits >> 15) << 31
        let exponent = Int((bits >> 10) & 0x1F), mantissa = UInt32(bits & 0x3FF)
        if exponent == 0 {
            let value = Float(mantissa) * Float(sign != 0 ? -1 : 1) / Float(1 << 24)
            return value
        }
        if exponent == 31 { return Float(bitPattern: sign | 0x7F80_0000 | (mantissa << 13)) }
        return Float(bitPattern: sign | (UInt32(exponent - 15 + 127) << 23) | (mantissa << 13))
    }
}
