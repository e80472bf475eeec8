import Anvil
@testable import AnvilServe
@testable import AnvilTestSupport
import Foundation
import GRPCCore
import Testing

/// Models whose inputs and outputs are integers and truth values (token ids in, ArgMax indices
/// and a mask out; every datatype at its extremes) served over REST JSON, REST binary data and
/// gRPC's typed and raw contents: metadata names each tensor's own datatype, and every answer is
/// the model's own `predict` on the same inputs, called directly, in the output's own datatype.
@Suite("Serving: integer and bool tensors")
struct TypedTensorServingTests {
    /// Two items of 5 token ids (negative ones count from the table's end) and their `keep` flags.
    static func tokenInputs() throws -> (tokens: Tensor, keep: Tensor) {
        let tokens = try Tensor(batch: 2, shape: Shape(dimensions: [5], elementType: .int64), integers: [0, 3, 15, 7, -1, 12, 5, -16, 9, 2])
        let keep = try Tensor(batch: 2, shape: Shape(dimensions: [5], elementType: .bool),
                              truths: [true, false, true, true, true, false, true, true, false, true])
        return (tokens, keep)
    }

    /// The inputs of ``ServeFixtures/everyDatatype()``, each at its extremes.
    static func extremeInputs() throws -> [Tensor] {
        try ServeFixtures.datatypes.map { try ServeFixtures.typedTensor($0, ServeFixtures.extremeValues[$0]!) }
    }

    @Test("Metadata and configuration give each input's and output's own datatype, open axes -1")
    func metadata() async throws {
        let server = try await TestServer([try ServedModel(name: "tokens", model: ServeFixtures.tokens()),
                                           try ServedModel(name: "every", model: ServeFixtures.everyDatatype())], grpc: true)
        let tokens = try await server.get("/v2/models/tokens").decoded(ModelMetadata.self)
        #expect(tokens.inputs.map { "\($0.name):\($0.datatype):\($0.shape)" } == ["tokens:INT64:[-1, -1]", "keep:BOOL:[-1, -1]"])
        #expect(tokens.outputs.map { "\($0.name):\($0.datatype):\($0.shape)" } == ["ids:INT64:[-1, -1]", "mask:BOOL:[-1, -1]"])
        let every = try await server.get("/v2/models/every").decoded(ModelMetadata.self)
        let names = ["INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64", "BOOL", "FP32"]
        #expect(every.inputs.map(\.datatype) == names && every.outputs.map(\.datatype) == names)
        #expect(every.inputs.allSatisfy { $0.shape == [-1, 3] } && every.outputs.allSatisfy { $0.shape == [-1, 3] })
        let config = try await server.get("/v2/models/tokens/config").decoded(ModelConfiguration.self)
        #expect(config.input.map(\.dataType) == ["TYPE_INT64", "TYPE_BOOL"] && config.output.map(\.dataType) == ["TYPE_INT64", "TYPE_BOOL"])
        #expect(config.input.map(\.dims) == [[-1], [-1]])
        try await GRPCTestClient.run(port: try #require(server.grpcPort)) { inference, _ in
            let options = GRPCTestClient.options
            for (name, rest) in [("tokens", tokens), ("every", every)] {
                let metadata = try await inference.modelMetadata(.with { $0.name = name }, options: options)
                #expect(metadata.inputs.map(\.datatype) == rest.inputs.map(\.datatype) && metadata.outputs.map(\.datatype) == rest.outputs.map(\.datatype))
                #expect(metadata.inputs.map { $0.shape.map(Int.init) } == rest.inputs.map(\.shape))
                #expect(metadata.outputs.map { $0.shape.map(Int.init) } == rest.outputs.map(\.shape))
            }
            let grpcConfig = try await inference.modelConfig(.with { $0.name = "every" }, options: options).config
            #expect(grpcConfig.input.map(\.dataType) == [.typeInt8, .typeInt16, .typeInt32, .typeInt64, .typeUint8, .typeUint16, .typeUint32,
                                                         .typeUint64, .typeBool, .typeFp32])
            #expect(grpcConfig.output.map(\.dataType) == grpcConfig.input.map(\.dataType))
        }
        try await server.stop()
    }

    @Test("Token ids in, INT64 indices and a BOOL mask out: REST JSON, REST binary, gRPC typed and raw all give predict's")
    func tokenModel() async throws {
        let model = try ServeFixtures.tokens()
        let server = try await TestServer([try ServedModel(name: "tokens", model: model)], grpc: true)
        let (tokens, keep) = try Self.tokenInputs()
        let expected = try model.predict([tokens, keep])
        #expect(expected[0].elementType == .int64 && expected[1].elementType == .bool)
        #expect(Set(expected[1].truths).count == 2, "the mask holds both truth values")

        // JSON: the ids as integers, the mask as true/false; keep sent nested, tokens flat.
        let keepRows = (0 ..< 2).map { row in "[" + keep.truths[row * 5 ..< row * 5 + 5].map(String.init).joined(separator: ", ") + "]" }
        let body = #"{"id": "t", "inputs": [{"name": "keep", "shape": [2, 5], "datatype": "BOOL", "data": [\#(keepRows.joined(separator: ", "))]}, "#
            + #"{"name": "tokens", "shape": [2, 5], "datatype": "INT64", "data": [\#(tokens.integers.map(String.init).joined(separator: ", "))]}]}"#
        let reply = try await server.post("/v2/models/tokens/infer", body: Data(body.utf8))
        #expect(reply.status == 200, "\(reply.errorMessage ?? "")")
        let response = try reply.decoded(InferenceResponse.self)
        #expect(response.id == "t" && response.outputs.map(\.name) == ["ids", "mask"])
        #expect(response.outputs.map(\.datatype) == ["INT64", "BOOL"] && response.outputs.allSatisfy { $0.shape == [2, 5] })
        #expect(response.outputs[0].data?.elements == .numbers(expected[0].integers.map(Double.init)))
        #expect(response.outputs[1].data?.elements == .truths(expected[1].truths))
        // Written as JSON integers and booleans, not as floats.
        let text = String(decoding: reply.body, as: UTF8.self)
        #expect(text.contains(#""data":[\#(expected[0].integers.map(String.init).joined(separator: ","))]"#), "\(text)")
        #expect(text.contains(#""data":[\#(expected[1].truths.map(String.init).joined(separator: ","))]"#), "\(text)")

        // Binary: each input its little-endian elements (INT64 eight bytes, BOOL one), outputs binary or JSON.
        for binaryOutputs in [true, false] {
            let request = InferenceRequest(inputs: [
                InputTensor(name: "tokens", shape: [2, 5], datatype: "INT64", parameters: ProtocolParameters(binaryDataSize: 80)),
                InputTensor(name: "keep", shape: [2, 5], datatype: "BOOL", parameters: ProtocolParameters(binaryDataSize: 10)),
            ], parameters: ProtocolParameters(binaryDataOutput: binaryOutputs))
            var body = try JSONEncoder().encode(request)
            let jsonLength = body.count
            body.append(TypedWire.bytes(tokens))
            body.append(TypedWire.bytes(keep))
            let reply = try await server.post("/v2/models/tokens/infer", body: body, headers: [BinaryTensorData.headerLengthField: String(jsonLength)])
            #expect(reply.status == 200, "\(reply.errorMessage ?? "")")
            let headerLength = reply.header(BinaryTensorData.headerLengthField).flatMap { Int($0) } ?? reply.body.count
            let response = try JSONDecoder().decode(InferenceResponse.self, from: reply.body.prefix(headerLength))
            #expect(response.outputs.map(\.datatype) == ["INT64", "BOOL"])
            if binaryOutputs {
                #expect(response.outputs.map(\.parameters?.binaryDataSize) == [80, 10] && reply.body.count == headerLength + 90)
                let bytes = reply.body.dropFirst(headerLength)
                #expect(TypedWire.values(bytes.prefix(80), as: .int64) == expected[0].values)
                #expect(TypedWire.values(bytes.dropFirst(80), as: .bool) == expected[1].values)
            } else {
                #expect(response.outputs.map { TypedWire.values($0.data) } == expected.map(\.values))
            }
        }

        // gRPC: typed contents in, typed contents out; raw in, raw out.
        try await GRPCTestClient.run(port: try #require(server.grpcPort)) { inference, _ in
            for raw in [false, true] {
                var request = Inference_ModelInferRequest()
                request.modelName = "tokens"
                request.inputs = [TypedWire.input("tokens", tokens), TypedWire.input("keep", keep)]
                if raw {
                    for index in request.inputs.indices { request.inputs[index].clearContents() }
                    request.rawInputContents = [TypedWire.bytes(tokens), TypedWire.bytes(keep)]
                }
                let response = try await inference.modelInfer(request, options: GRPCTestClient.options)
                #expect(response.outputs.map(\.datatype) == ["INT64", "BOOL"] && response.outputs.allSatisfy { $0.shape == [2, 5] })
                if raw {
                    #expect(response.rawOutputContents.map(\.count) == [80, 10])
                    #expect(TypedWire.values(response.rawOutputContents[0], as: .int64) == expected[0].values)
                    #expect(TypedWire.values(response.rawOutputContents[1], as: .bool) == expected[1].values)
                } else {
                    #expect(response.rawOutputContents.isEmpty)
                    #expect(response.outputs[0].contents.int64Contents == expected[0].integers)
                    #expect(response.outputs[1].contents.boolContents == expected[1].truths)
                }
            }
        }
        try await server.stop()
    }

    @Test("Every datatype at its extremes in and out: REST JSON, REST binary, gRPC typed and raw")
    func everyDatatype() async throws {
        let model = try ServeFixtures.everyDatatype()
        let server = try await TestServer([try ServedModel(name: "every", model: model)], grpc: true)
        let inputs = try Self.extremeInputs()
        let expected = try model.predict(inputs)
        let datatypes = ServeFixtures.datatypes.map { TensorDatatype($0).rawValue }
        #expect(expected.map(\.elementType) == ServeFixtures.datatypes)
        // A cast to its own type changes nothing: each output is its input.
        #expect(expected.map(TypedWire.values) == inputs.map(TypedWire.values))

        let json = try await server.infer("every", InferenceRequest(inputs: zip(model.inputNames, inputs).map { ServeFixtures.input($0, $1) }))
        #expect(json.status == 200, "\(json.errorMessage ?? "")")
        let response = try json.decoded(InferenceResponse.self)
        #expect(response.outputs.map(\.datatype) == datatypes)
        #expect(response.outputs.map { TypedWire.values($0.data) } == expected.map(\.values))

        var request = InferenceRequest(inputs: zip(model.inputNames, inputs).map { name, tensor in
            InputTensor(name: name, shape: [1, 3], datatype: TensorDatatype(tensor.elementType).rawValue,
                        parameters: ProtocolParameters(binaryDataSize: 3 * tensor.elementType.byteCount))
        })
        request.parameters = ProtocolParameters(binaryDataOutput: true)
        var body = try JSONEncoder().encode(request)
        let jsonLength = body.count
        for tensor in inputs { body.append(TypedWire.bytes(tensor)) }
        let binary = try await server.post("/v2/models/every/infer", body: body, headers: [BinaryTensorData.headerLengthField: String(jsonLength)])
        #expect(binary.status == 200, "\(binary.errorMessage ?? "")")
        let headerLength = try #require(binary.header(BinaryTensorData.headerLengthField).flatMap { Int($0) })
        let header = try JSONDecoder().decode(InferenceResponse.self, from: binary.body.prefix(headerLength))
        #expect(header.outputs.map(\.datatype) == datatypes)
        var offset = binary.body.startIndex + headerLength
        for (index, output) in header.outputs.enumerated() {
            let size = try #require(output.parameters?.binaryDataSize)
            #expect(size == 3 * ServeFixtures.datatypes[index].byteCount, "\(output.name)")
            #expect(TypedWire.values(binary.body[offset ..< offset + size], as: ServeFixtures.datatypes[index]) == expected[index].values, "\(output.name)")
            offset += size
        }
        #expect(offset == binary.body.endIndex)

        try await GRPCTestClient.run(port: try #require(server.grpcPort)) { inference, _ in
            for raw in [false, true] {
                var request = Inference_ModelInferRequest()
                request.modelName = "every"
                request.inputs = zip(model.inputNames, inputs).map { TypedWire.input($0, $1) }
                if raw {
                    for index in request.inputs.indices { request.inputs[index].clearContents() }
                    request.rawInputContents = inputs.map(TypedWire.bytes)
                }
                let response = try await inference.modelInfer(request, options: GRPCTestClient.options)
                #expect(response.outputs.map(\.datatype) == datatypes)
                if raw {
                    #expect(zip(response.rawOutputContents, ServeFixtures.datatypes).map { TypedWire.values($0, as: $1) } == expected.map(\.values))
                } else {
                    #expect(response.rawOutputContents.isEmpty)
                    #expect(response.outputs.map(TypedWire.values) == expected.map(\.values))
                }
            }
        }
        try await server.stop()
    }

    /// A good request to the token model and predict's answer to it, sent after every bad one.
    struct Probe {
        let tokens: Tensor
        let keep: Tensor
        let expected: [Tensor]

        init() throws {
            (tokens, keep) = try TypedTensorServingTests.tokenInputs()
            expected = try ServeFixtures.tokens().predict([tokens, keep])
        }

        /// Sends the good request over REST; expects the model's own answer.
        func check(_ server: TestServer, after what: String) async throws {
            let reply = try await server.infer("tokens", InferenceRequest(inputs: [ServeFixtures.input("tokens", tokens), ServeFixtures.input("keep", keep)]))
            #expect(reply.status == 200, "not serving after \(what)")
            #expect(try reply.decoded(InferenceResponse.self).outputs.map { TypedWire.values($0.data) } == expected.map(\.values), "after \(what)")
        }

        /// Sends the good request over gRPC; expects the model's own answer.
        func check(_ inference: Inference_GRPCInferenceService.Client<some ClientTransport>, after what: String) async throws {
            let response = try await inference.modelInfer(.with {
                $0.modelName = "tokens"
                $0.inputs = [TypedWire.input("tokens", tokens), TypedWire.input("keep", keep)]
            }, options: GRPCTestClient.options)
            #expect(response.outputs.map(TypedWire.values) == expected.map(\.values), "not serving after \(what)")
        }
    }

    /// A JSON input of `datatype` with `data` (raw JSON text) of shape [1, count].
    static func jsonInput(_ name: String, _ datatype: String, _ data: String, count: Int) -> String {
        #"{"name": "\#(name)", "shape": [1, \#(count)], "datatype": "\#(datatype)", "data": [\#(data)]}"#
    }

    @Test("REST: a wrong datatype, values out of range, not integers, beyond 2^24, wrong byte counts: 400 naming them")
    func restErrors() async throws {
        let server = try await TestServer([try ServedModel(name: "tokens", model: ServeFixtures.tokens()),
                                           try ServedModel(name: "every", model: ServeFixtures.everyDatatype())])
        let probe = try Probe()
        let keep = Self.jsonInput("keep", "BOOL", "true, false, true", count: 3)
        func tokens(_ datatype: String = "INT64", _ data: String) -> String {
            #"{"inputs": [\#(Self.jsonInput("tokens", datatype, data, count: 3)), \#(keep)]}"#
        }
        // The every-datatype model with one input's JSON replaced.
        func every(_ type: ElementType, _ data: String) -> String {
            let inputs = ServeFixtures.datatypes.map { other in
                Self.jsonInput("x_\(other)", TensorDatatype(other).rawValue, other == type ? data : (other == .bool ? "true, true, false" : "1, 2, 3"), count: 3)
            }
            return #"{"inputs": [\#(inputs.joined(separator: ", "))]}"#
        }
        let cases: [(String, String, String, String)] = [
            ("INT32 for INT64", "tokens", tokens("INT32", "1, 2, 3"), "input 'tokens' has datatype 'INT32'; model 'tokens' takes INT64"),
            ("FP32 for INT64", "tokens", tokens("FP32", "1, 2, 3"), "has datatype 'FP32'; model 'tokens' takes INT64"),
            ("INT64 for BOOL", "tokens", #"{"inputs": [\#(Self.jsonInput("tokens", "INT64", "1, 2, 3", count: 3)), \#(Self.jsonInput("keep", "INT64", "1, 0, 1", count: 3))]}"#,
             "input 'keep' has datatype 'INT64'; model 'tokens' takes BOOL"),
            ("not an integer", "tokens", tokens("INT64", "1, 2.5, 3"), "input 'tokens' is INT64 but element 1 is 2.5, not an integer"),
            ("beyond 2^24", "tokens", tokens("INT64", "1, 2, 16777217"), "element 2 is 16777217, beyond ±2^24"),
            ("below -2^24", "tokens", tokens("INT64", "-16777217, 2, 3"), "element 0 is -16777217, beyond ±2^24"),
            ("beyond INT64", "tokens", tokens("INT64", "1e19, 2, 3"), "outside INT64's range"),
            ("truth values for INT64", "tokens", tokens("INT64", "true, false, true"), "input 'tokens' is INT64 but its data holds truth values"),
            ("numbers and truth values", "tokens", tokens("INT64", "1, true, 3"), "mixes numbers and truth values"),
            ("2 for BOOL", "tokens", #"{"inputs": [\#(Self.jsonInput("tokens", "INT64", "1, 2, 3", count: 3)), \#(Self.jsonInput("keep", "BOOL", "1, 2, 0", count: 3))]}"#,
             "input 'keep' is BOOL but element 1 is 2, outside BOOL's range 0...1"),
            ("INT8 out of range", "every", every(.int8, "1, 300, 3"), "input 'x_int8' is INT8 but element 1 is 300, outside INT8's range -128...127"),
            ("UINT8 negative", "every", every(.uint8, "-1, 2, 3"), "input 'x_uint8' is UINT8 but element 0 is -1, outside UINT8's range 0...255"),
            ("INT32 beyond 2^24", "every", every(.int32, "1, 2, 1073741824"), "input 'x_int32' is INT32 but element 2 is 1073741824, beyond ±2^24"),
            ("UINT64 beyond its range", "every", every(.uint64, "18446744073709551616, 2, 3"), "outside UINT64's range 0...18446744073709551615"),
            ("truth values for FP32", "every", every(.float32, "true, false, true"), "input 'x_float32' is FP32 but its data holds truth values"),
        ]
        for (what, model, body, fragment) in cases {
            let reply = try await server.post("/v2/models/\(model)/infer", body: Data(body.utf8))
            #expect(reply.status == 400, "\(what): \(reply.status)")
            #expect(reply.errorMessage?.contains(fragment) == true, "\(what): \(reply.errorMessage ?? "<no error body>")")
            try await probe.check(server, after: what)
        }

        // Binary data of the wrong size or with values the datatype cannot hold.
        func binary(_ tokens: Data, _ keep: Data, tokensSize: Int? = nil) -> (Data, Int) {
            let request = InferenceRequest(inputs: [
                InputTensor(name: "tokens", shape: [1, 3], datatype: "INT64", parameters: ProtocolParameters(binaryDataSize: tokensSize ?? tokens.count)),
                InputTensor(name: "keep", shape: [1, 3], datatype: "BOOL", parameters: ProtocolParameters(binaryDataSize: keep.count)),
            ])
            var body = try! JSONEncoder().encode(request)
            let length = body.count
            body.append(tokens)
            body.append(keep)
            return (body, length)
        }
        func int64(_ values: [Int64]) throws -> Data {
            TypedWire.bytes(try Tensor(batch: 1, shape: Shape(dimensions: [values.count], elementType: .int64), values: values.map(Float.init)))
        }
        var huge = try int64([1, 2, 3])
        huge[huge.startIndex + 8 + 5] = 1  // element 1 = 2 + 2^40
        let okKeep = Data([1, 0, 1])
        let binaryCases: [(String, (Data, Int), String)] = [
            ("INT64 as 4-byte values", binary(Data(count: 12), okKeep), "input 'tokens' has shape [1, 3] (3 INT64 values, 24 bytes) but binary_data_size is 12"),
            ("BOOL of 2 bytes each", binary(try int64([1, 2, 3]), Data(count: 6)), "input 'keep' has shape [1, 3] (3 BOOL values, 3 bytes) but binary_data_size is 6"),
            ("a BOOL byte of 2", binary(try int64([1, 2, 3]), Data([1, 2, 0])), "input 'keep' is BOOL but element 1 is 2, outside BOOL's range 0...1"),
            ("INT64 beyond 2^24", binary(huge, okKeep), "input 'tokens' is INT64 but element 1 is 1099511627778, beyond ±2^24"),
            ("INT64 negative beyond 2^24", binary(Data(repeating: 0x80, count: 24), okKeep), "element 0 is -9187201950435737472, beyond ±2^24"),
        ]
        for (what, (body, length), fragment) in binaryCases {
            let reply = try await server.post("/v2/models/tokens/infer", body: body, headers: [BinaryTensorData.headerLengthField: String(length)])
            #expect(reply.status == 400, "\(what): \(reply.status)")
            #expect(reply.errorMessage?.contains(fragment) == true, "\(what): \(reply.errorMessage ?? "<no error body>")")
            try await probe.check(server, after: what)
        }
        try await server.stop()
    }

    @Test("gRPC: a wrong datatype or contents field, values out of range or beyond 2^24, wrong byte counts: INVALID_ARGUMENT naming them")
    func grpcErrors() async throws {
        let server = try await TestServer([try ServedModel(name: "tokens", model: ServeFixtures.tokens()),
                                           try ServedModel(name: "every", model: ServeFixtures.everyDatatype())], grpc: true)
        let probe = try Probe()
        func tokens(_ change: (inout Inference_ModelInferRequest) -> Void) -> Inference_ModelInferRequest {
            var request = Inference_ModelInferRequest()
            request.modelName = "tokens"
            request.inputs = [TypedWire.input("tokens", probe.tokens), TypedWire.input("keep", probe.keep)]
            change(&request)
            return request
        }
        let inputs = try Self.extremeInputs()
        func every(_ index: Int, _ change: (inout Inference_InferTensorContents) -> Void) -> Inference_ModelInferRequest {
            var request = Inference_ModelInferRequest()
            request.modelName = "every"
            request.inputs = zip(ServeFixtures.datatypes, inputs).map { TypedWire.input("x_\($0)", $1) }
            change(&request.inputs[index].contents)
            return request
        }
        let raw = [TypedWire.bytes(probe.tokens), TypedWire.bytes(probe.keep)]
        func rawTokens(_ contents: [Data]) -> Inference_ModelInferRequest {
            tokens { request in
                for index in request.inputs.indices { request.inputs[index].clearContents() }
                request.rawInputContents = contents
            }
        }
        let cases: [(String, Inference_ModelInferRequest, String)] = [
            ("INT32 for INT64", tokens { $0.inputs[0].datatype = "INT32"; $0.inputs[0].contents = .with { $0.intContents = Array(repeating: 1, count: 10) } },
             "input 'tokens' has datatype 'INT32'; model 'tokens' takes INT64"),
            ("INT64 in int_contents", tokens { $0.inputs[0].contents = .with { $0.intContents = Array(repeating: 1, count: 10) } },
             "input 'tokens' is INT64 but gives its values in contents.int_contents; INT64 values go in contents.int64_contents"),
            ("INT64 in fp32_contents", tokens { $0.inputs[0].contents = .with { $0.fp32Contents = Array(repeating: 1, count: 10) } },
             "gives its values in contents.fp32_contents"),
            ("BOOL without values", tokens { $0.inputs[1].clearContents() }, "input 'keep' has no values: neither contents.bool_contents nor raw_input_contents"),
            ("too few values", tokens { $0.inputs[0].contents.int64Contents = [1, 2, 3] }, "(10 values) but contents.int64_contents holds 3"),
            ("beyond 2^24", tokens { $0.inputs[0].contents.int64Contents[4] = 16_777_217 }, "input 'tokens' is INT64 but element 4 is 16777217, beyond ±2^24"),
            ("INT8 out of range", every(0) { $0.intContents[1] = 300 }, "input 'x_int8' is INT8 but element 1 is 300, outside INT8's range -128...127"),
            ("UINT8 out of range", every(4) { $0.uintContents[2] = 256 }, "input 'x_uint8' is UINT8 but element 2 is 256, outside UINT8's range 0...255"),
            ("INT16 out of range", every(1) { $0.intContents[0] = -40000 }, "outside INT16's range -32768...32767"),
            ("UINT64 beyond 2^24", every(7) { $0.uint64Contents[0] = 1 << 63 }, "input 'x_uint64' is UINT64 but element 0 is 9223372036854775808, beyond ±2^24"),
            ("INT32 beyond 2^24", every(2) { $0.intContents[2] = .min }, "element 2 is -2147483648, beyond ±2^24"),
            ("raw INT64 of the wrong size", rawTokens([Data(count: 40), raw[1]]), "input 'tokens' has shape [2, 5] (10 INT64 values, 80 bytes) but raw_input_contents[0] holds 40 bytes"),
            ("raw BOOL byte of 2", rawTokens([raw[0], Data([1, 0, 2, 1, 1, 0, 0, 1, 1, 1])]), "input 'keep' is BOOL but element 2 is 2, outside BOOL's range 0...1"),
            ("raw INT64 beyond 2^24", rawTokens([Data(repeating: 0x7F, count: 80), raw[1]]), "element 0 is 9187201950435737471, beyond ±2^24"),
        ]
        try await GRPCTestClient.run(port: try #require(server.grpcPort)) { inference, _ in
            for (what, bad, fragment) in cases {
                let error = await GRPCTestClient.error { _ = try await inference.modelInfer(bad, options: GRPCTestClient.options) }
                #expect(error?.code == .invalidArgument, "\(what): \(String(describing: error))")
                #expect(error?.message.contains(fragment) == true, "\(what): \(error?.message ?? "-")")
                try await probe.check(inference, after: what)
            }
        }
        try await probe.check(server, after: "the gRPC cases")
        try await server.stop()
    }
}
