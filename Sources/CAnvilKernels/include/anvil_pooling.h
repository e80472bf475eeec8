#ifndef ANVIL_POOLING_H
#define ANVIL_POOLING_H

// Max and average pooling over NHWC windows, vectorised across channels with each output
// pixel's running maxima or sums in registers (32 channels at a time).

#include <stddef.h>
#include "anvil_isa.h"

#ifdef __cplusplus
extern "C" {
#endif

/// A max pooling window over one image, described for `anvil_max_pool_lines`.
typedef struct {
    int input_height, input_width, channels;
    int kernel_height, kernel_width;
    int stride_height, stride_width;
    int dilation_height, dilation_width;
    int pad_top, pad_left;
    int output_height, output_width;
} anvil_pool_shape;

/// Output lines `[line_begin, line_end)` (line = image · output_height + row) of max pooling
/// `input` (`[images][H][W][C]`) into `output` (`[images][OH][OW][C]`). Padded cells never
/// win; a window entirely in the padding gives -infinity. `isa` picks the body; it must be one
/// `anvil_isa_supported` accepts (the process aborts otherwise, rather than fault in the body).
void anvil_max_pool_lines(anvil_isa isa, const anvil_pool_shape *shape, const float *input, float *output,
                          int line_begin, int line_end);

/// How an average pooling window's sum is divided: by its cells inside the input, or with
/// `counts_padding` (ONNX's `count_include_pad`) by its cells inside the padded input, whose
/// bottom and right pads are `pad_bottom` and `pad_right` (cells past them, which only ceil mode
/// reaches, never count). The divisor is at least 1: a window wholly in the padding gives 0.
typedef struct {
    int counts_padding;
    int pad_bottom, pad_right;
} anvil_pool_divisor;

/// Output lines `[line_begin, line_end)` of average pooling `input` into `output` (layouts as
/// for `anvil_max_pool_lines`): each output is 0 plus the window's cells inside the input, added
/// in row-major window order, times 1 / the divisor — the same operations in the same order in
/// every body, so all bodies give the same bits. `isa` as for `anvil_max_pool_lines`.
void anvil_average_pool_lines(anvil_isa isa, const anvil_pool_shape *shape, anvil_pool_divisor divisor,
                              const float *input, float *output, int line_begin, int line_end);

#ifdef __cplusplus
}
#endif

#endif
