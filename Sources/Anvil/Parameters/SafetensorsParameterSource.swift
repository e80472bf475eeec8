import Foundation

/// Parameter tensors read straight from a `.safetensors` file, memory-mapped.
///
/// A safetensors file (written by the `safetensors` Python package from a PyTorch
/// `state_dict`, or by JAX, Candle, ...) is an 8-byte little-endian header length `N`, `N`
/// bytes of JSON that give every tensor's `dtype`, `shape` and `data_offsets` (a byte range
/// of the data that follows the header), and the data. The `__metadata__` entry is ignored.
///
/// `F32` tensors are used in place, without a copy (unless ``ParameterLoading/copied`` is asked
/// for, or the tensor is not 4-byte aligned in the file); `F16`, `BF16` and `F64` tensors are
/// converted to `Float` when requested. Tensors of other types can be in the file but cannot
/// be requested.
///
/// Anvil asks for tensors by layer and kind (``ParameterRequest``); a ``Naming`` turns a request
/// into the key used in the file. The default, ``Naming/pytorch``, reads a PyTorch `state_dict`
/// for a model whose Anvil layer names are the module paths with `.` written as `_`:
///
/// ```swift
/// // state_dict keys: features.0.weight, features.0.bias, features.1.running_mean, ...
/// let source = try SafetensorsParameterSource(url: URL(fileURLWithPath: "model.safetensors"))
/// try model.compile(layout: .pytorch, from: source)   // layers named features_0, features_1, ...
/// ```
///
/// Every malformed header — a length past the end of the file, text that is not JSON, offsets
/// out of range, overlapping or not matching the shape and type, sizes that overflow — is an
/// ``AnvilError`` (`invalidFile`) naming the file and the tensor.
public struct SafetensorsParameterSource: ParameterSource {
    /// The element types of the safetensors format.
    public enum DataType: String, Sendable, CaseIterable {
        case bool = "BOOL", uint8 = "U8", int8 = "I8", uint16 = "U16", int16 = "I16", uint32 = "U32", int32 = "I32"
        case uint64 = "U64", int64 = "I64", float16 = "F16", bfloat16 = "BF16", float32 = "F32", float64 = "F64"
        case float8E4M3 = "F8_E4M3", float8E5M2 = "F8_E5M2", float8E8M0 = "F8_E8M0"
        case float6E2M3 = "F6_E2M3", float6E3M2 = "F6_E3M2", float4 = "F4"

        /// Bits per element.
        public var bitWidth: Int {
            switch self {
            case .bool, .uint8, .int8, .float8E4M3, .float8E5M2, .float8E8M0: return 8
            case .uint16, .int16, .float16, .bfloat16: return 16
            case .uint32, .int32, .float32: return 32
            case .uint64, .int64, .float64: return 64
            case .float6E2M3, .float6E3M2: return 6
            case .float4: return 4
            }
        }

        /// Whether Anvil can load tensors of this type (`F32`, `F16`, `BF16`, `F64`).
        public var isLoadable: Bool { [.float32, .float16, .bfloat16, .float64].contains(self) }
    }

    /// One tensor described by the header.
    public struct TensorInfo: Hashable, Sendable {
        /// The key in the file.
        public let name: String
        /// The element type.
        public let dataType: DataType
        /// The dimensions, outermost first.
        public let shape: [Int]
        /// The number of elements (the product of `shape`).
        public let elementCount: Int
        /// Where the data lies, in bytes from the start of the file.
        public let byteRange: Range<Int>
    }

    /// How a ``ParameterRequest`` becomes a key in the file.
    public struct Naming: Sendable {
        /// Returns the key for a request.
        public let key: @Sendable (ParameterRequest) -> String

        /// A naming from any closure.
        public init(_ key: @escaping @Sendable (ParameterRequest) -> String) {
            self.key = key
        }

        /// PyTorch `state_dict` keys: the layer name with every `_` read as `.`, then `.weight`
        /// (weights, BatchNormalization γ, PReLU slopes), `.bias` (biases, β), `.running_mean`
        /// or `.running_var`. Layer `features_0` → `features.0.weight`; `bn1` → `bn1.running_var`.
        public static let pytorch = Naming { request in
            let module = request.layer.replacingOccurrences(of: "_", with: ".")
            return "\(module).\(Naming.pytorchSuffix(request.kind))"
        }

        /// Anvil's own tensor names, `<layer>_<suffix>` (`conv1_W`, `bn1_gamma`), as in
        /// directory and blob sources.
        public static let anvil = Naming { $0.tensorName }

        /// The PyTorch attribute holding a kind of tensor: `weight`, `bias`, `running_mean`, `running_var`
        /// (`indices` for a ``Take`` layer's positions, which PyTorch modules do not hold).
        public static func pytorchSuffix(_ kind: ParameterKind) -> String {
            switch kind {
            case .weights, .gamma, .slopes, .constant: return "weight"
            case .biases, .beta: return "bias"
            case .mean: return "running_mean"
            case .variance: return "running_var"
            case .indices: return "indices"
            }
        }
    }

    /// The default filter of keys that hold no parameters: PyTorch BatchNorm's
    /// `num_batches_tracked` counters.
    public static let ignoresBatchCounters: @Sendable (String) -> Bool = { $0.hasSuffix("num_batches_tracked") }

    /// The file.
    public let url: URL
    /// The mapped file.
    public let file: MappedFile
    /// Every tensor in the header, by key.
    public let tensors: [String: TensorInfo]
    /// How requests become keys.
    public let naming: Naming
    /// Keys left out of ``tensorNames`` (so `compile` does not report them as unused).
    public let isIgnored: @Sendable (String) -> Bool
    /// Memory-mapped or copied.
    public let loading: ParameterLoading

    /// Maps `url` and checks its header completely.
    ///
    /// - Parameters:
    ///   - naming: how a request becomes a key (default ``Naming/pytorch``).
    ///   - loading: use `F32` data in place (default) or copy it.
    ///   - ignoring: keys that are not parameters, left out of ``tensorNames``
    ///     (default: `num_batches_tracked` counters).
    public init(url: URL, naming: Naming = .pytorch, loading: ParameterLoading = .memoryMapped,
                ignoring: @escaping @Sendable (String) -> Bool = SafetensorsParameterSource.ignoresBatchCounters) throws {
        self.url = url
        self.naming = naming
        self.loading = loading
        self.isIgnored = ignoring
        file = try MappedFile(path: url.path)
        tensors = try Self.readHeader(file)
    }

    /// The tensor for `request`, converted to `Float` if stored as `F16`, `BF16` or `F64`.
    public func data(for request: ParameterRequest) throws -> ParameterData {
        let key = naming.key(request)
        guard let info = tensors[key] else {
            throw AnvilError(.missingParameter, "safetensors file '\(file.path)' has no tensor '\(key)' for \(request)")
        }
        guard info.elementCount == request.count else {
            throw AnvilError(.invalidParameter,
                             "tensor '\(key)' in '\(file.path)' has shape \(info.shape) (\(info.elementCount) values); \(request) needs \(request.count)")
        }
        let start = info.byteRange.lowerBound
        let count = info.elementCount
        let bytes = file.bytes
        switch info.dataType {
        case .float32:
            if start % MemoryLayout<Float>.alignment == 0 {
                return loading.finish(try file.floats(offset: start, count: count, name: key))
            }
            return ParameterData((0 ..< count).map { i in
                Float(bitPattern: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: start + 4 * i, as: UInt32.self)))
            })
        case .float16:
            return ParameterData((0 ..< count).map { i in
                Self.float(half: UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: start + 2 * i, as: UInt16.self)))
            })
        case .bfloat16:
            return ParameterData((0 ..< count).map { i in
                Float(bitPattern: UInt32(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: start + 2 * i, as: UInt16.self))) << 16)
            })
        case .float64:
            return ParameterData((0 ..< count).map { i in
                Float(Double(bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: start + 8 * i, as: UInt64.self))))
            })
        default:
            throw AnvilError(.invalidParameter,
                             "tensor '\(key)' in '\(file.path)' has dtype \(info.dataType.rawValue); Anvil loads F32, F16, BF16 and F64")
        }
    }

    /// Every key in the file except those `ignoring` filters out.
    public var tensorNames: [String]? { tensors.keys.filter { !isIgnored($0) } }

    /// The key ``naming`` gives `request`.
    public func tensorName(for request: ParameterRequest) -> String { naming.key(request) }

    /// IEEE 754 half precision to single precision, exactly (subnormals, infinities and NaN included).
    static func float(half bits: UInt16) -> Float {
        let sign: UInt32 = UInt32(bits & 0x8000) << 16
        let exponent = UInt32(bits >> 10) & 0x1F
        let mantissa = UInt32(bits & 0x03FF)
        switch exponent {
        case 0:
            let magnitude = Float(mantissa) * 0x1p-24
            return sign == 0 ? magnitude : -magnitude
        case 0x1F:
            return Float(bitPattern: sign | 0x7F80_0000 | (mantissa << 13))
        default:
            return Float(bitPattern: sign | ((exponent + 112) << 23) | (mantissa << 13))
        }
    }

    // MARK: - Header

    private static func readHeader(_ file: MappedFile) throws -> [String: TensorInfo] {
        let path = file.path
        let bytes = file.bytes
        func invalid(_ message: String) -> AnvilError { AnvilError(.invalidFile, "safetensors file '\(path)': \(message)") }
        guard bytes.count >= 8 else {
            throw invalid("\(bytes.count) bytes is too short for the 8-byte header length")
        }
        let declared = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
        guard declared <= UInt64(bytes.count - 8) else {
            throw invalid("the header length \(declared) runs past the end of the file (\(bytes.count) bytes)")
        }
        let headerLength = Int(declared)
        let dataStart = 8 + headerLength
        let dataSize = bytes.count - dataStart
        let header = Data(UnsafeRawBufferPointer(rebasing: bytes[8 ..< dataStart]))
        let json: JSONValue
        do {
            json = try JSONValue.parse(header, source: path)
        } catch let error as AnvilError {
            throw invalid("the header is not valid JSON (\(error.message))")
        }
        guard case .object(let members) = json else { throw invalid("the header is not a JSON object") }
        var tensors: [String: TensorInfo] = [:]
        var ranges: [(Range<Int>, String)] = []
        for (name, value) in members where name != "__metadata__" {
            func bad(_ message: String) -> AnvilError { invalid("tensor '\(name)': \(message)") }
            guard tensors[name] == nil else { throw bad("appears twice in the header") }
            guard case .object = value else { throw bad("its entry is not a JSON object") }
            guard case .string(let typeName)? = value["dtype"] else { throw bad("missing or non-string 'dtype'") }
            guard let dataType = DataType(rawValue: typeName) else { throw bad("unknown dtype '\(typeName)'") }
            guard case .array(let dimensions)? = value["shape"] else { throw bad("missing or non-array 'shape'") }
            var shape: [Int] = []
            var elements = 1
            for dimension in dimensions {
                guard case .int(let size) = dimension, size >= 0 else {
                    throw bad("shape \(describe(dimensions)) must hold non-negative integers")
                }
                let (product, overflow) = elements.multipliedReportingOverflow(by: size)
                guard !overflow else { throw bad("shape \(describe(dimensions)) has too many elements") }
                shape.append(size)
                elements = product
            }
            let (bits, bitsOverflow) = elements.multipliedReportingOverflow(by: dataType.bitWidth)
            guard !bitsOverflow else { throw bad("shape \(shape) has too many elements") }
            guard bits % 8 == 0 else { throw bad("\(elements) elements of \(typeName) do not fill whole bytes") }
            let byteCount = bits / 8
            guard case .array(let offsets)? = value["data_offsets"], offsets.count == 2,
                  case .int(let begin) = offsets[0], case .int(let end) = offsets[1] else {
                throw bad("'data_offsets' must be [begin, end] integers")
            }
            guard begin >= 0, end >= begin else { throw bad("data_offsets [\(begin), \(end)] are negative or reversed") }
            guard end <= dataSize else {
                throw bad("data_offsets [\(begin), \(end)] run past the \(dataSize) bytes of data")
            }
            guard end - begin == byteCount else {
                throw bad("data_offsets [\(begin), \(end)] hold \(end - begin) bytes; shape \(shape) of \(typeName) needs \(byteCount)")
            }
            let range = (dataStart + begin) ..< (dataStart + end)
            tensors[name] = TensorInfo(name: name, dataType: dataType, shape: shape, elementCount: elements, byteRange: range)
            if !range.isEmpty { ranges.append((range, name)) }
        }
        ranges.sort { $0.0.lowerBound < $1.0.lowerBound || ($0.0.lowerBound == $1.0.lowerBound && $0.1 < $1.1) }
        for (a, b) in zip(ranges, ranges.dropFirst()) where b.0.lowerBound < a.0.upperBound {
            throw invalid("tensors '\(a.1)' and '\(b.1)' overlap")
        }
        return tensors
    }

    private static func describe(_ values: [JSONValue]) -> String {
        "[" + values.map { $0.serialized() }.joined(separator: ", ") + "]"
    }
}
