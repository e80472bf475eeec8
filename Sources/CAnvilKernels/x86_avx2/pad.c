#if defined(__x86_64__)
#include "../internal/pad.h"

// Padding with AVX2: constant runs stored 8 floats at a time (the copies are memcpy).

#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)

static void fill_avx2(float *dst, float value, int n) {
    const __m256 v = _mm256_set1_ps(value);
    int i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, v);
    for (; i < n; i++) dst[i] = value;
}

void anvil_pad_lines_avx2(const anvil_pad_shape *s, const float *input, float *output, int line_begin, int line_end) {
    anvil_pad_lines_impl(s, input, output, line_begin, line_end, fill_avx2);
}

#pragma clang attribute pop
#endif
