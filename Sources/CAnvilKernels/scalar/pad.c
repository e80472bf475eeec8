#include "../internal/pad.h"

// Padding in plain C.

static void fill_scalar(float *dst, float value, int n) {
    for (int i = 0; i < n; i++) dst[i] = value;
}

void anvil_pad_lines_scalar(const anvil_pad_shape *s, const float *input, float *output, int line_begin, int line_end) {
    anvil_pad_lines_impl(s, input, output, line_begin, line_end, fill_scalar);
}
