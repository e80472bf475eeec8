import Anvil
import Foundation

/// ConvTranspose, Resize / Upsample, Pad (folded into the next window when exact), the
/// normalisations, LRN and Lp pooling (onnx_ops/layers.py).
extension ONNXConverter {
    static func registerSpatialAndNormalizationOperators(_ table: inout [String: (ONNXConverter) -> (Onnx_NodeProto, Int) throws -> Void]) {
        table["ConvTranspose"] = { $0.opConvTranspose }
        table["Resize"] = { $0.opResize }
        table["GridSample"] = { $0.opGridSample }
        table["Upsample"] = { $0.opUpsample }
        table["Pad"] = { $0.opPad }
        table["InstanceNormalization"] = { $0.opInstanceNormalization }
        table["LayerNormalization"] = { $0.opLayerNormalization }
        table["GroupNormalization"] = { $0.opGroupNormalization }
        table["LRN"] = { $0.opLRN }
        table["LpPool"] = { $0.opLpPool }
        table["GlobalLpPool"] = { $0.opGlobalLpPool }
    }

    /// ONNX's coordinate_transformation_mode -> the engine's.
    static let coordinateModes: [String: Resize.Coordinates] = [
        "half_pixel": .halfPixel, "pytorch_half_pixel": .pytorchHalfPixel, "align_corners": .alignCorners,
        "asymmetric": .asymmetric, "half_pixel_symmetric": .halfPixelSymmetric, "tf_crop_and_resize": .tfCropAndResize,
    ]
    /// ONNX's nearest_mode -> the engine's.
    static let nearestModes: [String: Resize.NearestRounding] = [
        "round_prefer_floor": .roundPreferFloor, "round_prefer_ceil": .roundPreferCeil, "floor": .floor, "ceil": .ceil,
    ]

    /// `ConvTranspose` (2-D, or 1-D on a sequence): TransposedConvolution with explicit pads.
    func opConvTranspose(_ node: Onnx_NodeProto, _ index: Int) throws {
        let operands = try convolutionOperands(node, what: "transposed convolutions")
        let (tensor, oneD, weights, bias) = (operands.tensor, operands.oneD, operands.weights, operands.bias)
        var a = operands.attributes
        if operands.widened {
            a.outputPadding = a.outputPadding.map { [0] + $0 }
            a.outputShape = a.outputShape.map { [1] + $0 }
        }
        let inputs = weights.shape[0], perGroup = weights.shape[1]
        let groups = try NodeAttributes(node).int("group", 1)
        let dims: [Int?] = oneD ? [1] + tensor.shape : tensor.shape
        let channels = dims[2]!
        guard groups >= 1, inputs == channels, channels % groups == 0 else {
            throw fail(node, "weights \(weights.shape) with group \(groups) do not match \(channels) input channels")
        }
        let kernel = a.kernel ?? [weights.shape[2], weights.shape[3]]
        let stride = a.strides ?? [1, 1], dilation = a.dilations ?? [1, 1]
        var outputPadding = a.outputPadding ?? [0, 0]
        guard kernel.count == 2, stride.count == 2, dilation.count == 2, outputPadding.count == 2 else {
            throw fail(node, "only 2-D transposed convolutions are supported")
        }
        let openAxes = (dims[0] == nil, dims[1] == nil)
        if (openAxes.0 || openAxes.1) && a.outputShape != nil {
            throw fail(node, "output_shape on an open input size (it fixes the output size); pass --input-shape C,H,W")
        }
        let size = [dims[0] ?? 64, dims[1] ?? 64]
        var full: [Int] = (0 ..< 2).map { (i: Int) -> Int in
            let span: Int = stride[i] * (size[i] - 1) + outputPadding[i]
            return span + (kernel[i] - 1) * dilation[i] + 1
        }
        var pads: [Int]
        if a.outputShape != nil || a.autoPad == "SAME_UPPER" || a.autoPad == "SAME_LOWER" {
            let shape = Array((a.outputShape ?? zip(stride, size).map(*)).suffix(2))
            guard shape.count == 2 else { throw fail(node, "output_shape \(a.outputShape ?? []) needs 2 values") }
            let totals = zip(full, shape).map(-)
            let before = a.autoPad == "SAME_UPPER" ? totals.map { Self.floorDiv($0, 2) } : totals.map { $0 - Self.floorDiv($0, 2) }
            pads = [before[0], before[1], totals[0] - before[0], totals[1] - before[1]]
            for axis in 0 ..< 2 where pads[2 + axis] < 0 {
                outputPadding[axis] -= pads[2 + axis]
                full[axis] -= pads[2 + axis]
                pads[2 + axis] = 0
            }
        } else if a.autoPad == "NOTSET" || a.autoPad == "VALID" {
            pads = a.autoPad == "NOTSET" ? (a.pads ?? [0, 0, 0, 0]) : [0, 0, 0, 0]
            guard pads.count == 4 else { throw fail(node, "only 2-D pads are supported") }
        } else {
            throw fail(node, "auto_pad '\(a.autoPad)' is not supported")
        }
        if pads.min()! < 0 { throw fail(node, "negative pads \(pads) are not supported") }
        for i in 0 ..< 2 where outputPadding[i] < 0 || outputPadding[i] >= max(stride[i], dilation[i]) {
            throw fail(node, "output_padding \(outputPadding) must be below the stride or dilation")
        }
        let oh = full[0] - pads[0] - pads[2], ow = full[1] - pads[1] - pads[3]
        guard oh >= 1, ow >= 1 else { throw fail(node, "pads \(pads) leave no output") }
        var parameters = [("W", weights.floats)]
        if let bias { parameters.append(("b", bias.floats)) }
        let outputs = perGroup * groups
        let name = try add(node, [tensor.name], parameters: parameters) {
            TransposedConvolution(kernel: Self.pair(kernel), channels: outputs, stride: Self.pair(stride),
                                  padding: .explicit(top: pads[0], left: pads[1], bottom: pads[2], right: pads[3]),
                                  outputPadding: Self.pair(outputPadding), dilation: Self.pair(dilation), groups: groups,
                                  useBias: bias != nil, name: $0)
        }
        let height: Int? = openAxes.0 ? nil : oh, width: Int? = openAxes.1 ? nil : ow
        try set(node, ComputedTensor(name, oneD ? [width, outputs] : [height, width, outputs]))
    }

    /// Python's floor division.
    static func floorDiv(_ a: Int, _ b: Int) -> Int {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    /// A Resize from `scales` or `sizes` (N, C, H, W): mode, coordinate transform, nearest rounding,
    /// cubic options, antialias, tf_crop_and_resize's `roi` (8 values, starts then ends) and
    /// extrapolation value, and keep_aspect_ratio_policy (one scale for H and W, the sizes
    /// rounded from it) over `aspectAxes`.
    func resize(_ node: Onnx_NodeProto, mode: String, coordinates: String, scales: ConstantTensor?, sizes: ConstantTensor?,
                nearest: String = "round_prefer_floor", cubicA: Double = -0.75, excludeOutside: Int = 0,
                antialias: Int = 0, roi: [Double]? = nil, extrapolation: Double = 0, keepAspect: String = "stretch",
                aspectAxes: [Int] = [0, 1, 2, 3]) throws {
        let tensor = try act(node)
        try requireSpatial(node, tensor)
        let modes: [String: Resize.Mode] = ["linear": .linear, "bilinear": .linear, "nearest": .nearest, "cubic": .cubic, "bicubic": .cubic]
        guard let anvilMode = modes[mode] else { throw fail(node, "mode '\(mode)' is not supported (nearest, linear, cubic)") }
        guard let coordinateMode = Self.coordinateModes[coordinates] else {
            throw fail(node, "coordinate_transformation_mode '\(coordinates)' is not supported")
        }
        guard let nearestMode = Self.nearestModes[nearest] else { throw fail(node, "nearest_mode '\(nearest)' is not supported") }
        let (h, w, c) = (tensor.shape[0], tensor.shape[1], tensor.shape[2]!)
        var options = ResizeOptions(coordinates: coordinateMode, mode: anvilMode, nearestRounding: nearestMode)
        if anvilMode == .cubic { (options.cubicCoefficient, options.excludeOutside) = (Float(cubicA), excludeOutside != 0) }
        // ONNX: antialias widens the linear and cubic filters only.
        if antialias != 0 && anvilMode != .nearest {
            options.antialias = true
            options.excludeOutside = excludeOutside != 0
        }
        if coordinates == "tf_crop_and_resize" {
            let edges = try cropRegion(node, roi).map { Float($0) }
            options.region = Resize.Region(top: edges[0], left: edges[1], bottom: edges[2], right: edges[3])
            options.extrapolationValue = Float(extrapolation)
        }
        if let sizes, sizes.count > 0 {
            let s = try sizes.integers()
            guard s.count == 4 else { throw fail(node, "sizes \(s) must have 4 values (N, C, H, W)") }
            if keepAspect != "stretch" {
                try keepAspectRatio(node, tensor, sizes: s, policy: keepAspect, axes: aspectAxes, options: options)
                return
            }
            guard s[0] == 1, s[1] == c else { throw fail(node, "sizes \(s) must keep N and C") }
            guard s[2] >= 1, s[3] >= 1, s[2] <= 1 << 20, s[3] <= 1 << 20 else { throw fail(node, "sizes \(s) are out of range") }
            let name = try add(node, [tensor.name]) { options.layer(size: (s[2], s[3]), scale: nil, name: $0) }
            try set(node, ComputedTensor(name, [s[2], s[3], c]))
            return
        }
        guard let scales, scales.count == 4 else { throw fail(node, "needs 4 scales or 4 sizes") }
        let values = scales.doubles
        guard values[0] == 1, values[1] == 1 else { throw fail(node, "scales \(values) must keep N and C") }
        func scaled(_ size: Int?, _ scale: Double) throws -> Int? {
            guard let size else { return nil }
            let out = (Double(size) * Double(Float(scale))).rounded(.down)
            guard out.isFinite, out >= 1, out <= Double(1 << 20) else { throw fail(node, "scales \(values) give an output size \(out)") }
            return Int(out)
        }
        let oh = try scaled(h, values[2]), ow = try scaled(w, values[3])
        let name = try add(node, [tensor.name]) { options.layer(size: nil, scale: (Float(values[2]), Float(values[3])), name: $0) }
        try set(node, ComputedTensor(name, [oh, ow, c]))
    }

    /// tf_crop_and_resize's `roi` (N, C, H, W starts, then ends, normalised) as Resize's `region`
    /// [top, left, bottom, right]; N and C must span 0 to 1 (no crop of the batch or channels).
    func cropRegion(_ node: Onnx_NodeProto, _ roi: [Double]?) throws -> [Double] {
        guard let roi, !roi.isEmpty else { throw fail(node, "coordinate_transformation_mode 'tf_crop_and_resize' needs the roi input") }
        guard roi.count == 8 else { throw fail(node, "roi \(roi) must have 8 values (starts then ends of N, C, H, W)") }
        guard roi[0] == 0, roi[1] == 0, roi[4] == 1, roi[5] == 1 else {
            throw fail(node, "roi \(roi) crops the batch or channel axis (only H and W can be cropped)")
        }
        guard roi.allSatisfy(\.isFinite) else { throw fail(node, "roi \(roi) must be finite") }
        return [roi[2], roi[3], roi[6], roi[7]]
    }

    /// keep_aspect_ratio_policy not_larger / not_smaller: ONNX's one scale (the smallest / largest
    /// of sizes / input over the resized `axes`: every axis, N and C included, when the node has no
    /// `axes`) and the output sizes rounded half up from it; N and C must keep their extent. A
    /// Resize with both size and scale.
    func keepAspectRatio(_ node: Onnx_NodeProto, _ tensor: ComputedTensor, sizes: [Int], policy: String, axes: [Int],
                         options: ResizeOptions) throws {
        guard policy == "not_larger" || policy == "not_smaller" else {
            throw fail(node, "keep_aspect_ratio_policy '\(policy)' is not supported (stretch, not_larger, not_smaller)")
        }
        guard let h = tensor.shape[0], let w = tensor.shape[1], let c = tensor.shape[2] else {
            throw fail(node, "keep_aspect_ratio_policy '\(policy)' on an open input size; pass --input-shape C,H,W")
        }
        guard sizes[0] == 1, sizes[1] == c else { throw fail(node, "sizes \(sizes) must keep N and C") }
        let extents = [1, c, h, w]  // the batch of one the converter's graphs have
        let ratios = axes.map { Double(sizes[$0]) / Double(extents[$0]) }
        let scale = policy == "not_larger" ? ratios.min()! : ratios.max()!
        let out = (0 ..< 4).map { axes.contains($0) ? Int((scale * Double(extents[$0]) + 0.5).rounded(.down)) : extents[$0] }
        guard out[0] == 1, out[1] == c else {
            throw fail(node, "keep_aspect_ratio_policy '\(policy)' over every axis gives scale \(scale), which resizes the batch and channels to \([out[0], out[1]]) (give the node axes [2, 3])")
        }
        guard out[2] >= 1, out[3] >= 1 else { throw fail(node, "keep_aspect_ratio_policy '\(policy)' of sizes \(sizes) leaves no output") }
        let name = try add(node, [tensor.name]) { options.layer(size: (out[2], out[3]), scale: (Float(scale), Float(scale)), name: $0) }
        try set(node, ComputedTensor(name, [out[2], out[3], c]))
    }

    /// `Resize`: nearest, linear or cubic, with antialias, tf_crop_and_resize (roi,
    /// extrapolation_value) and keep_aspect_ratio_policy.
    func opResize(_ node: Onnx_NodeProto, _ index: Int) throws {
        let a = NodeAttributes(node)
        let axes = try a.ints("axes").map { $0.map { (($0 % 4) + 4) % 4 } }
        if let axes, ![[0, 1, 2, 3], [2, 3], [3, 2]].contains(axes) {
            throw fail(node, "axes \(try a.ints("axes")!) are not supported")
        }
        let nearest = try a.string("nearest_mode", "round_prefer_floor")
        let cubicA = try a.float("cubic_coeff_a", -0.75), exclude = try a.int("exclude_outside", 0)
        let antialias = try a.int("antialias", 0), extrapolation = try a.float("extrapolation_value", 0)
        let keepAspect = try a.string("keep_aspect_ratio_policy", "stretch")
        if opset < 11 {
            try resize(node, mode: try a.string("mode", "nearest"), coordinates: "asymmetric", scales: try constant(node, 1), sizes: nil, nearest: "floor")
            return
        }
        let coordinates = try a.string("coordinate_transformation_mode", "half_pixel")
        // roi is read only by tf_crop_and_resize (other modes ignore it, as ONNX says).
        var roi = coordinates == "tf_crop_and_resize" ? try const(node, 1, required: false)?.doubles : nil
        var scales = try const(node, 2, required: false), sizes = try const(node, 3, required: false)
        if let axes, axes.count == 2 {
            let order = axes == [2, 3] ? [0, 1] : [1, 0]
            if let s = scales, s.count > 0 {
                guard s.count >= 2 else { throw fail(node, "scales \(s.doubles) need a value for each of its 2 axes") }
                let v = s.doubles
                scales = ConstantTensor(shape: [4], floats: [1, 1, Float(v[order[0]]), Float(v[order[1]])])
            } else { scales = nil }
            if let s = sizes, s.count > 0 {
                guard s.count >= 2 else { throw fail(node, "sizes \(try s.integers()) need a value for each of its 2 axes") }
                let v = try s.integers()
                let c = try act(node).shape[2] ?? 0
                sizes = ConstantTensor(shape: [4], integers: [1, Int64(c), Int64(v[order[0]]), Int64(v[order[1]])])
            } else { sizes = nil }
            if let r = roi, !r.isEmpty {
                guard r.count == 4 else { throw fail(node, "roi \(r) must have 4 values (starts then ends of axes \(try a.ints("axes")!))") }
                roi = [0, 0, r[order[0]], r[order[1]], 1, 1, r[2 + order[0]], r[2 + order[1]]]
            }
        }
        try resize(node, mode: try a.string("mode", "nearest"), coordinates: coordinates, scales: scales, sizes: sizes,
                   nearest: nearest, cubicA: cubicA, excludeOutside: exclude, antialias: antialias, roi: roi,
                   extrapolation: extrapolation, keepAspect: keepAspect,
                   aspectAxes: axes?.count == 2 ? [2, 3] : [0, 1, 2, 3])
    }

    /// `Upsample` (opset < 10): Resize with asymmetric coordinates.
    func opUpsample(_ node: Onnx_NodeProto, _ index: Int) throws {
        let a = NodeAttributes(node)
        let scales = try a.floats("scales").map { ConstantTensor(shape: [$0.count], floats: $0.map { Float($0) }) } ?? constant(node, 1)
        try resize(node, mode: try a.string("mode", "nearest"), coordinates: "asymmetric", scales: scales, sizes: nil, nearest: "floor")
    }

    /// `Pad` (constant, reflect, edge): Pad, or folded into the one window reading it.
    func opPad(_ node: Onnx_NodeProto, _ index: Int) throws {
        if try padsByTake(node) { return try padByTake(node) }
        let tensor = try act(node)
        try requireSpatial(node, tensor)
        let a = NodeAttributes(node)
        let mode = try a.string("mode", "constant")
        var pads: [Int], value: Double
        if opset < 11 {
            pads = try a.ints("pads") ?? a.ints("paddings") ?? []
            value = try a.float("value", 0)
        } else {
            pads = try constant(node, 1).integers()
            let c = try const(node, 2, required: false)
            value = (c != nil && c!.count > 0) ? c!.doubles[0] : 0
            if let axesValue = try const(node, 3, required: false) {
                let axes = try axesValue.integers().map { (($0 % 4) + 4) % 4 }
                guard pads.count == 2 * axes.count else { throw ImportFailure("pads \(pads) do not match axes \(axes)") }
                var full = [Int](repeating: 0, count: 8)
                for (i, axis) in axes.enumerated() { (full[axis], full[axis + 4]) = (pads[i], pads[i + axes.count]) }
                pads = full
            }
        }
        guard pads.count == 8 else { throw fail(node, "pads \(pads) must have 8 values (NCHW begins, then ends)") }
        guard ["constant", "reflect", "edge"].contains(mode) else { throw fail(node, "mode '\(mode)' is not supported (constant, reflect, edge)") }
        if pads.min()! < 0 { throw fail(node, "negative pads \(pads) (cropping) are not supported") }
        if pads.max()! > 1 << 20 { throw fail(node, "pads \(pads) are too large") }
        if pads[0] != 0 || pads[4] != 0 { throw fail(node, "pads \(pads) pad the batch axis") }
        let (top, left, bottom, right, front, back) = (pads[2], pads[3], pads[6], pads[7], pads[1], pads[5])
        if mode == "constant" && front == 0 && back == 0 {
            if try foldPad(node, tensor, [top, left, bottom, right], value) { return }
        }
        let padMode: Pad.Mode = mode == "reflect" ? .reflect : mode == "edge" ? .edge : .constant
        let name = try add(node, [tensor.name]) {
            Pad(top: top, left: left, bottom: bottom, right: right, front: front, back: back, mode: padMode, value: Float(value), name: $0)
        }
        try set(node, ComputedTensor(name, [tensor.shape[0].map { $0 + top + bottom }, tensor.shape[1].map { $0 + left + right }, tensor.shape[2]! + front + back]))
    }

    /// Folds a constant spatial Pad into the one Conv / AveragePool / MaxPool reading it when exact.
    func foldPad(_ node: Onnx_NodeProto, _ tensor: ComputedTensor, _ pads: [Int], _ value: Double) throws -> Bool {
        let readers = consumers[node.output[0]] ?? []
        guard readers.count == 1, readers[0] >= 0 else { return false }
        let reader = graph.node[readers[0]]
        let ra = NodeAttributes(reader)
        guard let window = try? WindowAttributes(ra) else { return false }
        guard ["NOTSET", "VALID"].contains(window.autoPad), reader.input.first == node.output[0] else { return false }
        let own = window.autoPad == "NOTSET" ? (window.pads ?? [0, 0, 0, 0]) : [0, 0, 0, 0]
        guard own.count == 4 else { return false }
        var ok: Bool
        switch reader.opType {
        case "Conv": ok = value == 0
        case "AveragePool":
            let includes = try ra.int("count_include_pad", 0) != 0
            ok = value == 0 && (includes || !own.contains { $0 != 0 }) && !window.ceilMode
        case "MaxPool": ok = value == -.infinity && !window.ceilMode
        default: ok = false
        }
        if ok && reader.opType != "Conv" {
            let kernel = window.kernel ?? [1, 1], dilation = window.dilations ?? [1, 1]
            guard kernel.count == 2, dilation.count == 2 else { return false }
            let extent = zip(kernel, dilation).map { ($0 - 1) * $1 + 1 }
            let total = zip(own, pads).map(+)
            ok = max(total[0], total[2]) < extent[0] && max(total[1], total[3]) < extent[1]
        }
        guard ok else { return false }
        pendingPads[readers[0]] = pads
        try set(node, tensor)
        return true
    }

    /// Input `index` as `channels` values; `fallback` everywhere when absent.
    func perChannel(_ node: Onnx_NodeProto, _ index: Int, _ channels: Int, _ what: String, fallback: Float? = nil) throws -> [Float] {
        guard let values = try const(node, index, required: fallback == nil) else { return [Float](repeating: fallback!, count: channels) }
        guard values.count == channels else { throw fail(node, "\(what) has \(values.count) values for \(channels) channels") }
        return values.floats
    }

    /// `InstanceNormalization`.
    func opInstanceNormalization(_ node: Onnx_NodeProto, _ index: Int) throws {
        let tensor = try act(node)
        try requireSpatial(node, tensor)
        let c = tensor.shape[2]!
        let gamma = try perChannel(node, 1, c, "scale"), beta = try perChannel(node, 2, c, "B")
        let epsilon = Float(try NodeAttributes(node).float("epsilon", 1e-5))
        let name = try add(node, [tensor.name], parameters: [("gamma", gamma), ("beta", beta)]) {
            InstanceNormalization(epsilon: epsilon, name: $0)
        }
        try set(node, ComputedTensor(name, tensor.shape))
    }

    /// `LayerNormalization` over ONNX axes `axis` … last.
    func opLayerNormalization(_ node: Onnx_NodeProto, _ index: Int) throws {
        if node.output.count > 1 && node.output.dropFirst().contains(where: { !$0.isEmpty && !(consumers[$0] ?? []).isEmpty }) {
            return try layerNormalizationBody(node)
        }
        var tensor = try act(node, anyLayout: true)
        try requireBatchFirst(node, tensor)
        let a = NodeAttributes(node)
        let rank = tensor.rank
        var axis = try a.int("axis", -1)
        guard -rank <= axis, axis < rank else { throw fail(node, "axis \(axis) is out of range for a rank-\(rank) input") }
        axis = (axis + rank) % rank
        if try a.int("stash_type", 1) != 1 { throw fail(node, "stash_type other than float is not supported") }
        if axis == 0 {
            throw fail(node, "axis 0 normalises the batch axis too (input shape \(Self.text(tensor.onnxShape))); Anvil normalises within each item")
        }
        let shape = tensor.onnxShape
        let normalised = Array(axis ..< rank)
        if normalised.contains(where: { shape[$0] == nil }) {
            throw fail(node, "normalises ONNX axes \(normalised) of an input of shape \(Self.text(shape)), an open size: Scale and B would need its extent")
        }
        var full = tensor.fullShape
        var big = normalised.map { tensor.permutation[$0] }.filter { full[$0] != 1 }
        let others = (1 ..< rank).filter { !normalised.contains($0) }.map { tensor.permutation[$0] }.filter { full[$0] != 1 }
        if !big.isEmpty, !others.isEmpty, others.max()! > big.min()! {
            let current = tensor
            let anvilOrder = (1 ..< rank).sorted { x, y in
                let kx = (normalised.contains(x) ? 1 : 0, current.permutation[x]), ky = (normalised.contains(y) ? 1 : 0, current.permutation[y])
                return kx < ky
            }
            var target = [Int](repeating: 0, count: rank)
            for (position, onnxAxis) in anvilOrder.enumerated() { target[onnxAxis] = position + 1 }
            tensor = try transpose(node, tensor, to: target)
            full = tensor.fullShape
            big = normalised.map { tensor.permutation[$0] }.filter { full[$0] != 1 }
        }
        let trailing = big.isEmpty ? 1 : rank - big.min()!
        let normalisedShape = normalised.map { shape[$0]! }
        func values(_ index: Int, _ what: String, _ fallback: Float?) throws -> ConstantTensor {
            guard let v = try const(node, index, required: fallback == nil) else {
                let count = try ConstantTensor.elementCount(normalisedShape)
                return ConstantTensor(shape: normalisedShape, floats: [Float](repeating: fallback!, count: count))
            }
            do { return try ConstantTensor(shape: v.shape, floats: v.floats).broadcast(to: normalisedShape) } catch {
                throw fail(node, "\(what) of shape \(v.shape) does not fit the normalised shape \(normalisedShape)")
            }
        }
        let memory = (0 ..< normalised.count).sorted { tensor.permutation[normalised[$0]] < tensor.permutation[normalised[$1]] }
        let gamma = try values(1, "Scale", nil).transposed(memory).floats
        let beta = try values(2, "B", 0).transposed(memory).floats
        let epsilon = Float(try a.float("epsilon", 1e-5))
        let name = try add(node, [tensor.name], parameters: [("gamma", gamma), ("beta", beta)]) {
            LayerNormalization(axes: trailing, epsilon: epsilon, name: $0)
        }
        try set(node, tensor.like(name))
    }

    /// `GroupNormalization` (scale and bias per group or per channel).
    func opGroupNormalization(_ node: Onnx_NodeProto, _ index: Int) throws {
        let tensor = try act(node)
        try requireSpatial(node, tensor)
        let a = NodeAttributes(node)
        guard let groups = try a.int("num_groups") else { throw fail(node, "attribute 'num_groups' is missing") }
        let c = tensor.shape[2]!
        guard groups >= 1, c % groups == 0 else { throw fail(node, "num_groups \(groups) must divide \(c) channels") }
        if try a.int("stash_type", 1) != 1 { throw fail(node, "stash_type other than float is not supported") }
        var scale = try constant(node, 1).floats, bias = try constant(node, 2).floats
        if scale.count == groups && bias.count == groups && groups != c {
            scale = scale.flatMap { [Float](repeating: $0, count: c / groups) }
            bias = bias.flatMap { [Float](repeating: $0, count: c / groups) }
        }
        guard scale.count == c, bias.count == c else {
            throw fail(node, "scale and bias have \(scale.count) and \(bias.count) values; expected \(groups) or \(c)")
        }
        let epsilon = Float(try a.float("epsilon", 1e-5))
        let name = try add(node, [tensor.name], parameters: [("gamma", scale), ("beta", bias)]) {
            GroupNormalization(groups: groups, epsilon: epsilon, name: $0)
        }
        try set(node, ComputedTensor(name, tensor.shape))
    }

    /// `LRN` across channels.
    func opLRN(_ node: Onnx_NodeProto, _ index: Int) throws {
        let tensor = try act(node)
        try requireSpatial(node, tensor)
        let a = NodeAttributes(node)
        guard let size = try a.int("size") else { throw fail(node, "attribute 'size' is missing") }
        let (alpha, beta, bias) = (Float(try a.float("alpha", 1e-4)), Float(try a.float("beta", 0.75)), Float(try a.float("bias", 1.0)))
        let name = try add(node, [tensor.name]) { LocalResponseNormalization(size: size, alpha: alpha, beta: beta, bias: bias, name: $0) }
        try set(node, ComputedTensor(name, tensor.shape))
    }

    /// `LpPool` (2-D, or 1-D on a sequence as a height-1 2-D one): LpPooling (window as MaxPool's).
    func opLpPool(_ node: Onnx_NodeProto, _ index: Int) throws {
        let tensor = try act(node)
        let oneD = try windowed(node, tensor)
        let attributes = NodeAttributes(node)
        var a = try WindowAttributes(attributes)
        if oneD { a = a.oneDimensional() }
        guard let kernel = a.kernel else { throw fail(node, "attribute 'kernel_shape' is missing") }
        let win = try window(node, tensor, kernel: kernel, pooling: true, a)
        let p = try (try? attributes.int("p")).flatMap { $0.map(Double.init) } ?? attributes.float("p", 2)
        let poolingWindow = PoolingWindow(kernel: Self.pair(kernel), stride: Self.pair(win.stride), padding: win.padding,
                                          dilation: Self.pair(win.dilation), ceilMode: win.ceil)
        let name = try add(node, [tensor.name]) { LpPooling(p: Float(p), window: poolingWindow, name: $0) }
        let c = tensor.shape.last!
        try set(node, ComputedTensor(name, oneD ? [win.outputs[1], c] : [win.outputs[0], win.outputs[1], c]))
    }

    /// `GlobalLpPool`: LpPooling over the whole image.
    func opGlobalLpPool(_ node: Onnx_NodeProto, _ index: Int) throws {
        let tensor = try act(node)
        try requireSpatial(node, tensor)
        guard let h = tensor.shape[0], let w = tensor.shape[1] else {
            throw fail(node, "a window of the whole image on an open input size; pass --input-shape C,H,W")
        }
        let attributes = NodeAttributes(node)
        let p = try (try? attributes.int("p")).flatMap { $0.map(Double.init) } ?? attributes.float("p", 2)
        let name = try add(node, [tensor.name]) { LpPooling(p: Float(p), kernel: (h, w), stride: (h, w), padding: .valid, name: $0) }
        try set(node, ComputedTensor(name, [1, 1, tensor.shape[2]]))
    }

    /// `GridSample` of an image (`mode` linear/bilinear, nearest, cubic/bicubic; `padding_mode`;
    /// `align_corners`): the engine's `GridSample`, the grid `[N, Ho, Wo, 2]` held in ONNX's order.
    func opGridSample(_ node: Onnx_NodeProto, _ index: Int) throws {
        let image = try act(node)
        try requireSpatial(node, image)
        let grid = try toONNXOrder(node, try exact(node, try act(node, 1, anyLayout: true)))
        guard grid.onnxRank == 4, grid.isBatchFirst, grid.onnxShape[3] == 2 else {
            throw fail(node, "needs a grid [N, H, W, 2] with the batch first, got \(Self.text(grid.onnxShape)) (3-D sampling is not supported)")
        }
        let a = NodeAttributes(node)
        let modes: [String: GridSampleMode] = ["linear": .linear, "bilinear": .linear, "nearest": .nearest, "cubic": .cubic, "bicubic": .cubic]
        let modeName = try a.string("mode", "linear")
        guard let mode = modes[modeName] else { throw fail(node, "mode '\(modeName)' is not linear, nearest or cubic") }
        let paddingName = try a.string("padding_mode", "zeros")
        guard let padding = GridSamplePadding(rawValue: paddingName) else {
            throw fail(node, "padding_mode '\(paddingName)' is not zeros, border or reflection")
        }
        let alignCorners = try a.int("align_corners", 0) != 0
        let name = try add(node, [image.name, grid.name]) { GridSample(mode: mode, padding: padding, alignCorners: alignCorners, name: $0) }
        try set(node, ComputedTensor(name, [grid.shape[0], grid.shape[1], image.shape[2]]))
    }
}
