#include "../internal/resample.h"

// Resampling in plain C.

static void axpy_scalar(float *dst, const float *src, float weight, int n) {
    for (int i = 0; i < n; i++) dst[i] += weight * src[i];
}

void anvil_resample_lines_scalar(const anvil_resample_shape *s, const float *input, float *output, int line_begin,
                                 int line_end) {
    anvil_resample_lines_impl(s, input, output, line_begin, line_end, axpy_scalar);
}
