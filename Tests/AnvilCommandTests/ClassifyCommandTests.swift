import Anvil
import AnvilModels
import AnvilVision
import Foundation
import Testing
@testable import AnvilTestSupport

/// End-to-end: `anvil classify` on a real photo, checked against the library doing the same
/// steps (ImagePreprocessing → predict → top-k) in process.
@Suite("anvil classify", .serialized)
struct ClassifyCommandTests {
    /// The zoo's reduced ResNet-18 fixture (72 × 72 input, 100 classes, logits).
    @Test func modelFileMatchesTheLibrary() throws {
        let directory = try ClassifySupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let labelFile = directory.appendingPathComponent("labels.txt")
        let names = (0 ..< 100).map { "thing \($0)" }
        try (names.joined(separator: "\n") + "\n").write(to: labelFile, atomically: true, encoding: .utf8)

        let fixture = ClassifySupport.zooFixture("resnet18")
        let (status, output, errors) = try ClassifySupport.run([
            "classify", "--model", fixture.path, "--preset", "pytorch", "--labels", labelFile.path, "--top", "5",
            ClassifySupport.photo.path,
        ])
        #expect(status == 0, "\(output)\(errors)")
        #expect(output.contains("preset pytorch (--preset): shorter side 82 (bilinear), centre crop 72×72, RGB"))
        #expect(output.contains("100 logits, softmax applied"))

        let model = try ModelFile(contentsOf: fixture).compiledModel()
        let input = try ImagePreprocessing.pytorch(size: 72).preprocess(contentsOf: ClassifySupport.photo)
        let scores = try model.predict(Tensor(batch: 1, shape: model.inputShapes[0], values: input)).values
        let expected = try scores.top(k: 5, labels: Labels(names), scores: .logits)
        let printed = ClassifySupport.rankedLines(output)
        #expect(printed.map(\.index) == expected.map(\.index))
        #expect(printed.map(\.label) == expected.map(\.label))
        for (line, p) in zip(printed, expected) { #expect(abs(line.percent - Double(p.probability) * 100) <= 0.005 + 1e-9) }
    }

    /// A zoo name with a `.safetensors` state_dict keyed by torchvision's module paths:
    /// full-size SqueezeNet 1.1 with random weights, the pytorch preset it chooses itself,
    /// and the built-in ImageNet labels.
    @Test func zooNameWithSafetensorsMatchesTheLibrary() throws {
        let directory = try ClassifySupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let reference = try SqueezeNet11.model()
        var parameters = try ClassifySupport.randomParameters(of: reference)
        // Random weights leave most class scores at ReLU's 0; distinct positive classifier
        // biases make every probability different, so the ranking is a real check.
        if let i = parameters.firstIndex(where: { $0.request.layer == "classifier_1" && $0.request.kind == .biases }) {
            parameters[i].values = (0 ..< 1000).map { Float(($0 * 7919) % 1000) / 250 }
        }
        // torchvision's keys: features_3_squeeze → features.3.squeeze.weight.
        let keyed = parameters.map { (key: $0.request.layer.replacingOccurrences(of: "_", with: ".") + "."
                                          + SafetensorsParameterSource.Naming.pytorchSuffix($0.request.kind), values: $0.values) }
        let weights = directory.appendingPathComponent("squeezenet1_1.safetensors")
        try ClassifySupport.writeSafetensors(keyed, to: weights)

        let (status, output, errors) = try ClassifySupport.run([
            "classify", "--model", "squeezenet1_1", "--weights", weights.path, ClassifySupport.photo.path, ClassifySupport.photo.path,
        ])
        #expect(status == 0, "\(output)\(errors)")
        #expect(output.contains("preset pytorch: shorter side 256 (bilinear), centre crop 224×224"))
        #expect(output.contains("labels: ImageNet (1000 classes, built in); outputs: 1000 probabilities (the model ends with Softmax)"))
        #expect(output.contains("layout pytorch"))

        try reference.compile(layout: .pytorch, from: ArrayParameterSource(Dictionary(uniqueKeysWithValues: parameters.map { ($0.request.tensorName, $0.values) })))
        let input = try ImagePreprocessing.pytorch().preprocess(contentsOf: ClassifySupport.photo)
        let probabilities = try reference.predict(Tensor(batch: 1, shape: reference.inputShapes[0], values: input)).values
        let expected = try probabilities.top(k: 5, labels: Labels(ImageNet.classNames))
        let printed = ClassifySupport.rankedLines(output)
        #expect(printed.count == 10)  // two images, five lines each
        #expect(printed.prefix(5).map(\.index) == expected.map(\.index))
        #expect(printed.prefix(5).map(\.label) == expected.map(\.label))
        #expect(printed.suffix(5).map(\.index) == expected.map(\.index))
        for (line, p) in zip(printed, expected) { #expect(abs(line.percent - Double(p.probability) * 100) <= 0.005 + 1e-9) }
        #expect(Set(expected.map(\.probability)).count == 5)
    }

    /// A small network built with the DSL and saved with `writeModelFile` + a blob: it ends
    /// with Softmax, so its outputs are taken as probabilities; the caffe preset is asked for.
    @Test func selfBuiltModelFileWithCaffePreset() throws {
        let directory = try ClassifySupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = Input(width: 32, height: 32, channels: 3, name: "image")
        let output = input
            --> Convolution(kernel: (3, 3), channels: 8, stride: (2, 2), padding: .same, activation: .relu, name: "conv")
            --> GlobalAveragePooling(name: "pool")
            --> Dense(neurons: 4, name: "fc")
            --> Softmax(name: "probabilities")
        let model = try Model(input: input, output: output)
        let parameters = try ClassifySupport.randomParameters(of: model, seed: 11).map { ($0.request.tensorName, $0.values.map { $0 * 0.02 }) }
        var blob = Data(), index: [(String, JSONValue)] = []
        for (name, values) in parameters {
            index.append((name, .object([("offset", .int(blob.count)), ("count", .int(values.count))])))
            values.withUnsafeBufferPointer { blob.append(Data(buffer: $0)) }
        }
        try blob.write(to: directory.appendingPathComponent("weights.bin"))
        let modelFile = directory.appendingPathComponent("model.json")
        try model.writeModelFile(to: modelFile, name: "four-colours", parameters: .object([
            ("layout", .string("forge")),
            ("source", .object([("type", .string("blob")), ("path", .string("weights.bin")), ("tensors", .object(index))])),
        ]))
        let labels = directory.appendingPathComponent("labels.txt")
        try "red\ngreen\nblue\ngrey\n".write(to: labels, atomically: true, encoding: .utf8)

        let (status, text, errors) = try ClassifySupport.run([
            "classify", "--model", modelFile.path, "--preset", "caffe", "--labels", labels.path, "--top", "3", ClassifySupport.photo.path,
        ])
        #expect(status == 0, "\(text)\(errors)")
        #expect(text.contains("preset caffe (--preset): shorter side 37 (bilinear), centre crop 32×32, BGR, x − (103.939, 116.779, 123.68)"))
        #expect(text.contains("4 probabilities (the model ends with Softmax)"))

        let compiled = try ModelFile(contentsOf: modelFile).compiledModel()
        let values = try ImagePreprocessing.caffe(size: 32).preprocess(contentsOf: ClassifySupport.photo)
        let probabilities = try compiled.predict(Tensor(batch: 1, shape: compiled.inputShapes[0], values: values)).values
        let expected = try probabilities.top(k: 3, labels: Labels(["red", "green", "blue", "grey"]))
        let printed = ClassifySupport.rankedLines(text)
        #expect(printed.map(\.label) == expected.map(\.label))
        for (line, p) in zip(printed, expected) { #expect(abs(line.percent - Double(p.probability) * 100) <= 0.005 + 1e-9) }
    }

    @Test func aModelFileNamedAfterAZooNetworkTakesItsPreset() throws {
        let directory = try ClassifySupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // The inception fixture's graph, renamed "inception_v3": no --preset needed. --weights
        // (the original model file) supplies the parameters instead of the copy's own.
        let fixture = ClassifySupport.zooFixture("inception_v3")
        var text = try String(contentsOf: fixture, encoding: .utf8)
        text = text.replacingOccurrences(of: "\"name\": \"inception_v3-reduced\"", with: "\"name\": \"inception_v3\"")
        let renamed = directory.appendingPathComponent("model.json")
        try text.write(to: renamed, atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(at: fixture.deletingLastPathComponent().appendingPathComponent("weights.bin"),
                                         to: directory.appendingPathComponent("weights.bin"))
        let (status, output, errors) = try ClassifySupport.run([
            "classify", "--model", renamed.path, "--weights", fixture.path, "--top", "2", ClassifySupport.photo.path,
        ])
        #expect(status == 0, "\(output)\(errors)")
        #expect(output.contains("preset inception: shorter side 159 (bilinear), centre crop 139×139, RGB, x/127.5 − (1, 1, 1)"))
        #expect(ClassifySupport.rankedLines(output).count == 2)
    }

    @Test func errorsAreClear() throws {
        let photo = ClassifySupport.photo.path
        var r = try ClassifySupport.run(["classify", "--model", "resnet50", photo])
        #expect(r.status != 0 && r.errors.contains("needs --weights"), "\(r.errors)")
        r = try ClassifySupport.run(["classify", "--model", "no-such-net", photo])
        #expect(r.status != 0 && r.errors.contains("neither a zoo network"), "\(r.errors)")
        r = try ClassifySupport.run(["classify", "--model", "mnist", photo])
        #expect(r.status != 0 && r.errors.contains("anvil mnist"), "\(r.errors)")
        r = try ClassifySupport.run(["classify", "--model", ClassifySupport.zooFixture("resnet18").path, photo])
        #expect(r.status != 0 && r.errors.contains("--preset"), "\(r.errors)")
        r = try ClassifySupport.run(["classify", "--model", ClassifySupport.zooFixture("resnet18").path, "--preset", "pytorch",
                                     "--labels", "Weights/imagenet/classes.txt", photo])
        #expect(r.status != 0 && r.errors.contains("1000 labels, expected 100"), "\(r.errors)")
        r = try ClassifySupport.run(["classify", "--model", ClassifySupport.zooFixture("resnet18").path, "--preset", "tensorflow", photo])
        #expect(r.status != 0 && r.errors.contains("preset"), "\(r.errors)")
    }

    @Test func aCorruptImageIsReportedAndTheOthersStillClassified() throws {
        let directory = try ClassifySupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let photo = try Data(contentsOf: ClassifySupport.photo)
        let truncated = directory.appendingPathComponent("truncated.jpg")
        try photo.prefix(10_000).write(to: truncated)
        let (status, output, errors) = try ClassifySupport.run([
            "classify", "--model", ClassifySupport.zooFixture("squeezenet1_1").path, "--preset", "pytorch", "--top", "1",
            truncated.path, ClassifySupport.photo.path,
        ])
        #expect(status == 1)
        #expect(errors.contains("\(truncated.path): cannot decode image: JPEG data is truncated"), "\(errors)")
        #expect(output.contains("  error: cannot decode image"))
        #expect(ClassifySupport.rankedLines(output).count == 1)
    }
}
