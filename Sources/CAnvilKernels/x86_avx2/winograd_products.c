#if defined(__x86_64__)
#include "../internal/winograd_products.h"

// The products with AVX2 + FMA: 3 tiles × 32 output channels (two neighbouring blocks) in 12
// ymm accumulators, the 32 filter values of a channel four loads, one broadcast per tile for
// both blocks; a last odd block alone as 6 tiles × 16 channels (two loads, a broadcast per tile
// for 16 channels). As in the direct convolution's tile, the pair broadcasts half as often per
// multiply-add, which on Zen 3 competes with the multiply-adds for the FP pipes.

#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)

enum { PAIR_GROUP = 3 };

/// Blocks `b` and `b + 1` (filters `u0`, `u1`): tiles in groups of 3, each run of channels summed
/// from zero in channel order, then added into M, as the single-block loop below does.
static void pair_products(const anvil_winograd_products_shape *s, const float *v, const float *u0, const float *u1,
                          float *m, int b, int accumulate) {
    for (int t = 0; t < s->tiles; t += PAIR_GROUP) {
        const int n = s->tiles - t < PAIR_GROUP ? s->tiles - t : PAIR_GROUP;
        const float *r[PAIR_GROUP];
        tile_rows_of(s, v, t, n, PAIR_GROUP, r);
        float *out = m + (size_t)t * s->m_tile_stride + (size_t)b * BLOCK;
        for (int c0 = 0; c0 < s->channels; c0 += CHUNK) {
            const int c1 = s->channels - c0 < CHUNK ? s->channels : c0 + CHUNK;
            __m256 a[PAIR_GROUP][4];
            for (int i = 0; i < PAIR_GROUP; i++)
                for (int h = 0; h < 4; h++) a[i][h] = _mm256_setzero_ps();
            for (int c = c0; c < c1; c++) {
                // The 3 broadcasts first, then each filter vector just before its 3 multiply-adds:
                // 12 accumulators, 3 inputs and 1 filter vector fill the 16 ymm registers.
                __m256 x[PAIR_GROUP];
                for (int i = 0; i < PAIR_GROUP; i++) x[i] = _mm256_broadcast_ss(r[i] + c);
                for (int h = 0; h < 4; h++) {
                    const __m256 w = _mm256_loadu_ps((h < 2 ? u0 : u1) + (size_t)c * BLOCK + 8 * (h % 2));
                    for (int i = 0; i < PAIR_GROUP; i++) a[i][h] = _mm256_fmadd_ps(x[i], w, a[i][h]);
                }
            }
            for (int i = 0; i < n; i++) {
                float *o = out + (size_t)i * s->m_tile_stride;
                for (int h = 0; h < 4; h++) {
                    // Block h / 2's lanes 8 · (h % 2) …: the two blocks are adjacent in M's row.
                    float *p = o + 8 * h;
                    _mm256_storeu_ps(p, c0 == 0 && !accumulate ? a[i][h] : _mm256_add_ps(_mm256_loadu_ps(p), a[i][h]));
                }
            }
        }
    }
}

void anvil_winograd_products_avx2(const anvil_winograd_products_shape *s, const float *v, const float *u, float *m,
                                  int block_begin, int block_end) {
    // Read once, as in the AVX-512 body (a condition on `s` in the loops can cost registers).
    const int accumulate = s->accumulate;
    for (int b = block_begin; b < block_end; b++) {
        const float *ub = u + (size_t)b * s->channels * BLOCK;
        if (b + 1 < block_end) {
            pair_products(s, v, ub, ub + (size_t)s->channels * BLOCK, m, b, accumulate);
            b++;
            continue;
        }
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
                    if (c0 == 0 && !accumulate) {
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
