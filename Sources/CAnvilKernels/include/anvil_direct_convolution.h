#ifndef ANVIL_DIRECT_CONVOLUTION_H
#define ANVIL_DIRECT_CONVOLUTION_H

#include <stddef.h>
#include "anvil_isa.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Output channels per block of packed convolution weights.
#define ANVIL_CONV_BLOCK 16

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

/// Computes output pixels `[pixel_begin, pixel_end)` (row-major over the output image) and
/// output-channel blocks `[block_begin, block_end)` of one image directly from the padded
/// NHWC `input`, with `packed` weights, optional `bias[outputs]`, optional `residual` (laid out
/// like `output`, added before the clamp: a fused residual connection) and the clamp, into
/// `output[pixel][outputs]`. No im2col copy. `isa` picks the body; it must be one
/// `anvil_isa_supported` accepts (the process aborts otherwise).
void anvil_conv_direct(anvil_isa isa, const anvil_conv_shape *shape, const float *input, const float *packed,
                       const float *bias, const float *residual, float *output, int pixel_begin,
                       int pixel_end, int block_begin, int block_end);

#ifdef __cplusplus
}
#endif

#endif
