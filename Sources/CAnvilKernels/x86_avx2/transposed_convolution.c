#if defined(__x86_64__)
#include "../internal/transposed_convolution.h"

// col2im with AVX2: each tap's run of channels added 32, then 8 floats at a time.

#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)

static void add_avx2(float *dst, const float *src, int n) {
    int i = 0;
    for (; i + 32 <= n; i += 32) {
        _mm256_storeu_ps(dst + i, _mm256_add_ps(_mm256_loadu_ps(dst + i), _mm256_loadu_ps(src + i)));
        _mm256_storeu_ps(dst + i + 8, _mm256_add_ps(_mm256_loadu_ps(dst + i + 8), _mm256_loadu_ps(src + i + 8)));
        _mm256_storeu_ps(dst + i + 16, _mm256_add_ps(_mm256_loadu_ps(dst + i + 16), _mm256_loadu_ps(src + i + 16)));
        _mm256_storeu_ps(dst + i + 24, _mm256_add_ps(_mm256_loadu_ps(dst + i + 24), _mm256_loadu_ps(src + i + 24)));
    }
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_add_ps(_mm256_loadu_ps(dst + i), _mm256_loadu_ps(src + i)));
    for (; i < n; i++) dst[i] += src[i];
}

void anvil_col2im_lines_avx2(const anvil_col2im_shape *s, const float *columns, const float *bias, float *output,
                             int line_begin, int line_end) {
    anvil_col2im_lines_impl(s, columns, bias, output, line_begin, line_end, add_avx2);
}

#pragma clang attribute pop
#endif
