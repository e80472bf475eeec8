#if defined(__x86_64__)
#include "../internal/winograd_5x5.h"

// Winograd F(2×2, 5×5) with AVX2 + FMA: the products as 6 tiles × 16 channels in 12 ymm
// accumulators (the direct kernel's inner loop), one block at a time; the transforms' 8-lane
// vectors are ymm here.

#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)

INLINE void products_avx2_n(const int N, const float *v, int cp, const float *u, int channels, float *m) {
    __m256 a0[GROUP], a1[GROUP];
    for (int i = 0; i < N; i++) { a0[i] = _mm256_setzero_ps(); a1[i] = _mm256_setzero_ps(); }
    for (int c = 0; c < channels; c++) {
        __m256 w0 = _mm256_loadu_ps(u + (size_t)c * BLOCK), w1 = _mm256_loadu_ps(u + (size_t)c * BLOCK + 8);
        for (int i = 0; i < N; i++) {
            __m256 x = _mm256_broadcast_ss(v + (size_t)i * cp + c);
            a0[i] = _mm256_fmadd_ps(x, w0, a0[i]);
            a1[i] = _mm256_fmadd_ps(x, w1, a1[i]);
        }
    }
    for (int i = 0; i < N; i++) {
        _mm256_storeu_ps(m + (size_t)i * BLOCK, a0[i]);
        _mm256_storeu_ps(m + (size_t)i * BLOCK + 8, a1[i]);
    }
}

static void products_avx2(const float *v, int cp, const float *u, size_t u_block, int channels, int n, int blocks,
                          float *m) {
    for (int k = 0; k < blocks; k++, u += u_block, m += M_BLOCK) {
        switch (n) {
        case 6: products_avx2_n(6, v, cp, u, channels, m); break;
        case 5: products_avx2_n(5, v, cp, u, channels, m); break;
        case 4: products_avx2_n(4, v, cp, u, channels, m); break;
        case 3: products_avx2_n(3, v, cp, u, channels, m); break;
        case 2: products_avx2_n(2, v, cp, u, channels, m); break;
        default: products_avx2_n(1, v, cp, u, channels, m); break;
        }
    }
}
void anvil_winograd5_avx2(const anvil_winograd5_shape *s, const float *input, const float *u, const float *bias,
                          float *output, long tile_begin, long tile_end, float *scratch) {
    run_tiles(s, input, u, bias, output, tile_begin, tile_end, scratch, products_avx2, 1);
}

#pragma clang attribute pop
#endif
