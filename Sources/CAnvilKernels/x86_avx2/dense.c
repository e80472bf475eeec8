#if defined(__x86_64__)
#include "../internal/dense.h"

// Small-batch fully connected layer with AVX2 + FMA: blocks of R weight rows × I images of
// dot products, each accumulated in its own register and reduced at the end, so each weight
// vector loaded serves I images.

#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)

static inline float horizontal_sum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

/// `R` rows starting at `o` against images `b ..< b + I`; both constants at each call site.
static inline __attribute__((always_inline)) void
block_avx2(const int R, const int I, const float *w, const float *x, const float *bias, float *y, int inputs,
           int outputs, int o, int b, float lo, float hi) {
    __m256 acc[4][4];
    for (int r = 0; r < R; r++)
        for (int i = 0; i < I; i++) acc[r][i] = _mm256_setzero_ps();
    const float *wr[4], *xi[4];
    for (int r = 0; r < R; r++) wr[r] = w + (size_t)(o + r) * inputs;
    for (int i = 0; i < I; i++) xi[i] = x + (size_t)(b + i) * inputs;
    int k = 0;
    for (; k + 8 <= inputs; k += 8) {
        __m256 xv[4];
        for (int i = 0; i < I; i++) xv[i] = _mm256_loadu_ps(xi[i] + k);
        for (int r = 0; r < R; r++) {
            __m256 wv = _mm256_loadu_ps(wr[r] + k);
            for (int i = 0; i < I; i++) acc[r][i] = _mm256_fmadd_ps(wv, xv[i], acc[r][i]);
        }
    }
    for (int r = 0; r < R; r++) {
        for (int i = 0; i < I; i++) {
            float sum = horizontal_sum(acc[r][i]);
            for (int t = k; t < inputs; t++) sum += wr[r][t] * xi[i][t];
            sum += bias ? bias[o + r] : 0.0f;
            y[(size_t)(b + i) * outputs + o + r] = anvil_clamp(sum, lo, hi);
        }
    }
}

/// Rows `[r0, r1)` for images `b ..< b + I` in blocks of `R` rows, then single rows.
#define DENSE_ROWS(R, I) ANVIL_DENSE_ROWS(block_avx2, R, I)

/// Weight rows per pass over the images: 12 (a multiple of the 2-, 3- and 4-row blocks) of up
/// to 4K inputs are under 200 KB, so they stay in L2 while every group of images reads them.
/// Each group walking all rows instead streamed the weights from memory once per 4 images:
/// at batch 8, MNIST's 12.8 MB layer twice.
enum { ROW_CHUNK = 12 };

void anvil_dense_rows_avx2(const float *w, const float *x, const float *bias, float *y, int inputs, int outputs,
                           int batch, int o0, int o1, float lo, float hi) {
    for (int r0 = o0, r1; r0 < o1; r0 = r1) {
        r1 = o1 - r0 < ROW_CHUNK ? o1 : r0 + ROW_CHUNK;
        int b = 0;
        // Four images share each weight load (2 rows × 4 images = 8 accumulators); leftovers
        // take 3 × 3, 4 × 2 or 4 × 1 blocks.
        for (; b + 4 <= batch; b += 4) DENSE_ROWS(2, 4);
        switch (batch - b) {
        case 3: DENSE_ROWS(3, 3); break;
        case 2: DENSE_ROWS(4, 2); break;
        case 1: DENSE_ROWS(4, 1); break;
        default: break;
        }
    }
}
#undef DENSE_ROWS

#pragma clang attribute pop
#endif
