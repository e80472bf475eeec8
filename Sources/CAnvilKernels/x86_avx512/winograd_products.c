#if defined(__x86_64__)
#include "../internal/winograd_products.h"

// The products with AVX-512F: 8 tiles × 32 output channels (two neighbouring blocks, a last odd
// block alone as 8 × 16) in 16 zmm accumulators, one broadcast per tile for both blocks — half
// the AVX2 tile's loads per multiply-add. Each run of channels is summed from zero by fused
// multiply-adds in channel order and then added into M, as in the AVX2 body, so the two agree
// bit for bit.
//
// `ANVIL_AVX512_EMULATED` (Tests/CAnvilKernelsEmulated) compiles this file on emulated
// intrinsics under another name.

#ifdef ANVIL_AVX512_EMULATED
#define WINOGRAD_PRODUCTS_AVX512_NAME anvil_winograd_products_avx512_emulated
#else
#define WINOGRAD_PRODUCTS_AVX512_NAME anvil_winograd_products_avx512
#pragma clang attribute push(__attribute__((target("avx512f,avx2,fma"))), apply_to = function)
#endif

enum { GROUP_AVX512 = 8 };

/// The `n` (1-8) tiles of `rows` × `H` blocks (1 or 2) from block pointer `u0` (and `u1`), one
/// run of channels `[c0, c1)`, into `out`'s rows. `H` is a constant at each call site.
static inline __attribute__((always_inline)) void
run_products(const int H, const anvil_winograd_products_shape *s, const float *rows[GROUP_AVX512], int n,
             const float *u0, const float *u1, int c0, int c1, int store, float *out) {
    __m512 a[GROUP_AVX512][2];
    for (int i = 0; i < GROUP_AVX512; i++)
        for (int h = 0; h < H; h++) a[i][h] = _mm512_setzero_ps();
    for (int c = c0; c < c1; c++) {
        __m512 w[2];
        w[0] = _mm512_loadu_ps(u0 + (size_t)c * BLOCK);
        if (H == 2) w[1] = _mm512_loadu_ps(u1 + (size_t)c * BLOCK);
        for (int i = 0; i < GROUP_AVX512; i++) {
            const __m512 x = _mm512_set1_ps(rows[i][c]);
            for (int h = 0; h < H; h++) a[i][h] = _mm512_fmadd_ps(x, w[h], a[i][h]);
        }
    }
    for (int i = 0; i < n; i++) {
        float *o = out + (size_t)i * s->m_tile_stride;
        for (int h = 0; h < H; h++) {
            if (store)
                _mm512_storeu_ps(o + BLOCK * h, a[i][h]);
            else
                _mm512_storeu_ps(o + BLOCK * h, _mm512_add_ps(_mm512_loadu_ps(o + BLOCK * h), a[i][h]));
        }
    }
}

/// The blocks' products; `ACCUMULATE` (a constant at each call) adds the first run into M too.
static inline __attribute__((always_inline)) void
products(const int ACCUMULATE, const anvil_winograd_products_shape *s, const float *v, const float *u, float *m,
         int block_begin, int block_end) {
    for (int b = block_begin; b < block_end; b += 2) {
        const int pair = b + 1 < block_end;
        const float *u0 = u + (size_t)b * s->channels * BLOCK, *u1 = u0 + (size_t)s->channels * BLOCK;
        for (int t = 0; t < s->tiles; t += GROUP_AVX512) {
            const int n = s->tiles - t < GROUP_AVX512 ? s->tiles - t : GROUP_AVX512;
            const float *rows[GROUP_AVX512];
            tile_rows_of(s, v, t, n, GROUP_AVX512, rows);
            float *out = m + (size_t)t * s->m_tile_stride + (size_t)b * BLOCK;
            for (int c0 = 0; c0 < s->channels; c0 += CHUNK) {
                const int c1 = s->channels - c0 < CHUNK ? s->channels : c0 + CHUNK;
                if (pair)
                    run_products(2, s, rows, n, u0, u1, c0, c1, c0 == 0 && !ACCUMULATE, out);
                else
                    run_products(1, s, rows, n, u0, NULL, c0, c1, c0 == 0 && !ACCUMULATE, out);
            }
        }
    }
}

void WINOGRAD_PRODUCTS_AVX512_NAME(const anvil_winograd_products_shape *s, const float *v, const float *u, float *m,
                                   int block_begin, int block_end) {
    // Two copies, each with the flag a constant: a condition on `s` inside the loops made the
    // compiler keep the accumulators on the stack, and even a hoisted flag changed (and slowed)
    // the code of the loops.
    if (s->accumulate)
        products(1, s, v, u, m, block_begin, block_end);
    else
        products(0, s, v, u, m, block_begin, block_end);
}

#ifndef ANVIL_AVX512_EMULATED
#pragma clang attribute pop
#endif
#endif
