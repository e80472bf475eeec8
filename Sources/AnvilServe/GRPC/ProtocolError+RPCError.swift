import Anvil
import GRPCCore

/// A refusal's gRPC form: the REST status's counterpart code, same message.
extension ProtocolError {
    /// The gRPC status code of this refusal: 400 INVALID_ARGUMENT, 404 NOT_FOUND, 408
    /// DEADLINE_EXCEEDED, 413 RESOURCE_EXHAUSTED, 503 UNAVAILABLE, anything else INTERNAL.
    var rpcCode: RPCError.Code {
        switch status.code {
        case 400: .invalidArgument
        case 404: .notFound
        case 408: .deadlineExceeded
        case 413: .resourceExhausted
        case 503: .unavailable
        default: .internalError
        }
    }

    /// The error to throw from a gRPC handler.
    var rpcError: RPCError { RPCError(code: rpcCode, message: message) }
}

extension RPCError {
    /// The gRPC form of whatever a handler threw: a ``ProtocolError`` keeps its message, a
    /// cancelled request is CANCELLED, a failure inside the model INTERNAL.
    static func from(_ error: any Error) -> RPCError {
        switch error {
        case let error as RPCError: error
        case let error as ProtocolError: error.rpcError
        case is CancellationError: RPCError(code: .cancelled, message: "the request was cancelled")
        case let error as AnvilError: RPCError(code: .internalError, message: "inference failed: \(error.message)")
        default: RPCError(code: .internalError, message: "internal error: \(error)")
        }
    }

    /// The code's name as the gRPC spec writes it (`INVALID_ARGUMENT`), for metrics and logs.
    static func name(of code: RPCError.Code?) -> String {
        guard let code else { return "OK" }
        return switch code {
        case .cancelled: "CANCELLED"
        case .unknown: "UNKNOWN"
        case .invalidArgument: "INVALID_ARGUMENT"
        case .deadlineExceeded: "DEADLINE_EXCEEDED"
        case .notFound: "NOT_FOUND"
        case .alreadyExists: "ALREADY_EXISTS"
        case .permissionDenied: "PERMISSION_DENIED"
        case .resourceExhausted: "RESOURCE_EXHAUSTED"
        case .failedPrecondition: "FAILED_PRECONDITION"
        case .aborted: "ABORTED"
        case .outOfRange: "OUT_OF_RANGE"
        case .unimplemented: "UNIMPLEMENTED"
        case .internalError: "INTERNAL"
        case .unavailable: "UNAVAILABLE"
        case .dataLoss: "DATA_LOSS"
        case .unauthenticated: "UNAUTHENTICATED"
        default: "UNKNOWN"
        }
    }
}
