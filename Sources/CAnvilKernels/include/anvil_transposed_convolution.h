#ifndef ANVIL_TRANSPOSED_CONVOLUTION_H
#define ANVIL_TRANSPOSED_CONVOLUTION_H

// The second half of a transposed convolution (ConvTranspose) computed as GEMM + col2im: the
// GEMM has multiplied each input pixel by every tap of the weights, giving per input pixel a
// row `[group][kh][kw][channels per group]`; this op sums, for each output pixel, the rows of
// the input pixels whose taps land on it (a gather, so output lines can run in parallel), adds
// the bias and writes NHWC output.

#include "anvil_isa.h"

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

/// Output lines `[line_begin, line_end)` of one image: `columns` holds input pixel p's row at
/// `columns + p · groups · kh · kw · group_channels`; `bias` (output channels, or NULL) is added;
/// `output` is the image's `[OH][OW][groups · group_channels]`.
void anvil_col2im_lines(anvil_isa isa, const anvil_col2im_shape *shape, const float *columns, const float *bias,
                        float *output, int line_begin, int line_end);

#ifdef __cplusplus
}
#endif

#endif
