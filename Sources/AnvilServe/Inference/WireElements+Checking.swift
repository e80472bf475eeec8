import Anvil

/// An input's values checked against the datatype of its model input: an integer datatype takes
/// whole numbers inside its range and, since Anvil computes integers as float32 numbers, no
/// larger than 2²⁴ in magnitude (``ElementType/exactIntegerLimit``, what `Tensor(batch:shape:integers:)`
/// checks); BOOL takes truth values, or 0 and 1; FP32 takes numbers. Errors name the input,
/// the element (its row-major position in the request) and the rule it breaks.
extension WireElements {
    /// The values as elements of `datatype` (floats for FP32, integers, truth values for BOOL);
    /// throws ``ProtocolError`` (400) naming `label` (`"input 'tokens'"`) for a value it cannot hold.
    func checked(as datatype: TensorDatatype, label: String) throws -> TensorData.Elements {
        switch datatype {
        case .fp32, .bf16: .floats(try floats(datatype, label: label))
        case .bool: .truths(try integers(datatype, label: label).map { $0 != 0 })
        default: .integers(try integers(datatype, label: label))
        }
    }

    /// The values as float32 numbers.
    private func floats(_ datatype: TensorDatatype, label: String) throws -> [Float] {
        switch self {
        case .floats(let values): return values
        case .numbers(let values): return values.map(Float.init)
        case .signed(let values): return values.map(Float.init)
        case .unsigned(let values): return values.map(Float.init)
        case .truths:
            throw ProtocolError.badRequest("\(label) is \(datatype) but its data holds truth values (true, false); \(datatype) data are numbers")
        }
    }

    /// The values as integers of `datatype`, each checked.
    private func integers(_ datatype: TensorDatatype, label: String) throws -> [Int64] {
        guard let (lowest, highest) = datatype.integerBounds else { preconditionFailure("\(datatype) is not an integer datatype") }
        let limit = ElementType.exactIntegerLimit
        func refuse(_ position: Int, _ value: String, _ rule: String) -> ProtocolError {
            ProtocolError.badRequest("\(label) is \(datatype) but element \(position) is \(value), \(rule)")
        }
        let range = "outside \(datatype)'s range \(lowest)...\(highest)"
        let tooLarge = "beyond ±2^24 (\(limit)), the integers Anvil holds exactly (it computes them as float32)"
        func whole(_ values: [Double]) throws -> [Int64] {
            // Below 2^64 in magnitude: the bounds, as doubles, are exact at these ends.
            let below = Double(lowest), above = Double(highest) + 1
            return try values.enumerated().map { position, value in
                guard value.rounded(.towardZero) == value else { throw refuse(position, Self.text(value), "not an integer") }
                guard value >= below, value < above else { throw refuse(position, Self.text(value), range) }
                guard abs(value) <= Double(limit) else { throw refuse(position, Self.text(value), tooLarge) }
                return Int64(value)
            }
        }
        switch self {
        case .numbers(let values):
            return try whole(values)
        case .floats(let values):
            return try whole(values.map(Double.init))
        case .signed(let values):
            return try values.enumerated().map { position, value in
                guard value >= lowest, value < 0 || UInt64(value) <= highest else { throw refuse(position, String(value), range) }
                guard value.magnitude <= UInt64(limit) else { throw refuse(position, String(value), tooLarge) }
                return value
            }
        case .unsigned(let values):
            return try values.enumerated().map { position, value in
                guard value <= highest else { throw refuse(position, String(value), range) }
                guard value <= UInt64(limit) else { throw refuse(position, String(value), tooLarge) }
                return Int64(value)
            }
        case .truths(let values):
            guard datatype == .bool else {
                throw ProtocolError.badRequest("\(label) is \(datatype) but its data holds truth values (true, false); \(datatype) data are integers")
            }
            return values.map { $0 ? 1 : 0 }
        }
    }

    /// A number as a request wrote it: `7` rather than `7.0` for a whole one.
    private static func text(_ value: Double) -> String {
        value.rounded(.towardZero) == value && abs(value) < 1e18 ? String(Int64(value)) : "\(value)"
    }
}
