#ifndef ANVIL_WINOGRAD_3X3_H
#define ANVIL_WINOGRAD_3X3_H

#include <stddef.h>
#include "anvil_isa.h"

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

/// Every entry point runs `isa`'s body (see anvil_dispatch.h).

/// Writes `Bᵀ d B` of the block's tiles `[tile_begin, tile_end)` into `v`: `d` is the tile's
/// α × α input patch, zeros where it leaves the input.
void anvil_winograd3_transform_input(anvil_isa isa, const anvil_winograd3_shape *shape, const float *input, float *v,
                                     long first_tile, long tile_begin, long tile_end);

/// Writes `Aᵀ M A` plus `bias` (may be NULL), clamped and sloped, of the block's tiles
/// `[tile_begin, tile_end)` into the NHWC `output`, the parts of edge tiles outside it skipped.
void anvil_winograd3_transform_output(anvil_isa isa, const anvil_winograd3_shape *shape, const float *m, const float *bias,
                                      float *output, long first_tile, long tile_begin, long tile_end);

/// Where and how the 3×3 filters are read: tap (o, i, y, x) at `o · output + i · input + y ·
/// row + x · column` floats from the start (any layout).
typedef struct {
    long output, input, row, column;
} anvil_winograd3_filter_strides;

/// Writes `U = G g Gᵀ` of the filters of inputs `[input_begin, input_end)` and every output,
/// each output's filters times `scale[o]` first when `scale` is not NULL, packed for
/// `anvil_winograd_products`: (position p, input i, output o) at `p · inputs · padded + (⌊o / 16⌋ ·
/// inputs + i) · 16 + o mod 16`, padded = outputs rounded up to 16 (padding lanes untouched).
void anvil_winograd3_transform_filters(anvil_isa isa, int tile, const float *weights,
                                       anvil_winograd3_filter_strides strides, const float *scale, int outputs,
                                       int inputs, float *u, int input_begin, int input_end);

/// Where the taps `anvil_winograd3_transform_taps` reads lie: tap `t` (`3y + x`) from input `i`
/// to output `o` (counted from the first output wanted, a multiple of 16) at `⌊o / 16⌋ · block +
/// i · input + t · tap + o mod 16` floats, so each block of 16 outputs' values are side by side.
/// Anvil's own taps (`[i][y][x][o]` in groups of 32 outputs): input = 9 · width, tap = width,
/// block = 16. The direct convolution's packed weights (`anvil_conv_pack_weights`, blocks of 16
/// outputs `[y][x][i][16]`): input = 16, tap = 16 · inputs, block = 144 · inputs.
typedef struct {
    long input, tap, block;
} anvil_winograd3_tap_strides;

/// Writes `U = G g Gᵀ` of taps laid out as `strides` say (already scaled; `taps` points at the
/// first output wanted) for `width` outputs (a multiple of 16) and the inputs `[input_begin,
/// input_end)`, as `anvil_winograd_products` reads them: (position p, input i, output o) at
/// `p · position_stride + (⌊o / 16⌋ · n + i − input_begin) · 16 + o mod 16`, n = input_end −
/// input_begin, position_stride ≥ n · width. The arithmetic is `anvil_winograd3_transform_filters`'s:
/// the same values bit for bit.
void anvil_winograd3_transform_taps(anvil_isa isa, int tile, const float *taps, anvil_winograd3_tap_strides strides,
                                    int width, int input_begin, int input_end, float *u, long position_stride);

#ifdef __cplusplus
}
#endif

#endif
