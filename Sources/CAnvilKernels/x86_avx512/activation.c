#if defined(__x86_64__)
#include "../internal/common.h"
#include "../internal/exp_polynomial.h"
#include <math.h>

// Activations with AVX-512F, 16 floats a step, for the functions that run over whole feature
// maps in the networks Anvil is timed on: SiLU (EfficientNet, after nearly every convolution),
// sigmoid (squeeze-and-excitation gates) and hard-swish (MobileNet v3). exp is the AVX2 body's
// polynomial step for step (x86_avx2/activation.c: the same operations in the same order, each
// multiply-add fused, the constants from internal/exp_polynomial.h), so both bodies give the
// same bits. The last 1-15 values go through a lane
// mask. Every other function runs the AVX2 body, which every AVX-512 CPU also runs.
//
// `ANVIL_AVX512_EMULATED` (Tests/CAnvilKernelsEmulated) compiles this file on emulated
// intrinsics under another name.

#ifdef ANVIL_AVX512_EMULATED
#define ACTIVATION_AVX512_NAME anvil_activation_avx512_emulated
#else
#define ACTIVATION_AVX512_NAME anvil_activation_avx512
#pragma clang attribute push(__attribute__((target("avx512f,avx2,fma"))), apply_to = function)
#endif

#define V16(x) _mm512_set1_ps(x)

/// e^x for x clamped into [lowest, highest] (the AVX2 body's `v_exp_clamped`). 2^n by `scalef`
/// (one instruction for the AVX2 body's five integer steps): both products are exact for the
/// clamped n, so the bits are the same, in fewer instructions.
static inline __attribute__((always_inline)) __m512 exp_clamped_avx512(__m512 x) {
    const __m512 xc = _mm512_min_ps(_mm512_max_ps(x, V16(ANVIL_EXP_LOWEST)), V16(ANVIL_EXP_HIGHEST));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(xc, V16(ANVIL_EXP_LOG2E)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, V16(ANVIL_EXP_LN2_HIGH), xc);
    r = _mm512_fnmadd_ps(n, V16(ANVIL_EXP_LN2_LOW), r);
    __m512 p = V16(ANVIL_EXP_P5);
    p = _mm512_fmadd_ps(p, r, V16(ANVIL_EXP_P4));
    p = _mm512_fmadd_ps(p, r, V16(ANVIL_EXP_P3));
    p = _mm512_fmadd_ps(p, r, V16(ANVIL_EXP_P2));
    p = _mm512_fmadd_ps(p, r, V16(ANVIL_EXP_P1));
    p = _mm512_fmadd_ps(p, r, V16(ANVIL_EXP_P0));
    __m512 y = _mm512_add_ps(_mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r), V16(1));
    return _mm512_scalef_ps(y, n);
}

static inline __attribute__((always_inline)) __m512 exp_avx512(__m512 x) {
    const float lowest = ANVIL_EXP_LOWEST, highest = ANVIL_EXP_HIGHEST;
    __m512 y = exp_clamped_avx512(x);
    y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, V16(lowest), _CMP_LT_OQ), y, V16(0));
    y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, V16(highest), _CMP_GT_OQ), y, V16(INFINITY));
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), y, x);
}

static inline __attribute__((always_inline)) __m512 silu_avx512(__m512 x) {
    // No fix-ups for inputs beyond exp's range: see the AVX2 body's silu.
    return _mm512_div_ps(x, _mm512_add_ps(V16(1), exp_clamped_avx512(_mm512_sub_ps(V16(0), x))));
}

static inline __attribute__((always_inline)) __m512 sigmoid_avx512(__m512 x) {
    return _mm512_div_ps(V16(1), _mm512_add_ps(V16(1), exp_avx512(_mm512_sub_ps(V16(0), x))));
}

static inline __attribute__((always_inline)) __m512 hard_swish_avx512(__m512 x) {
    const __m512 r = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(x, V16(3)), V16(0)), V16(6));
    return _mm512_mul_ps(x, _mm512_div_ps(r, V16(6)));
}

/// `count` values through `FUNCTION`, 16 at a time, the last 1-15 under a lane mask.
#define ACTIVATION_LOOP(FUNCTION)                                                                       \
    do {                                                                                                \
        long i = 0;                                                                                     \
        for (; i + 16 <= count; i += 16) _mm512_storeu_ps(values + i, FUNCTION(_mm512_loadu_ps(values + i))); \
        if (i < count) {                                                                                \
            const __mmask16 tail = (__mmask16)((1u << (count - i)) - 1u);                               \
            _mm512_mask_storeu_ps(values + i, tail, FUNCTION(_mm512_maskz_loadu_ps(tail, values + i)));  \
        }                                                                                               \
    } while (0)

static void silu_values(float *values, long count) { ACTIVATION_LOOP(silu_avx512); }
static void sigmoid_values(float *values, long count) { ACTIVATION_LOOP(sigmoid_avx512); }
static void hard_swish_values(float *values, long count) { ACTIVATION_LOOP(hard_swish_avx512); }

void ACTIVATION_AVX512_NAME(const anvil_activation_function *f, float *values, long count) {
    switch (f->kind) {
    case ANVIL_ACTIVATION_SILU: silu_values(values, count); break;
    case ANVIL_ACTIVATION_SIGMOID: sigmoid_values(values, count); break;
    case ANVIL_ACTIVATION_HARD_SWISH: hard_swish_values(values, count); break;
    default: anvil_activation_avx2(f, values, count); break;
    }
}

#ifndef ANVIL_AVX512_EMULATED
#pragma clang attribute pop
#endif
#endif
