// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Anvil",
    products: [
        .library(name: "Anvil", targets: ["Anvil"]),
        .library(name: "AnvilVision", targets: ["AnvilVision"]),
        .library(name: "AnvilModels", targets: ["AnvilModels"]),
        .executable(name: "anvil", targets: ["anvil"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
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
        .executableTarget(
            name: "anvil",
            dependencies: [
                "Anvil",
                "AnvilVision",
                "AnvilModels",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Test support only: counts heap allocations to prove `predict` makes none.
        .target(name: "CAllocationCounter"),
        .testTarget(
            name: "AnvilVisionTests",
            dependencies: ["AnvilVision"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "AnvilTests",
            dependencies: ["Anvil", "AnvilVision", "AnvilModels", "CAllocationCounter", "CAnvilKernels"],
            resources: [.copy("Fixtures")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
