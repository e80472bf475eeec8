#ifndef ANVIL_POOLING_H
#define ANVIL_POOLING_H

// Max pooling over NHWC windows, vectorised across channels with each output pixel's
// running maxima in registers (32 channels at a time with AVX2, 64 with AVX-512).

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

#ifdef __cplusplus
}
#endif

#endif
