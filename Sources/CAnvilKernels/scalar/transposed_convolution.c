#include "../internal/transposed_convolution.h"

// col2im in plain C.

static void add_scalar(float *dst, const float *src, int n) {
    for (int i = 0; i < n; i++) dst[i] += src[i];
}

void anvil_col2im_lines_scalar(const anvil_col2im_shape *s, const float *columns, const float *bias, float *output,
                               int line_begin, int line_end) {
    anvil_col2im_lines_impl(s, columns, bias, output, line_begin, line_end, add_scalar);
}
