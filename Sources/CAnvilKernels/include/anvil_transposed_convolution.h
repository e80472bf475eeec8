#ifndef ANVIL_TRANSPOSED_CONVOLUTION_H
#define ANVIL_TRANSPOSED_CONVOLUTION_H

// The second half of a transposed convolution (ConvTranspose) computed as GEMM + col2im: the
// GEMM has multiplied each input pixel by every tap of the weights, giving per input pixel a
// row `[group][kh][kw][channels per group]`; this op sums, for each output pixel, the rows of
// the input pixels whose taps land on it (a gather, so output lines can run in parallel), adds
// the bias and writes NHWC output.

#include "anvil_isa.h"
#include "anvil_kernel_list.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The geometry of one transposed convolution, for `anvil_col2im_lines`.
typedef struct {
    int input_height, input_width;
    int groups, group_channels;   ///< output channels = groups × group_channels
    int kernel_height, kernel_width;
    int stride_height, stride_width;
    int dilation_height, dilation_width;
    int pad_top, pad_left;        ///< output rows/columns cropped at the top/left
    int output_height, output_width;
} anvil_col2im_shape;

/// The entry points (see kernels/transposed_convolution.inc).
#define ANVIL_KERNEL ANVIL_KERNEL_ENTRY
#include "../kernels/transposed_convolution.inc"
#undef ANVIL_KERNEL

#ifdef __cplusplus
}
#endif

#endif
