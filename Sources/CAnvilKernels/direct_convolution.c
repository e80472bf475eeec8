#include "CAnvilKernels.h"
#include "kernels_internal.h"
#include <string.h>

// Direct convolution: each output tile of up to 6 pixels × 16 channels lives in registers
// (12 AVX accumulators) while the kernel walks the window taps and input channels,
// reading the input in place — for a fixed tap, a pixel's channels are contiguous in NHWC —
// so no im2col matrix is ever written. Weights are packed per block of 16 output channels
// so the inner loop reads them as one sequential stream.

enum { TILE = 6, BLOCK = ANVIL_CONV_BLOCK };

size_t anvil_conv_packed_count(int outputs, int depth) {
    size_t blocks = (size_t)(outputs + BLOCK - 1) / BLOCK;
    return blocks * (size_t)depth * BLOCK;
}

void anvil_conv_pack_weights(const float *w, int outputs, int depth, float *packed) {
    int blocks = (outputs + BLOCK - 1) / BLOCK;
    for (int b = 0; b < blocks; b++) {
        float *dst = packed + (size_t)b * depth * BLOCK;
        for (int k = 0; k < depth; k++) {
            for (int j = 0; j < BLOCK; j++) {
                int o = b * BLOCK + j;
                dst[(size_t)k * BLOCK + j] = o < outputs ? w[(size_t)o * depth + k] : 0.0f;
            }
        }
    }
}

/// The input address of each tile pixel's window origin (tap 0, channel 0).
static inline void tile_origins(const anvil_conv_shape *s, const float *input, int first, int n,
                                const float *origins[TILE]) {
    for (int i = 0; i < n; i++) {
        int p = first + i;
        int oy = p / s->output_width, ox = p - oy * s->output_width;
        origins[i] = input + ((size_t)oy * s->stride_height * s->input_width + (size_t)ox * s->stride_width) * s->channels;
    }
}

/// Writes `n` pixels × 16 results from `acc[i][j]` (bias included) with the clamp applied,
/// only the `valid` leading channels when the block is the last, partial one.
static inline void store_tile(const anvil_conv_shape *s, float acc[TILE][BLOCK], int n, float *out, int valid) {
    for (int i = 0; i < n; i++) {
        float *row = out + (size_t)i * s->outputs;
        for (int j = 0; j < valid; j++) row[j] = anvil_clamp(acc[i][j], s->clamp_min, s->clamp_max);
    }
}

static void tile_portable(const anvil_conv_shape *s, const float *origins[TILE], int n, const float *weights,
                          const float *bias, float *out, int valid) {
    float acc[TILE][BLOCK];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < BLOCK; j++) acc[i][j] = bias ? bias[j] : 0.0f;
    const int channels = s->channels;
    for (int ky = 0; ky < s->kernel_height; ky++) {
        for (int kx = 0; kx < s->kernel_width; kx++) {
            size_t offset = ((size_t)ky * s->dilation_height * s->input_width + (size_t)kx * s->dilation_width) * channels;
            const float *w = weights + (size_t)(ky * s->kernel_width + kx) * channels * BLOCK;
            for (int c = 0; c < channels; c++) {
                for (int i = 0; i < n; i++) {
                    float x = origins[i][offset + c];
                    for (int j = 0; j < BLOCK; j++) acc[i][j] += x * w[c * BLOCK + j];
                }
            }
        }
    }
    store_tile(s, acc, n, out, valid);
}

#if ANVIL_X86
/// One tile of `N` pixels; `N` is a constant at every call site so the loops unroll.
ANVIL_AVX2 static inline __attribute__((always_inline)) void
tile_avx2_n(const int N, const anvil_conv_shape *s, const float *origins[TILE], const float *weights,
            const float *bias, float *out, int valid) {
    __m256 a0[TILE], a1[TILE];
    __m256 b0 = bias ? _mm256_loadu_ps(bias) : _mm256_setzero_ps();
    __m256 b1 = bias ? _mm256_loadu_ps(bias + 8) : _mm256_setzero_ps();
    for (int i = 0; i < N; i++) { a0[i] = b0; a1[i] = b1; }
    const int channels = s->channels;
    for (int ky = 0; ky < s->kernel_height; ky++) {
        for (int kx = 0; kx < s->kernel_width; kx++) {
            size_t offset = ((size_t)ky * s->dilation_height * s->input_width + (size_t)kx * s->dilation_width) * channels;
            const float *w = weights + (size_t)(ky * s->kernel_width + kx) * channels * BLOCK;
            const float *x[TILE];
            for (int i = 0; i < N; i++) x[i] = origins[i] + offset;
            for (int c = 0; c < channels; c++) {
                __m256 w0 = _mm256_loadu_ps(w + c * BLOCK), w1 = _mm256_loadu_ps(w + c * BLOCK + 8);
                for (int i = 0; i < N; i++) {
                    __m256 v = _mm256_broadcast_ss(x[i] + c);
                    a0[i] = _mm256_fmadd_ps(v, w0, a0[i]);
                    a1[i] = _mm256_fmadd_ps(v, w1, a1[i]);
                }
            }
        }
    }
    __m256 lo = _mm256_set1_ps(s->clamp_min), hi = _mm256_set1_ps(s->clamp_max);
    if (valid == BLOCK) {
        for (int i = 0; i < N; i++) {
            float *row = out + (size_t)i * s->outputs;
            _mm256_storeu_ps(row, _mm256_min_ps(_mm256_max_ps(a0[i], lo), hi));
            _mm256_storeu_ps(row + 8, _mm256_min_ps(_mm256_max_ps(a1[i], lo), hi));
        }
    } else {
        float acc[TILE][BLOCK];
        for (int i = 0; i < N; i++) { _mm256_storeu_ps(acc[i], a0[i]); _mm256_storeu_ps(acc[i] + 8, a1[i]); }
        store_tile(s, acc, N, out, valid);
    }
}

ANVIL_AVX2 static void tile_avx2(const anvil_conv_shape *s, const float *origins[TILE], int n, const float *weights,
                                 const float *bias, float *out, int valid) {
    switch (n) {
    case 6: tile_avx2_n(6, s, origins, weights, bias, out, valid); break;
    case 5: tile_avx2_n(5, s, origins, weights, bias, out, valid); break;
    case 4: tile_avx2_n(4, s, origins, weights, bias, out, valid); break;
    case 3: tile_avx2_n(3, s, origins, weights, bias, out, valid); break;
    case 2: tile_avx2_n(2, s, origins, weights, bias, out, valid); break;
    default: tile_avx2_n(1, s, origins, weights, bias, out, valid); break;
    }
}
#endif

void anvil_conv_direct(const anvil_conv_shape *s, const float *input, const float *packed, const float *bias,
                       float *output, int pixel_begin, int pixel_end, int block_begin, int block_end) {
    const int depth = s->kernel_height * s->kernel_width * s->channels;
    const int avx2 = anvil_kernels_uses_avx2();
    float padded_bias[BLOCK];
    for (int b = block_begin; b < block_end; b++) {
        const float *weights = packed + (size_t)b * depth * BLOCK;
        int valid = s->outputs - b * BLOCK;
        if (valid > BLOCK) valid = BLOCK;
        const float *block_bias = NULL;
        if (bias) {
            if (valid == BLOCK) {
                block_bias = bias + b * BLOCK;
            } else {
                memset(padded_bias, 0, sizeof padded_bias);
                memcpy(padded_bias, bias + b * BLOCK, (size_t)valid * sizeof(float));
                block_bias = padded_bias;
            }
        }
        for (int p = pixel_begin; p < pixel_end; p += TILE) {
            int n = pixel_end - p < TILE ? pixel_end - p : TILE;
            const float *origins[TILE];
            tile_origins(s, input, p, n, origins);
            float *out = output + (size_t)p * s->outputs + (size_t)b * BLOCK;
#if ANVIL_X86
            if (avx2) { tile_avx2(s, origins, n, weights, block_bias, out, valid); continue; }
#endif
            (void)avx2;
            tile_portable(s, origins, n, weights, block_bias, out, valid);
        }
    }
}
