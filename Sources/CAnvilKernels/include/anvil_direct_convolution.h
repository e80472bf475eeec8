#ifndef ANVIL_DIRECT_CONVOLUTION_H
#define ANVIL_DIRECT_CONVOLUTION_H

#include <stddef.h>
#include "anvil_isa.h"
#include "anvil_kernel_list.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Output channels per block of packed convolution weights.
#define ANVIL_CONV_BLOCK 16

/// Blocks the widest register tile of each body takes at once (its `tile_shape`'s groups): a
/// caller that splits the blocks between threads gives each a multiple of these, or the tiles
/// broadcast each input to fewer outputs.
#define ANVIL_CONV_TILE_BLOCKS_SCALAR 1
#define ANVIL_CONV_TILE_BLOCKS_AVX2 2
#define ANVIL_CONV_TILE_BLOCKS_AVX512 4

/// `ANVIL_CONV_TILE_BLOCKS_<isa>` of `isa`, whether or not this CPU runs it.
int anvil_conv_tile_blocks(anvil_isa isa);

/// Output pixels per work item a caller splitting the pixels hands the kernel: a multiple of the
/// tiles' pixels (6 in the scalar body, 6 and 3 in the AVX2 one, 8 and 6 in the AVX-512 one), so
/// only a layer's last item has a short tile.
#define ANVIL_CONV_CHUNK_PIXELS 24

/// Floats needed by `anvil_conv_pack_weights` for `outputs` rows of `depth` weights.
size_t anvil_conv_packed_count(int outputs, int depth);

/// Packs row-major weights `w[outputs][depth]` (depth = kh·kw·c, c fastest) into blocks of
/// 16 output channels, `packed[block][depth][16]`, padding the last block with zeros.
void anvil_conv_pack_weights(const float *w, int outputs, int depth, float *packed);

/// A convolution over one padded image, described for `anvil_conv_direct`.
typedef struct {
    int input_width;     ///< Width of the (already padded) input image, in pixels.
    int channels;        ///< Input channels.
    int kernel_height, kernel_width;
    int stride_height, stride_width;
    int dilation_height, dilation_width;
    int output_width;    ///< Output pixels per row.
    int outputs;         ///< Output channels (the row stride of `output`).
    float clamp_min;     ///< Lower bound applied to every result (-INFINITY for none).
    float clamp_max;     ///< Upper bound applied to every result (INFINITY for none).
} anvil_conv_shape;

/// The entry points (see kernels/direct_convolution.inc).
#define ANVIL_KERNEL ANVIL_KERNEL_ENTRY
#include "../kernels/direct_convolution.inc"
#undef ANVIL_KERNEL

#ifdef __cplusplus
}
#endif

#endif
