#if defined(__x86_64__)
#include "../internal/strided_copy.h"

// The strided copy with AVX2: a contiguous innermost axis moves 32 floats per step; a strided
// input (a transpose's or a channel shuffle's gather) is read with vgatherdps, 8 per step.

#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)

static inline void line_avx2(const float *in, float *out, long n, long in_step, long out_step) {
    long i = 0;
    if (in_step == 1 && out_step == 1) {
        for (; i + 32 <= n; i += 32) {
            __m256 a = _mm256_loadu_ps(in + i), b = _mm256_loadu_ps(in + i + 8);
            __m256 c = _mm256_loadu_ps(in + i + 16), d = _mm256_loadu_ps(in + i + 24);
            _mm256_storeu_ps(out + i, a); _mm256_storeu_ps(out + i + 8, b);
            _mm256_storeu_ps(out + i + 16, c); _mm256_storeu_ps(out + i + 24, d);
        }
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, _mm256_loadu_ps(in + i));
    } else if (out_step == 1 && in_step > 0 && in_step <= (1L << 27)) {
        // Indices 0, s, ..., 7s fit in 32 bits for every step below 2^27.
        const int step = (int)in_step;
        const __m256i index = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(step));
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, _mm256_i32gather_ps(in + i * in_step, index, 4));
    }
    anvil_copy_line_scalar(in + i * in_step, out + i * out_step, n - i, in_step, out_step);
}

/// The interleave with AVX2: two streams (ShuffleNet's shuffle of 2 groups) woven 8 pairs per
/// step by unpack and lane permutes; other counts of streams in plain C.
static inline void interleave_avx2(const float *in, float *out, long count, long n, long in_step) {
    long i = 0;
    if (n == 2) {
        const float *a = in, *b = in + in_step;
        for (; i + 8 <= count; i += 8) {
            const __m256 x = _mm256_loadu_ps(a + i), y = _mm256_loadu_ps(b + i);
            const __m256 low = _mm256_unpacklo_ps(x, y), high = _mm256_unpackhi_ps(x, y);  // x0 y0 x1 y1 | x4 y4 x5 y5
            _mm256_storeu_ps(out + 2 * i, _mm256_permute2f128_ps(low, high, 0x20));
            _mm256_storeu_ps(out + 2 * i + 8, _mm256_permute2f128_ps(low, high, 0x31));
        }
    }
    anvil_copy_interleave_scalar(in + i, out + i * n, count - i, n, in_step);
}

void anvil_strided_copy_avx2(const anvil_copy_shape *s, const float *input, float *output, long row_begin,
                             long row_end) {
    ANVIL_COPY_ROWS(s, input, output, row_begin, row_end, line_avx2, interleave_avx2);
}

#pragma clang attribute pop
#endif
