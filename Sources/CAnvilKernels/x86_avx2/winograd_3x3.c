#if defined(__x86_64__)
#include "../internal/winograd_3x3.h"

// Winograd F(2×2) and F(4×4) transforms with AVX2: the 8-lane vectors are ymm registers.

#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)

void anvil_winograd3_input_avx2(const anvil_winograd3_shape *s, const float *input, float *v, long first, long begin,
                              long end) {
    input_tiles(s, input, v, first, begin, end);
}

void anvil_winograd3_output_avx2(const anvil_winograd3_shape *s, const float *m, const float *bias, float *output,
                               long first, long begin, long end) {
    output_tiles(s, m, bias, output, first, begin, end);
}

void anvil_winograd3_filters_avx2(int tile, const float *weights, anvil_winograd3_filter_strides strides,
                                const float *scale, int outputs, int inputs, float *u, int begin, int end) {
    filter_inputs(tile, weights, strides, scale, outputs, inputs, u, begin, end);
}

#pragma clang attribute pop
#endif
