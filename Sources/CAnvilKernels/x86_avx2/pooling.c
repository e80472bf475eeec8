#if defined(__x86_64__)
#include "../internal/pooling.h"

// Max and average pooling with AVX2: 32 channels of an output pixel's running maxima or sums in
// four registers.

#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)

static void max_pixel_avx2(const anvil_pool_shape *s, anvil_pool_divisor d, const float *image, float *out, int oy,
                           int ox) {
    const float *cells[ANVIL_POOL_MAX_CELLS];
    const int count = anvil_pool_cells(s, image, oy, ox, cells);
    if (count < 0) { anvil_max_pixel_scalar(s, d, image, out, oy, ox); return; }
    const int C = s->channels;
    int c = 0;
    const __m256 lowest = _mm256_set1_ps(-INFINITY);
    for (; c + 32 <= C; c += 32) {
        __m256 m0 = lowest, m1 = lowest, m2 = lowest, m3 = lowest;
        for (int i = 0; i < count; i++) {
            // maxps returns its second operand when either is NaN: a NaN cell is skipped, as
            // in the scalar body (and as Anvil's pooling always has).
            m0 = _mm256_max_ps(_mm256_loadu_ps(cells[i] + c), m0);
            m1 = _mm256_max_ps(_mm256_loadu_ps(cells[i] + c + 8), m1);
            m2 = _mm256_max_ps(_mm256_loadu_ps(cells[i] + c + 16), m2);
            m3 = _mm256_max_ps(_mm256_loadu_ps(cells[i] + c + 24), m3);
        }
        _mm256_storeu_ps(out + c, m0); _mm256_storeu_ps(out + c + 8, m1);
        _mm256_storeu_ps(out + c + 16, m2); _mm256_storeu_ps(out + c + 24, m3);
    }
    for (; c + 8 <= C; c += 8) {
        __m256 m = lowest;
        for (int i = 0; i < count; i++) m = _mm256_max_ps(_mm256_loadu_ps(cells[i] + c), m);
        _mm256_storeu_ps(out + c, m);
    }
    for (; c < C; c++) {
        float m = -INFINITY;
        for (int i = 0; i < count; i++) m = cells[i][c] > m ? cells[i][c] : m;
        out[c] = m;
    }
}

void anvil_max_pool_lines_avx2(const anvil_pool_shape *s, const float *input, float *output, int line_begin,
                               int line_end) {
    anvil_pool_lines(s, ANVIL_NO_DIVISOR, input, output, line_begin, line_end, max_pixel_avx2);
}

/// Average pooling's pixel: the scalar pixel's operations (0, plus each cell in window order,
/// times the scale) 32, 8, then 1 channel at a time.
static void average_pixel_avx2(const anvil_pool_shape *s, anvil_pool_divisor d, const float *image, float *out, int oy,
                               int ox) {
    const float *cells[ANVIL_POOL_MAX_CELLS];
    const int count = anvil_pool_cells(s, image, oy, ox, cells);
    if (count < 0) { anvil_average_pixel_scalar(s, d, image, out, oy, ox); return; }
    const int C = s->channels;
    const float scale = anvil_pool_average_scale(s, d, oy, ox, count);
    const __m256 k = _mm256_set1_ps(scale);
    int c = 0;
    for (; c + 32 <= C; c += 32) {
        __m256 m0 = _mm256_setzero_ps(), m1 = _mm256_setzero_ps(), m2 = _mm256_setzero_ps(), m3 = _mm256_setzero_ps();
        for (int i = 0; i < count; i++) {
            m0 = _mm256_add_ps(m0, _mm256_loadu_ps(cells[i] + c));
            m1 = _mm256_add_ps(m1, _mm256_loadu_ps(cells[i] + c + 8));
            m2 = _mm256_add_ps(m2, _mm256_loadu_ps(cells[i] + c + 16));
            m3 = _mm256_add_ps(m3, _mm256_loadu_ps(cells[i] + c + 24));
        }
        _mm256_storeu_ps(out + c, _mm256_mul_ps(m0, k)); _mm256_storeu_ps(out + c + 8, _mm256_mul_ps(m1, k));
        _mm256_storeu_ps(out + c + 16, _mm256_mul_ps(m2, k)); _mm256_storeu_ps(out + c + 24, _mm256_mul_ps(m3, k));
    }
    for (; c + 8 <= C; c += 8) {
        __m256 m = _mm256_setzero_ps();
        for (int i = 0; i < count; i++) m = _mm256_add_ps(m, _mm256_loadu_ps(cells[i] + c));
        _mm256_storeu_ps(out + c, _mm256_mul_ps(m, k));
    }
    for (; c < C; c++) {
        float m = 0.0f;
        for (int i = 0; i < count; i++) m += cells[i][c];
        out[c] = m * scale;
    }
}

void anvil_average_pool_lines_avx2(const anvil_pool_shape *s, anvil_pool_divisor d, const float *input, float *output,
                                   int line_begin, int line_end) {
    anvil_pool_lines(s, d, input, output, line_begin, line_end, average_pixel_avx2);
}

#pragma clang attribute pop
#endif
