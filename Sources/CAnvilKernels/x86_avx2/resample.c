#if defined(__x86_64__)
#include "../internal/resample.h"

// Resampling with AVX2: each tap's weighted pixel added by FMAs, 32 then 8 channels at a time.

#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)

static void axpy_avx2(float *dst, const float *src, float weight, int n) {
    const __m256 w = _mm256_set1_ps(weight);
    int i = 0;
    for (; i + 32 <= n; i += 32) {
        _mm256_storeu_ps(dst + i, _mm256_fmadd_ps(w, _mm256_loadu_ps(src + i), _mm256_loadu_ps(dst + i)));
        _mm256_storeu_ps(dst + i + 8, _mm256_fmadd_ps(w, _mm256_loadu_ps(src + i + 8), _mm256_loadu_ps(dst + i + 8)));
        _mm256_storeu_ps(dst + i + 16, _mm256_fmadd_ps(w, _mm256_loadu_ps(src + i + 16), _mm256_loadu_ps(dst + i + 16)));
        _mm256_storeu_ps(dst + i + 24, _mm256_fmadd_ps(w, _mm256_loadu_ps(src + i + 24), _mm256_loadu_ps(dst + i + 24)));
    }
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_fmadd_ps(w, _mm256_loadu_ps(src + i), _mm256_loadu_ps(dst + i)));
    for (; i < n; i++) dst[i] += weight * src[i];
}

void anvil_resample_lines_avx2(const anvil_resample_shape *s, const float *input, float *output, int line_begin,
                               int line_end) {
    anvil_resample_lines_impl(s, input, output, line_begin, line_end, axpy_avx2);
}

#pragma clang attribute pop
#endif
