#include "../internal/strided_copy.h"

// The strided copy in plain C, for any CPU: the baseline the vector bodies are checked against.

void anvil_strided_copy_scalar(const anvil_copy_shape *s, const float *input, float *output, long row_begin,
                               long row_end) {
    ANVIL_COPY_ROWS(s, input, output, row_begin, row_end, anvil_copy_line_scalar, anvil_copy_interleave_scalar);
}
