import Testing
@testable import Anvil

/// The one convolution choice: its order of preference under every `ANVIL_CONVOLUTION` value,
/// and the override's parsing. (The cost model's crossovers are checked in WinogradTests.)
@Suite("Convolution selection")
struct ConvolutionSelectionTests {
    private func geometry(_ kernel: Int, size: Int = 28, channels: Int = 64, stride: Int = 1) throws -> WindowGeometry {
        try WindowGeometry(input: Shape(height: size, width: size, channels: channels), kernel: (kernel, kernel),
                           stride: (stride, stride), dilation: (1, 1), padding: .same)
    }

    private func choose(_ g: WindowGeometry, inputs: Int = 64, outputs: Int = 64, groups: Int = 1,
                        _ override: ConvolutionOverride) -> ConvolutionAlgorithm {
        ConvolutionSelection.algorithm(geometry: g, inputChannels: inputs, outputChannels: outputs, groups: groups,
                                       override: override, millisecondsPerMegabyte: 0.4)
    }

    @Test func orderOfPreference() throws {
        let threeByThree = try geometry(3), fiveByFive = try geometry(5), strided = try geometry(3, stride: 2)
        let pixel = try geometry(1, size: 1)
        // Depthwise whatever the override.
        for override in ConvolutionOverride.allCases {
            #expect(choose(threeByThree, groups: 64, override) == .depthwise)
        }
        #expect(choose(threeByThree, .auto) == .winogradF4x4)
        #expect(choose(fiveByFive, .auto) == .winograd5x5)
        #expect(choose(strided, .auto) == .direct)
        #expect(choose(pixel, inputs: 1024, outputs: 1000, .auto) == .fullyConnected)
        #expect(choose(threeByThree, groups: 2, .auto) == .im2col)
        // Fewer than 8 inputs: no Winograd of either size.
        #expect(choose(threeByThree, inputs: 3, .auto) == .direct)
        #expect(choose(fiveByFive, inputs: 3, .auto) == .direct)
    }

    @Test func overrides() throws {
        let threeByThree = try geometry(3), fiveByFive = try geometry(5), strided = try geometry(3, stride: 2)
        #expect(choose(threeByThree, .winograd2) == .winogradF2x2)
        #expect(choose(threeByThree, .winograd4) == .winogradF4x4)
        #expect(choose(strided, .winograd4) == .direct)
        #expect(choose(fiveByFive, .winograd2) == .winograd5x5)
        #expect(choose(threeByThree, .direct) == .direct)
        #expect(choose(fiveByFive, .direct) == .direct)
        #expect(choose(threeByThree, .im2col) == .im2col)
        #expect(choose(fiveByFive, .im2col) == .im2col)
        #expect(choose(strided, .im2col) == .im2col)
        // gemm: Winograd's own choice, priced against im2col, and im2col instead of the direct kernel.
        #expect(choose(threeByThree, .gemm) == .winogradF4x4)
        #expect(choose(strided, .gemm) == .im2col)
        #expect(choose(fiveByFive, .gemm) == .im2col)
    }

    @Test func parsesTheEnvironmentValue() throws {
        #expect(try ConvolutionOverride.parse(nil).get() == .auto)
        #expect(try ConvolutionOverride.parse("").get() == .auto)
        for value in ConvolutionOverride.allCases {
            #expect(try ConvolutionOverride.parse(value.rawValue).get() == value)
        }
        let error = #expect(throws: AnvilError.self) { try ConvolutionOverride.parse("winograd8").get() }
        #expect(error?.code == .invalidOption)
        #expect(error?.message.contains("ANVIL_CONVOLUTION=winograd8") == true)
        #expect(error?.message.contains("winograd4") == true)
    }
}
