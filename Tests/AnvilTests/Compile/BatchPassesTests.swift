import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// ``BatchPasses``: which first steps of a batch run a few images at a time. Whole models in
/// passes are checked against the reference in ``ReferenceLayerTests`` (random DAGs, several
/// inputs and outputs); the allocation count in ``AllocationTests``.
@Suite struct BatchPassesTests {
    @Test("A worked example: the passes end at the last step that spills the budget; a pass is what its largest step fits")
    func workedExample() {
        // Budget 4,800 bytes = 1,200 floats. At batch 8, steps of more than 150 floats per image
        // spill: steps 1, 2 and 3. The largest of steps 0...3 takes 400 floats: 3 images per pass.
        let plan = BatchPasses.plan(footprints: [100, 400, 300, 200, 50, 10], parameters: [10, 10, 10, 10, 10, 100_000],
                                    batch: 8, budgetBytes: 4_800)
        #expect(plan == BatchPasses(stepCount: 4, size: 3))
        #expect(plan?.count(batch: 8) == 3)  // 3 + 3 + 2
        #expect(plan?.description == "the first 4 steps 3 images at a time")
    }

    @Test("No passes at batch 1, with no budget, when every step's batch fits, for fewer than four steps, or passes of more than half the batch")
    func noPasses() {
        #expect(BatchPasses.plan(footprints: [100, 400, 100, 1_000], parameters: [0, 0, 0, 0], batch: 1, budgetBytes: 100) == nil)
        #expect(BatchPasses.plan(footprints: [100, 400, 100, 1_000], parameters: [0, 0, 0, 0], batch: 8, budgetBytes: 0) == nil)
        #expect(BatchPasses.plan(footprints: [100, 200, 100, 200], parameters: [0, 0, 0, 0], batch: 8, budgetBytes: 6_400) == nil)
        // 6,400 bytes hold 4 images of 400 floats: at batch 9, passes of 4, 4 and 1; at batch 7 a
        // pass would be more than half the batch.
        #expect(BatchPasses.plan(footprints: [100, 400, 100, 400], parameters: [0, 0, 0, 0], batch: 9, budgetBytes: 6_400)
            == BatchPasses(stepCount: 4, size: 4))
        #expect(BatchPasses.plan(footprints: [100, 400, 100, 400], parameters: [0, 0, 0, 0], batch: 8, budgetBytes: 6_400)
            == BatchPasses(stepCount: 4, size: 4))
        #expect(BatchPasses.plan(footprints: [100, 400, 100, 400], parameters: [0, 0, 0, 0], batch: 7, budgetBytes: 6_400) == nil)
        #expect(BatchPasses.plan(footprints: [100, 100, 400], parameters: [0, 0, 0], batch: 9, budgetBytes: 6_400) == nil)
        #expect(BatchPasses.plan(footprints: [], parameters: [], batch: 8, budgetBytes: 100) == nil)
    }

    @Test("A step whose weights outweigh its activations at the whole batch ends the passes before it")
    func weightHeavyStep() {
        // Step 4 reads 1,000 floats per image (8,000 at batch 8) and has 9,000 weights.
        let footprints = [500, 600, 700, 800, 1_000, 900]
        #expect(BatchPasses.plan(footprints: footprints, parameters: [0, 0, 0, 0, 9_000, 0], batch: 8, budgetBytes: 4_000)
            == BatchPasses(stepCount: 4, size: 1))
        #expect(BatchPasses.plan(footprints: footprints, parameters: [0, 0, 0, 0, 8_000, 0], batch: 8, budgetBytes: 4_000)
            == BatchPasses(stepCount: 6, size: 1))
        // Cut before step 2: too few steps left.
        #expect(BatchPasses.plan(footprints: footprints, parameters: [0, 0, 6_000, 0, 0, 0], batch: 8, budgetBytes: 4_000) == nil)
    }

    @Test("The plan's properties hold for random step lists")
    func randomProperties() {
        var rng = RefRandom(seed: 7)
        var planned = 0
        for trial in 0 ..< 2_000 {
            let count = rng.int(1 ... 12), batch = rng.int(1 ... 9)
            let footprints = (0 ..< count).map { _ in rng.int(0 ... 1_000) }
            let parameters = (0 ..< count).map { _ in rng.int(0 ... 9) == 0 ? rng.int(0 ... 20_000) : rng.int(0 ... 100) }
            let budget = rng.int(0 ... 40_000)
            func fits(_ step: Int) -> Bool { footprints[step] * 4 * batch <= budget }
            func heavy(_ step: Int) -> Bool { parameters[step] > footprints[step] * batch }
            let context = "trial \(trial): footprints \(footprints), parameters \(parameters), batch \(batch), budget \(budget)"
            guard let plan = BatchPasses.plan(footprints: footprints, parameters: parameters, batch: batch, budgetBytes: budget) else {
                // Without passes: nothing to split, every step before a weight-heavy one fits at
                // the whole batch (passes there would gain nothing), or fewer than the minimum of
                // steps would run in passes.
                let firstHeavy = (0 ..< count).first(where: heavy) ?? count
                let fitBeforeHeavy = (0 ..< firstHeavy).allSatisfy(fits)
                let lastSpill = (0 ..< count).last { !fits($0) } ?? -1
                let end = min(firstHeavy, lastSpill + 1)
                let tooFew = end < BatchPasses.minimumSteps
                let tooLarge = (footprints[0 ..< max(end, 0)].max()).map { $0 > 0 && budget / ($0 * 4) * 2 > batch } ?? false
                #expect(batch == 1 || budget == 0 || (0 ..< count).allSatisfy(fits) || fitBeforeHeavy || tooFew || tooLarge, "\(context)")
                continue
            }
            planned += 1
            #expect((BatchPasses.minimumSteps ... count).contains(plan.stepCount), "\(context)")
            #expect(plan.size >= 1 && plan.size * 2 <= batch, "\(context)")
            #expect(!(0 ..< plan.stepCount).contains(where: heavy), "\(context): a weight-heavy step runs in passes")
            // The passes end at a step that spills, or before a weight-heavy one; after them, every
            // step's batch fits unless a weight-heavy step ended them.
            let endedByWeights = plan.stepCount < count && heavy(plan.stepCount)
            #expect(endedByWeights || !fits(plan.stepCount - 1), "\(context)")
            #expect(endedByWeights || (plan.stepCount ..< count).allSatisfy(fits), "\(context)")
            let largest = footprints[0 ..< plan.stepCount].max()!
            #expect(plan.size == 1 || plan.size * largest * 4 <= budget, "\(context): a pass spills the budget")
            #expect((plan.size + 1) * largest * 4 > budget, "\(context): a pass could take one more image")
        }
        #expect(planned > 200, "the random cases exercise the passes (\(planned) of 2,000)")
    }

    @Test("Model.batchPasses: an open input size needs its shapes, the batch must be positive, and a larger size gets longer passes")
    func modelBatchPasses() throws {
        let input = Input(channels: 3)
        let model = try Model(input: input, output: input
            --> Convolution(kernel: (3, 3), channels: 16, activation: .relu, name: "a")
            --> DepthwiseConvolution(kernel: (3, 3), name: "b")
            --> Convolution(kernel: (1, 1), channels: 8, name: "c")
            --> DepthwiseConvolution(kernel: (3, 3), name: "d"))
        try model.compile(from: RandomParameterSource(seed: 2))
        #expect {
            _ = try model.batchPasses(batch: 4)
        } throws: { error in
            (error as? AnvilError)?.message.contains("open input size") == true
        }
        let small = Shape(height: 8, width: 8, channels: 3), large = Shape(height: 32, width: 32, channels: 3)
        #expect {
            _ = try model.batchPasses(batch: 0, inputShapes: [small])
        } throws: { error in
            (error as? AnvilError)?.message.contains("batch must be at least 1") == true
        }
        // The largest step, the first depthwise convolution, reads and writes 16 floats per pixel.
        // A budget of two 8 × 8 images of it puts batch 8 of 8 × 8 images in passes of 2, and of
        // 32 × 32 images in passes of 1.
        let plans = try BatchPasses.$budgetOverride.withValue(2 * 8 * 8 * 32 * 4) {
            try [(8, small), (8, large), (1, large), (3, small)].map { try model.batchPasses(batch: $0, inputShapes: [$1]) }
        }
        #expect(plans[0] == BatchPasses(stepCount: 4, size: 2))
        #expect(plans[1] == BatchPasses(stepCount: 4, size: 1))
        #expect(plans[2] == nil)
        #expect(plans[3] == nil, "a pass of 2 is more than half of 3")
    }

    @Test("Cache sizes as sysfs writes them")
    func cacheSizes() {
        #expect(BatchPasses.parseCacheSize("32768K") == 33_554_432)
        #expect(BatchPasses.parseCacheSize("1M") == 1_048_576)
        #expect(BatchPasses.parseCacheSize("512") == 512)
        #expect(BatchPasses.parseCacheSize("K") == nil)
        #expect(BatchPasses.parseCacheSize("") == nil)
        if let bytes = BatchPasses.lastLevelCacheBytes() {
            #expect(bytes >= 1 << 18, "a last-level cache of \(bytes) bytes")
        }
    }
}
