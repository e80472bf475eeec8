#if defined(__x86_64__)
#include "../internal/dense.h"

// Small-batch fully connected layer with AVX-512F: the AVX2 body's blocks of R weight rows × I
// images of dot products (x86_avx2/dense.c), 16 inputs a step, so that each weight vector loaded
// serves up to 8 images: 2 rows × 8 images take 10 loads per 16 multiply-adds of 16 lanes, where
// the AVX2 body's 2 × 4 take 6 per 8 of 8. The last 1-15 inputs go through a lane mask (zeros in
// both operands add nothing), and each dot product is reduced in a fixed order through memory.
//
// `ANVIL_AVX512_EMULATED` (Tests/CAnvilKernelsEmulated) compiles this file on emulated
// intrinsics under another name.

#ifdef ANVIL_AVX512_EMULATED
#define DENSE_AVX512_NAME anvil_dense_rows_avx512_emulated
#else
#define DENSE_AVX512_NAME anvil_dense_rows_avx512
#pragma clang attribute push(__attribute__((target("avx512f,avx2,fma"))), apply_to = function)
#endif

/// The sum of `v`'s lanes, pairwise in a fixed order.
static inline float lane_sum(__m512 v) {
    float lanes[16];
    _mm512_storeu_ps(lanes, v);
    for (int width = 8; width > 0; width /= 2)
        for (int i = 0; i < width; i++) lanes[i] += lanes[i + width];
    return lanes[0];
}

/// `R` rows starting at `o` against images `b ..< b + I`; both constants at each call site.
static inline __attribute__((always_inline)) void
block_avx512(const int R, const int I, const float *w, const float *x, const float *bias, float *y, int inputs,
             int outputs, int o, int b, float lo, float hi) {
    __m512 acc[8][8];
    for (int r = 0; r < R; r++)
        for (int i = 0; i < I; i++) acc[r][i] = _mm512_setzero_ps();
    const float *wr[8], *xi[8];
    for (int r = 0; r < R; r++) wr[r] = w + (size_t)(o + r) * inputs;
    for (int i = 0; i < I; i++) xi[i] = x + (size_t)(b + i) * inputs;
    int k = 0;
    if (I == 1) {
        // A lone image: two chains a row (k and k + 16), so that 2 rows keep 4 FMAs in flight.
        for (int r = 0; r < R; r++) acc[r][1] = _mm512_setzero_ps();
        for (; k + 32 <= inputs; k += 32) {
            const __m512 x0 = _mm512_loadu_ps(xi[0] + k), x1 = _mm512_loadu_ps(xi[0] + k + 16);
            for (int r = 0; r < R; r++) {
                acc[r][0] = _mm512_fmadd_ps(_mm512_loadu_ps(wr[r] + k), x0, acc[r][0]);
                acc[r][1] = _mm512_fmadd_ps(_mm512_loadu_ps(wr[r] + k + 16), x1, acc[r][1]);
            }
        }
        for (int r = 0; r < R; r++) acc[r][0] = _mm512_add_ps(acc[r][0], acc[r][1]);
    }
    for (; k + 16 <= inputs; k += 16) {
        __m512 xv[8];
        for (int i = 0; i < I; i++) xv[i] = _mm512_loadu_ps(xi[i] + k);
        for (int r = 0; r < R; r++) {
            const __m512 wv = _mm512_loadu_ps(wr[r] + k);
            for (int i = 0; i < I; i++) acc[r][i] = _mm512_fmadd_ps(wv, xv[i], acc[r][i]);
        }
    }
    if (k < inputs) {
        const __mmask16 tail = (__mmask16)((1u << (inputs - k)) - 1u);
        __m512 xv[8];
        for (int i = 0; i < I; i++) xv[i] = _mm512_maskz_loadu_ps(tail, xi[i] + k);
        for (int r = 0; r < R; r++) {
            const __m512 wv = _mm512_maskz_loadu_ps(tail, wr[r] + k);
            for (int i = 0; i < I; i++) acc[r][i] = _mm512_fmadd_ps(wv, xv[i], acc[r][i]);
        }
    }
    for (int r = 0; r < R; r++)
        for (int i = 0; i < I; i++) {
            const float sum = lane_sum(acc[r][i]) + (bias ? bias[o + r] : 0.0f);
            y[(size_t)(b + i) * outputs + o + r] = anvil_clamp(sum, lo, hi);
        }
}

/// Rows `[r0, r1)` for images `b ..< b + I` in blocks of `R` rows, then single rows.
#define DENSE_ROWS(R, I) ANVIL_DENSE_ROWS(block_avx512, R, I)

/// Weight rows per pass over the images: 24 (a multiple of every block's rows) of MNIST's 3,136
/// inputs are 300 KB, which stay in the L2 of the AVX-512 CPUs (1 MB or more per core) while
/// every group of 8 images reads them.
enum { ROW_CHUNK = 24 };

void DENSE_AVX512_NAME(const float *w, const float *x, const float *bias, float *y, int inputs, int outputs,
                       int batch, int o0, int o1, float lo, float hi) {
    for (int r0 = o0, r1; r0 < o1; r0 = r1) {
        r1 = o1 - r0 < ROW_CHUNK ? o1 : r0 + ROW_CHUNK;
        int b = 0;
        // 16 accumulators a block (12 for 2 and 3 images). A lone image takes 2 rows of two
        // chains each: its layer is bound by streaming the weights, and fewer streams at once
        // go faster (but one row alone streams large weights more slowly).
        for (; b + 8 <= batch; b += 8) DENSE_ROWS(2, 8);
        for (; b + 4 <= batch; b += 4) DENSE_ROWS(4, 4);
        switch (batch - b) {
        case 3: DENSE_ROWS(4, 3); break;
        case 2: DENSE_ROWS(6, 2); break;
        case 1: DENSE_ROWS(2, 1); break;
        default: break;
        }
    }
}
#undef DENSE_ROWS

#ifndef ANVIL_AVX512_EMULATED
#pragma clang attribute pop
#endif
#endif
