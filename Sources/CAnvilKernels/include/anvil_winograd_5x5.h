#ifndef ANVIL_WINOGRAD_5X5_H
#define ANVIL_WINOGRAD_5X5_H

#include <stddef.h>
#include "anvil_isa.h"
#include "anvil_kernel_list.h"

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

/// The entry points (see kernels/winograd_5x5.inc).
#define ANVIL_KERNEL ANVIL_KERNEL_ENTRY
#include "../kernels/winograd_5x5.inc"
#undef ANVIL_KERNEL

#ifdef __cplusplus
}
#endif

#endif
