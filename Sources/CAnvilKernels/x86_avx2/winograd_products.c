#if defined(__x86_64__)
#include "../internal/winograd_products.h"

// The products with AVX2 + FMA: 6 tiles × 16 output channels in 12 ymm accumulators, the 16
// filter values of a channel two loads, one broadcast per tile.

#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)

void anvil_winograd_products_avx2(const anvil_winograd_products_shape *s, const float *v, const float *u, float *m,
                                  int block_begin, int block_end) {
    for (int b = block_begin; b < block_end; b++) {
        const float *ub = u + (size_t)b * s->channels * BLOCK;
        for (int t = 0; t < s->tiles; t += GROUP) {
            const int n = s->tiles - t < GROUP ? s->tiles - t : GROUP;
            const float *r[GROUP];
            tile_rows(s, v, t, n, r);
            float *out = m + (size_t)t * s->m_tile_stride + (size_t)b * BLOCK;
            for (int c0 = 0; c0 < s->channels; c0 += CHUNK) {
                const int c1 = s->channels - c0 < CHUNK ? s->channels : c0 + CHUNK;
                __m256 a00 = _mm256_setzero_ps(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00;
                __m256 a30 = a00, a31 = a00, a40 = a00, a41 = a00, a50 = a00, a51 = a00;
                const float *w = ub + (size_t)c0 * BLOCK;
                for (int c = c0; c < c1; c++, w += BLOCK) {
                    const __m256 w0 = _mm256_loadu_ps(w), w1 = _mm256_loadu_ps(w + 8);
                    __m256 x;
                    x = _mm256_broadcast_ss(r[0] + c); a00 = _mm256_fmadd_ps(x, w0, a00); a01 = _mm256_fmadd_ps(x, w1, a01);
                    x = _mm256_broadcast_ss(r[1] + c); a10 = _mm256_fmadd_ps(x, w0, a10); a11 = _mm256_fmadd_ps(x, w1, a11);
                    x = _mm256_broadcast_ss(r[2] + c); a20 = _mm256_fmadd_ps(x, w0, a20); a21 = _mm256_fmadd_ps(x, w1, a21);
                    x = _mm256_broadcast_ss(r[3] + c); a30 = _mm256_fmadd_ps(x, w0, a30); a31 = _mm256_fmadd_ps(x, w1, a31);
                    x = _mm256_broadcast_ss(r[4] + c); a40 = _mm256_fmadd_ps(x, w0, a40); a41 = _mm256_fmadd_ps(x, w1, a41);
                    x = _mm256_broadcast_ss(r[5] + c); a50 = _mm256_fmadd_ps(x, w0, a50); a51 = _mm256_fmadd_ps(x, w1, a51);
                }
                const __m256 acc[GROUP][2] = { { a00, a01 }, { a10, a11 }, { a20, a21 }, { a30, a31 }, { a40, a41 }, { a50, a51 } };
                for (int i = 0; i < n; i++) {
                    float *o = out + (size_t)i * s->m_tile_stride;
                    if (c0 == 0) {
                        _mm256_storeu_ps(o, acc[i][0]);
                        _mm256_storeu_ps(o + 8, acc[i][1]);
                    } else {
                        _mm256_storeu_ps(o, _mm256_add_ps(_mm256_loadu_ps(o), acc[i][0]));
                        _mm256_storeu_ps(o + 8, _mm256_add_ps(_mm256_loadu_ps(o + 8), acc[i][1]));
                    }
                }
            }
        }
    }
}

#pragma clang attribute pop
#endif
