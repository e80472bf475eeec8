import GRPCCore
import GRPCProtobuf

/// ``InferenceGRPCService`` with its `ModelInfer` requests read by a ``SizeLimitedDeserializer``:
/// the generated registration, then `ModelInfer` registered again (the router keeps the last).
struct LimitedInferenceService: RegistrableRPCService {
    /// The service.
    let service: InferenceGRPCService
    /// The largest `ModelInfer` message accepted.
    let maximumBytes: Int

    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        service.registerMethods(with: &router)
        let service = service
        router.registerHandler(
            forMethod: Inference_GRPCInferenceService.Method.ModelInfer.descriptor,
            deserializer: SizeLimitedDeserializer<Inference_ModelInferRequest>(maximumBytes: maximumBytes),
            serializer: ProtobufSerializer<Inference_ModelInferResponse>(),
            handler: { request, context in try await service.modelInfer(request: request, context: context) }
        )
    }
}
