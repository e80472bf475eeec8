// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Anvil",
    products: [
        .library(name: "Anvil", targets: ["Anvil"]),
        .library(name: "AnvilVision", targets: ["AnvilVision"]),
        .library(name: "AnvilModels", targets: ["AnvilModels"]),
        .library(name: "AnvilServe", targets: ["AnvilServe"]),
        .library(name: "AnvilONNX", targets: ["AnvilONNX"]),
        .executable(name: "anvil", targets: ["anvil"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // `anvil serve` (AnvilServe): the HTTP server, Prometheus text, graceful shutdown, logs.
        // Hummingbird without its default traits: no swift-configuration to build.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        // Reads .onnx files (AnvilONNX); the generated Proto/onnx.pb.swift matches this version.
        .package(url: "https://github.com/apple/swift-protobuf", exact: "1.39.0"),
        // `anvil serve --grpc-port` (AnvilServe): the KServe v2 gRPC API on HTTP/2. The generated
        // GRPC/Generated/*.swift match these versions (Scripts/dev/generate_grpc_proto.sh).
        .package(url: "https://github.com/grpc/grpc-swift-2", exact: "2.4.3"),
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport", from: "2.9.2"),
        .package(url: "https://github.com/grpc/grpc-swift-protobuf", exact: "2.4.1"),
    ],
    targets: [
        // OpenBLAS through pkg-config; Debian's libopenblas-dev provides it.
        .systemLibrary(
            name: "COpenBLAS",
            pkgConfig: "openblas",
            providers: [.apt(["libopenblas-dev"])]
        ),
        // stb_image (PNG/JPEG decoding) from Debian's libstb-dev.
        .systemLibrary(
            name: "CStb",
            pkgConfig: "stb",
            providers: [.apt(["libstb-dev"])]
        ),
        // Anvil's hand-vectorised kernels: a body per instruction set (scalar/, x86_avx2/, x86_avx512/), chosen at run time.
        .target(name: "CAnvilKernels"),
        .target(
            name: "Anvil",
            dependencies: ["COpenBLAS", "CAnvilKernels"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "AnvilVision",
            dependencies: ["CStb"]
        ),
        .target(
            name: "AnvilModels",
            dependencies: ["Anvil"]
        ),
        // Opens .onnx files: the ONNX importer (Sources/AnvilONNX/README.md), the one implementation
        // of ONNX conversion (Scripts/convert_onnx.py runs it through `anvil convert`).
        .target(
            name: "AnvilONNX",
            dependencies: ["Anvil", .product(name: "SwiftProtobuf", package: "swift-protobuf")],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        // `anvil serve`: the KServe Open Inference Protocol v2 over HTTP and gRPC, with Triton's
        // configuration, statistics and repository extensions; requests batched by a `Runner`,
        // Prometheus metrics, graceful shutdown.
        .target(
            name: "AnvilServe",
            dependencies: [
                "Anvil",
                "AnvilModels",
                "AnvilONNX",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCNIOTransportHTTP2Posix", package: "grpc-swift-nio-transport"),
                .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
            ],
            // The .proto the generated code comes from is kept beside it, not compiled.
            exclude: ["GRPC/Proto"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .executableTarget(
            name: "anvil",
            dependencies: [
                "Anvil",
                "AnvilONNX",
                "AnvilVision",
                "AnvilModels",
                "AnvilServe",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Test support only: counts heap allocations to prove `predict` makes none.
        .target(name: "CAllocationCounter"),
        // Test support only: kernel bodies of instruction sets the CPU may lack (AVX-512), built
        // from their own sources on emulated intrinsics so every machine's tests run them.
        .target(name: "CAnvilKernelsEmulated", dependencies: ["CAnvilKernels"], path: "Tests/CAnvilKernelsEmulated"),
        // Helpers and fixtures the test targets share (not a product): paths, the shared fixtures
        // (mnist/, zoo/), the float64 reference implementation, the random generator, the
        // command runner, the failure helpers. Public API of Anvil only (it is built by a plain
        // `swift build` too, where nothing is compiled for testing); test targets import it
        // with `@testable`.
        .target(
            name: "AnvilTestSupport",
            dependencies: ["Anvil"],
            path: "Tests/AnvilTestSupport",
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "AnvilVisionTests",
            dependencies: ["AnvilVision", "AnvilTestSupport"],
            resources: [.copy("Fixtures")]
        ),
        // The engine: layers, kernels, compile, model files, parameters, errors.
        .testTarget(
            name: "AnvilTests",
            dependencies: ["Anvil", "AnvilModels", "AnvilTestSupport", "CAllocationCounter", "CAnvilKernels",
                           "CAnvilKernelsEmulated"],
            resources: [.copy("Fixtures")]
        ),
        // The model zoo: catalog, zoo networks against PyTorch, ImageNet labels and weights, MNIST.
        .testTarget(
            name: "AnvilModelsTests",
            dependencies: ["Anvil", "AnvilModels", "AnvilVision", "AnvilTestSupport"]
        ),
        // The ONNX importer: .onnx files against ONNX Runtime and the ONNX node tests, hostile files.
        .testTarget(
            name: "AnvilONNXTests",
            dependencies: ["AnvilONNX", "AnvilTestSupport", .product(name: "SwiftProtobuf", package: "swift-protobuf")],
            resources: [.copy("Fixtures")]
        ),
        // The `anvil` command-line tool, run as a process.
        .testTarget(
            name: "AnvilCommandTests",
            dependencies: ["Anvil", "AnvilModels", "AnvilVision", "AnvilTestSupport"]
        ),
        // `anvil serve`'s server, started on a loopback port and spoken to over real HTTP.
        .testTarget(
            name: "AnvilServeTests",
            dependencies: ["Anvil", "AnvilModels", "AnvilServe", "AnvilTestSupport",
                           .product(name: "GRPCCore", package: "grpc-swift-2"),
                           .product(name: "GRPCNIOTransportHTTP2Posix", package: "grpc-swift-nio-transport"),
                           .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
                           .product(name: "SwiftProtobuf", package: "swift-protobuf")],
            // Triton's Python client checks, run by TritonClientTests with the venv's python3.
            exclude: ["Clients"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// `ANVIL_PACKAGE_SCOPE=engine` leaves out the server and the command-line tool (and so the
// HTTP/2, TLS and gRPC packages they pull in): the AddressSanitizer pass of
// Scripts/dev/sanitize.sh builds only the engine, the importer, the image code and their tests.
if Context.environment["ANVIL_PACKAGE_SCOPE"] == "engine" {
    let serving: Set<String> = ["AnvilServe", "anvil", "AnvilServeTests", "AnvilCommandTests"]
    package.targets.removeAll { serving.contains($0.name) }
    package.products.removeAll { serving.contains($0.name) }
}
