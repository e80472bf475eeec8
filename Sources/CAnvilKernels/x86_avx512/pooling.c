#if defined(__x86_64__)
#include "../internal/pooling.h"

// Max and average pooling with AVX-512F: the AVX2 body's loops with 16 channels per zmm
// register — 32 channels of running maxima or sums in two registers, then 16 at a time, then
// the last 1-15 channels through a lane mask instead of a scalar loop (masked-off lanes are
// neither read, so they cannot fault past the end of a row, nor written).

//
// `ANVIL_AVX512_EMULATED` (Tests/CAnvilKernelsEmulated) compiles this file on emulated
// intrinsics under another name.

#ifdef ANVIL_AVX512_EMULATED
#define MAX_POOLING_AVX512_NAME anvil_max_pool_lines_avx512_emulated
#define AVERAGE_POOLING_AVX512_NAME anvil_average_pool_lines_avx512_emulated
#else
#define MAX_POOLING_AVX512_NAME anvil_max_pool_lines_avx512
#define AVERAGE_POOLING_AVX512_NAME anvil_average_pool_lines_avx512
#pragma clang attribute push(__attribute__((target("avx512f,avx2,fma"))), apply_to = function)
#endif

static void max_pixel_avx512(const anvil_pool_shape *s, anvil_pool_divisor d, const float *image, float *out, int oy,
                             int ox) {
    const float *cells[ANVIL_POOL_MAX_CELLS];
    const int count = anvil_pool_cells(s, image, oy, ox, cells);
    if (count < 0) { anvil_max_pixel_scalar(s, d, image, out, oy, ox); return; }
    const int C = s->channels;
    int c = 0;
    const __m512 lowest = _mm512_set1_ps(-INFINITY);
    // 32 channels (two lines of a cell) at a time: with 64 the pooling after a layer, its
    // output fresh in cache and its own output lines cold, is slower.
    for (; c + 32 <= C; c += 32) {
        __m512 m0 = lowest, m1 = lowest;
        for (int i = 0; i < count; i++) {
            // vmaxps returns its second operand when either is NaN: a NaN cell is skipped, as
            // in the scalar and AVX2 bodies.
            m0 = _mm512_max_ps(_mm512_loadu_ps(cells[i] + c), m0);
            m1 = _mm512_max_ps(_mm512_loadu_ps(cells[i] + c + 16), m1);
        }
        _mm512_storeu_ps(out + c, m0);
        _mm512_storeu_ps(out + c + 16, m1);
    }
    for (; c + 16 <= C; c += 16) {
        __m512 m = lowest;
        for (int i = 0; i < count; i++) m = _mm512_max_ps(_mm512_loadu_ps(cells[i] + c), m);
        _mm512_storeu_ps(out + c, m);
    }
    if (c < C) {
        // 1-15 channels left: lanes [0, C - c) of the mask are set.
        const __mmask16 tail = (__mmask16)((1u << (C - c)) - 1u);
        __m512 m = lowest;
        for (int i = 0; i < count; i++) m = _mm512_max_ps(_mm512_mask_loadu_ps(lowest, tail, cells[i] + c), m);
        _mm512_mask_storeu_ps(out + c, tail, m);
    }
}

void MAX_POOLING_AVX512_NAME(const anvil_pool_shape *s, const float *input, float *output, int line_begin, int line_end) {
    anvil_pool_lines(s, ANVIL_NO_DIVISOR, input, output, line_begin, line_end, max_pixel_avx512);
}

/// Average pooling's pixel: the scalar pixel's operations (0, plus each cell in window order,
/// times the scale) 32, 16, then the last 1-15 channels through a lane mask.
static void average_pixel_avx512(const anvil_pool_shape *s, anvil_pool_divisor d, const float *image, float *out,
                                 int oy, int ox) {
    const float *cells[ANVIL_POOL_MAX_CELLS];
    const int count = anvil_pool_cells(s, image, oy, ox, cells);
    if (count < 0) { anvil_average_pixel_scalar(s, d, image, out, oy, ox); return; }
    const int C = s->channels;
    const __m512 k = _mm512_set1_ps(anvil_pool_average_scale(s, d, oy, ox, count));
    int c = 0;
    for (; c + 32 <= C; c += 32) {
        __m512 m0 = _mm512_setzero_ps(), m1 = _mm512_setzero_ps();
        for (int i = 0; i < count; i++) {
            m0 = _mm512_add_ps(m0, _mm512_loadu_ps(cells[i] + c));
            m1 = _mm512_add_ps(m1, _mm512_loadu_ps(cells[i] + c + 16));
        }
        _mm512_storeu_ps(out + c, _mm512_mul_ps(m0, k));
        _mm512_storeu_ps(out + c + 16, _mm512_mul_ps(m1, k));
    }
    for (; c + 16 <= C; c += 16) {
        __m512 m = _mm512_setzero_ps();
        for (int i = 0; i < count; i++) m = _mm512_add_ps(m, _mm512_loadu_ps(cells[i] + c));
        _mm512_storeu_ps(out + c, _mm512_mul_ps(m, k));
    }
    if (c < C) {
        const __mmask16 tail = (__mmask16)((1u << (C - c)) - 1u);
        __m512 m = _mm512_setzero_ps();
        for (int i = 0; i < count; i++) m = _mm512_add_ps(m, _mm512_maskz_loadu_ps(tail, cells[i] + c));
        _mm512_mask_storeu_ps(out + c, tail, _mm512_mul_ps(m, k));
    }
}

void AVERAGE_POOLING_AVX512_NAME(const anvil_pool_shape *s, anvil_pool_divisor d, const float *input, float *output,
                                 int line_begin, int line_end) {
    anvil_pool_lines(s, d, input, output, line_begin, line_end, average_pixel_avx512);
}

#ifndef ANVIL_AVX512_EMULATED
#pragma clang attribute pop
#endif
#endif
