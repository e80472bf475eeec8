#ifndef ANVIL_WINOGRAD_5X5_H
#define ANVIL_WINOGRAD_5X5_H

#include <stddef.h>
#include "anvil_isa.h"

#ifdef __cplusplus
extern "C" {
#endif

/// A 5×5, stride-1, undilated, ungrouped convolution over a batch of NHWC images, described
/// for `anvil_winograd5`. Each 2×2 block of output pixels is one tile.
typedef struct {
    int input_height, input_width;   ///< Input image size (unpadded).
    int channels;                    ///< Input channels.
    int output_height, output_width; ///< Output image size.
    int outputs;                     ///< Output channels.
    int pad_top, pad_left;           ///< Zero rows above and columns left of the input.
    float clamp_min;                 ///< Lower bound applied to every result (-INFINITY for none).
    float clamp_max;                 ///< Upper bound applied to every result (INFINITY for none).
} anvil_winograd5_shape;

/// Tiles per image: ⌈output_height / 2⌉ · ⌈output_width / 2⌉.
long anvil_winograd5_tiles_per_image(const anvil_winograd5_shape *shape);

/// Floats of transformed filters for `outputs` × `channels` 5×5 filters.
size_t anvil_winograd5_filter_count(int outputs, int channels);

/// Transforms filters `w[outputs][5][5][channels]` into `u` (`anvil_winograd5_filter_count`
/// floats): `U = G g Gᵀ` per filter, in double, stored as `u[block][position][channel][16]`
/// for blocks of 16 output channels, the last block padded with zeros.
void anvil_winograd5_transform_filters(const float *w, int outputs, int channels, float *u);

/// Floats of scratch memory one call of `anvil_winograd5` needs for `channels` inputs.
size_t anvil_winograd5_scratch_count(int channels);

/// Computes tiles `[tile_begin, tile_end)` of the batch (tile `t` is tile `t % per-image` of
/// image `t / per-image`, row-major) from the NHWC `input` batch into the NHWC `output`
/// batch, with filters from `anvil_winograd5_transform_filters`, optional `bias[outputs]`
/// and the clamp. `scratch` holds `anvil_winograd5_scratch_count(channels)` floats that no
/// other call uses at the same time. `isa` picks the body; it must be one `anvil_isa_supported`
/// accepts (the process aborts otherwise).
void anvil_winograd5(anvil_isa isa, const anvil_winograd5_shape *shape, const float *input, const float *u, const float *bias,
                     float *output, long tile_begin, long tile_end, float *scratch);

#ifdef __cplusplus
}
#endif

#endif
