#if defined(__x86_64__)
// Winograd F(2×2, 5×5) with AVX-512F: internal/winograd_5x5.h's transforms at 16 lanes (a zmm per
// vector, half the AVX2 body's instructions, the same arithmetic lane by lane), and products in
// register tiles of 6 tiles × up to 4 blocks of 16 channels (24 zmm accumulators, as the direct
// kernel's 6 × 64 tile): per input channel 4 filter loads and 6 broadcasts feed 24 multiply-adds,
// where one block's 6 accumulators would wait on the multiply-add latency. Each lane's sum is
// the AVX2 body's (from zero, one multiply-add per input channel in order), so the two bodies
// agree bit for bit.
//
// `ANVIL_AVX512_EMULATED` (Tests/CAnvilKernelsEmulated) compiles this same file against portable
// emulations of the intrinsics, under another name, so that a CPU without AVX-512 still runs
// this body's loops in the tests.
#define ANVIL_WINOGRAD5_LANES 16
#include "../internal/winograd_5x5.h"

#ifdef ANVIL_AVX512_EMULATED
#define WINOGRAD5_AVX512_NAME anvil_winograd5_avx512_emulated
#else
#define WINOGRAD5_AVX512_NAME anvil_winograd5_avx512
#pragma clang attribute push(__attribute__((target("avx512f,avx2,fma"))), apply_to = function)
#endif

/// `N` tiles × `H` blocks (constants at every call site, so the loops unroll).
INLINE void products_avx512_n(const int N, const int H, const float *v, int cp, const float *u, size_t u_block,
                              int channels, float *m) {
    __m512 a[GROUP][MAX_BLOCKS];
    for (int i = 0; i < N; i++)
        for (int h = 0; h < H; h++) a[i][h] = _mm512_setzero_ps();
    for (int c = 0; c < channels; c++) {
        __m512 w[MAX_BLOCKS];
        for (int h = 0; h < H; h++) w[h] = _mm512_loadu_ps(u + h * u_block + (size_t)c * BLOCK);
        for (int i = 0; i < N; i++) {
            const __m512 x = _mm512_set1_ps(v[(size_t)i * cp + c]);
            for (int h = 0; h < H; h++) a[i][h] = _mm512_fmadd_ps(x, w[h], a[i][h]);
        }
    }
    for (int i = 0; i < N; i++)
        for (int h = 0; h < H; h++) _mm512_storeu_ps(m + h * M_BLOCK + (size_t)i * BLOCK, a[i][h]);
}

#define PRODUCTS_CASE(N, H) case N: products_avx512_n(N, H, v, cp, u, u_block, channels, m); break;
#define PRODUCTS_CASES(H) \
    switch (n) { PRODUCTS_CASE(6, H) PRODUCTS_CASE(5, H) PRODUCTS_CASE(4, H) PRODUCTS_CASE(3, H) PRODUCTS_CASE(2, H) \
                 default: products_avx512_n(1, H, v, cp, u, u_block, channels, m); break; }

static void products_avx512(const float *v, int cp, const float *u, size_t u_block, int channels, int n, int blocks,
                            float *m) {
    switch (blocks) {
    case 4: PRODUCTS_CASES(4) break;
    case 3: PRODUCTS_CASES(3) break;
    case 2: PRODUCTS_CASES(2) break;
    default: PRODUCTS_CASES(1) break;
    }
}
#undef PRODUCTS_CASES
#undef PRODUCTS_CASE

void WINOGRAD5_AVX512_NAME(const anvil_winograd5_shape *s, const float *input, const float *u, const float *bias,
                           float *output, long tile_begin, long tile_end, float *scratch) {
    run_tiles(s, input, u, bias, output, tile_begin, tile_end, scratch, products_avx512, MAX_BLOCKS);
}

#ifndef ANVIL_AVX512_EMULATED
#pragma clang attribute pop
#endif
#endif
