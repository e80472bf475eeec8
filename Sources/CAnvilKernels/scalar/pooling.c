#include "../internal/pooling.h"

// Max and average pooling in plain C, for any CPU: the baseline the vector bodies are checked against.

void anvil_max_pool_lines_scalar(const anvil_pool_shape *s, const float *input, float *output, int line_begin,
                                 int line_end) {
    anvil_pool_lines(s, ANVIL_NO_DIVISOR, input, output, line_begin, line_end, anvil_max_pixel_scalar);
}

void anvil_average_pool_lines_scalar(const anvil_pool_shape *s, anvil_pool_divisor d, const float *input, float *output,
                                     int line_begin, int line_end) {
    anvil_pool_lines(s, d, input, output, line_begin, line_end, anvil_average_pixel_scalar);
}
