#ifndef ANVIL_WINOGRAD_3X3_H
#define ANVIL_WINOGRAD_3X3_H

#include <stddef.h>
#include "anvil_isa.h"
#include "anvil_kernel_list.h"

#ifdef __cplusplus
extern "C" {
#endif

/// A 3×3, stride-1, undilated, ungrouped convolution over a batch of NHWC images computed by
/// Winograd's F(m×m, 3×3), m = 2 or 4, described for the transforms below. The output is cut
/// into m×m tiles, row-major within an image, images one after another; tile `t` of a block
/// is the batch's tile `first_tile + t`.
///
/// V (transformed inputs) and M (products) are tile-major: value (tile t, position p, channel
/// c) at `t · tile_stride + p · position_stride + c`, positions `(row, column)` of the α × α
/// tile (α = m + 2) numbered `row · α + column`.
typedef struct {
    int tile;                        ///< m: output pixels per tile side (2 or 4).
    int input_height, input_width;   ///< Input image size (unpadded).
    int channels;                    ///< Input channels.
    int output_height, output_width; ///< Output image size.
    int outputs;                     ///< Output channels.
    int pad_top, pad_left;           ///< Zero rows above and columns left of the input.
    long v_tile_stride, v_position_stride;  ///< V's strides, in floats.
    long m_tile_stride, m_position_stride;  ///< M's strides, in floats (a position holds whole vectors of 8).
    float clamp_min;                 ///< Results below become this (-INFINITY for none).
    float clamp_max;                 ///< Results above become this (INFINITY for none).
    float negative_slope;            ///< Then negative results are multiplied by this (1 for none: a leaky ReLU's α).
} anvil_winograd3_shape;

/// Where and how the 3×3 filters are read: tap (o, i, y, x) at `o · output + i · input + y ·
/// row + x · column` floats from the start (any layout).
typedef struct {
    long output, input, row, column;
} anvil_winograd3_filter_strides;

/// Where the taps `anvil_winograd3_transform_taps` reads lie: tap `t` (`3y + x`) from input `i`
/// to output `o` (counted from the first output wanted, a multiple of 16) at `⌊o / 16⌋ · block +
/// i · input + t · tap + o mod 16` floats, so each block of 16 outputs' values are side by side.
/// Anvil's own taps (`[i][y][x][o]` in groups of 32 outputs): input = 9 · width, tap = width,
/// block = 16. The direct convolution's packed weights (`anvil_conv_pack_weights`, blocks of 16
/// outputs `[y][x][i][16]`): input = 16, tap = 16 · inputs, block = 144 · inputs.
typedef struct {
    long input, tap, block;
} anvil_winograd3_tap_strides;

/// The entry points (see kernels/winograd_3x3.inc).
#define ANVIL_KERNEL ANVIL_KERNEL_ENTRY
#include "../kernels/winograd_3x3.inc"
#undef ANVIL_KERNEL

#ifdef __cplusplus
}
#endif

#endif
