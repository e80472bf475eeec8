import Anvil
@testable import AnvilServe
@testable import AnvilTestSupport
import Foundation
import Testing

/// The binary tensor data extension: inputs as raw little-endian FP32 after the JSON, outputs
/// returned the same way when asked, compared with `predict` bit for bit.
@Suite("Serving: binary tensor data")
struct BinaryDataTests {
    /// Little-endian bytes of `values`, written byte by byte (not the server's code path).
    static func littleEndian(_ values: [Float]) -> Data {
        var data = Data()
        for value in values {
            let bits = value.bitPattern
            data.append(contentsOf: [UInt8(bits & 0xFF), UInt8((bits >> 8) & 0xFF), UInt8((bits >> 16) & 0xFF), UInt8(bits >> 24)])
        }
        return data
    }

    static func floats(_ data: Data) -> [Float] {
        let bytes = [UInt8](data)
        return stride(from: 0, to: bytes.count, by: 4).map { i in
            Float(bitPattern: UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24)
        }
    }

    @Test("Binary inputs of a two-input model; outputs binary, JSON, or mixed per output")
    func binaryRoundTrip() async throws {
        let model = try ServeFixtures.twoInputs()
        let server = try await TestServer([try ServedModel(name: "two", model: model)])
        let image = try ServeFixtures.tensor(batch: 3, shape: model.inputShapes[0], seed: 21)
        let extra = try ServeFixtures.tensor(batch: 3, shape: model.inputShapes[1], seed: 22)
        let expected = try model.predict([image, extra])
        // `extra` as JSON data, `image` binary: binary parts follow the JSON in input order.
        let cases: [(outputs: [RequestedOutput]?, parameters: ProtocolParameters?, binary: [Bool])] = [
            (nil, ProtocolParameters(binaryDataOutput: true), [true, true]),
            (nil, nil, [false, false]),
            ([RequestedOutput(name: model.outputNames[0], parameters: ProtocolParameters(binaryData: false)),
              RequestedOutput(name: model.outputNames[1], parameters: ProtocolParameters(binaryData: true))], nil, [false, true]),
        ]
        for (outputs, parameters, binary) in cases {
            let request = InferenceRequest(id: "b", inputs: [
                InputTensor(name: "image", shape: [3] + image.shape.dimensions, parameters: ProtocolParameters(binaryDataSize: image.values.count * 4)),
                ServeFixtures.input("extra", extra),
            ], outputs: outputs, parameters: parameters)
            var body = try JSONEncoder().encode(request)
            let jsonLength = body.count
            body.append(Self.littleEndian(image.values))
            let reply = try await server.post("/v2/models/two/infer", body: body, headers: [
                BinaryTensorData.headerLengthField: String(jsonLength), "Content-Type": "application/octet-stream",
            ])
            #expect(reply.status == 200, "\(String(decoding: reply.body.prefix(300), as: UTF8.self))")
            let headerLength = reply.header(BinaryTensorData.headerLengthField).flatMap { Int($0) } ?? reply.body.count
            #expect((headerLength < reply.body.count) == binary.contains(true))
            let response = try JSONDecoder().decode(InferenceResponse.self, from: reply.body.prefix(headerLength))
            #expect(response.id == "b" && response.outputs.map(\.name) == model.outputNames)
            var offset = headerLength
            for (index, output) in response.outputs.enumerated() {
                #expect(output.shape == [3] + expected[index].shape.dimensions)
                if binary[index] {
                    let size = try #require(output.parameters?.binaryDataSize)
                    #expect(output.data == nil && size == expected[index].values.count * 4)
                    #expect(Self.floats(reply.body.subdata(in: reply.body.startIndex + offset ..< reply.body.startIndex + offset + size)) == expected[index].values)
                    offset += size
                } else {
                    #expect(output.data?.values == expected[index].values)
                }
            }
            #expect(offset == reply.body.count)
        }
        try await server.stop()
    }

    @Test("A large input (a 224 × 224 × 3 image) as binary data")
    func largeInput() async throws {
        let input = Input(width: 224, height: 224, channels: 3)
        let model = try Model(input: input, output: input
            --> Convolution(kernel: (3, 3), channels: 4, stride: (4, 4), activation: .relu, name: "c")
            --> GlobalAveragePooling(name: "pool"))
        try model.compile(from: RandomParameterSource(seed: 23))
        let server = try await TestServer([try ServedModel(name: "big", model: model)])
        let image = try ServeFixtures.tensor(batch: 2, shape: model.inputShapes[0], seed: 24)
        var body = try JSONEncoder().encode(InferenceRequest(inputs: [
            InputTensor(name: model.inputNames[0], shape: [2, 224, 224, 3], parameters: ProtocolParameters(binaryDataSize: image.values.count * 4)),
        ]))
        let jsonLength = body.count
        body.append(Self.littleEndian(image.values))
        let reply = try await server.post("/v2/models/big/infer", body: body, headers: [BinaryTensorData.headerLengthField: String(jsonLength)])
        #expect(reply.status == 200)
        #expect(try reply.decoded(InferenceResponse.self).outputs[0].data?.values == model.predict(image).values)
        try await server.stop()
    }
}
