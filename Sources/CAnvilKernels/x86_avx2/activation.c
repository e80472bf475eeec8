#if defined(__x86_64__)
#include "../internal/common.h"
#include "../internal/exp_polynomial.h"
#include <float.h>
#include <math.h>
#include <string.h>

// Activations with AVX2 + FMA, 8 floats a step. exp, log, tanh and erf are polynomial
// approximations fitted for this file (Chebyshev fits in float64, coefficients rounded to
// float), each within about 2 ulp of the exact function over its range:
// - exp: x = n·ln2 + r, |r| ≤ ln2/2, e^r = 1 + r + r²·P(r) (degree 5), times 2^n; results
//   below 2.4e-38 flush to 0, above FLT_MAX are +∞;
// - log: x = m·2^e, m in [√½, √2), log(1+f) = f − f²/2 + f³·P(f) (degree 8), plus e·ln2;
// - tanh: x + x³·P(x²) (degree 5) below |x| 0.625, else 1 − 2/(e^{2|x|} + 1);
// - erf: x·P(x²) (degree 6) below |x| 1, a degree-12 polynomial in |x| − 2.5 on [1, 4], 1 beyond.
// The tail of an array shorter than 8 goes through the same vector code on a copy.

#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)

#define V(x) _mm256_set1_ps(x)

ANVIL_INLINE __m256 v_select(__m256 mask, __m256 yes, __m256 no) { return _mm256_blendv_ps(no, yes, mask); }
ANVIL_INLINE __m256 v_abs(__m256 x) { return _mm256_andnot_ps(V(-0.0f), x); }
ANVIL_INLINE __m256 v_isnan(__m256 x) { return _mm256_cmp_ps(x, x, _CMP_UNORD_Q); }

/// e^x for x clamped into [lowest, highest] (a NaN becomes `lowest`): no fix-ups for inputs
/// beyond the range (see `v_exp`).
ANVIL_INLINE __m256 v_exp_clamped(__m256 x) {
    const __m256 xc = _mm256_min_ps(_mm256_max_ps(x, V(ANVIL_EXP_LOWEST)), V(ANVIL_EXP_HIGHEST));
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(xc, V(ANVIL_EXP_LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, V(ANVIL_EXP_LN2_HIGH), xc);
    r = _mm256_fnmadd_ps(n, V(ANVIL_EXP_LN2_LOW), r);
    __m256 p = V(ANVIL_EXP_P5);
    p = _mm256_fmadd_ps(p, r, V(ANVIL_EXP_P4));
    p = _mm256_fmadd_ps(p, r, V(ANVIL_EXP_P3));
    p = _mm256_fmadd_ps(p, r, V(ANVIL_EXP_P2));
    p = _mm256_fmadd_ps(p, r, V(ANVIL_EXP_P1));
    p = _mm256_fmadd_ps(p, r, V(ANVIL_EXP_P0));
    __m256 y = _mm256_add_ps(_mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r), V(1));
    // 2^n as 2^(n−1)·2, so n from −125 to 128 stays a normal exponent.
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(126)), 23);
    return _mm256_mul_ps(_mm256_mul_ps(y, _mm256_castsi256_ps(e)), V(2));
}

ANVIL_INLINE __m256 v_exp(__m256 x) {
    const float lowest = ANVIL_EXP_LOWEST, highest = ANVIL_EXP_HIGHEST;
    __m256 y = v_exp_clamped(x);
    y = v_select(_mm256_cmp_ps(x, V(lowest), _CMP_LT_OQ), V(0), y);
    y = v_select(_mm256_cmp_ps(x, V(highest), _CMP_GT_OQ), V(INFINITY), y);
    return v_select(v_isnan(x), x, y);
}

ANVIL_INLINE __m256 v_log(__m256 x) {
    const __m256 tiny = _mm256_cmp_ps(x, V(FLT_MIN), _CMP_LT_OQ);
    const __m256 xs = v_select(tiny, _mm256_mul_ps(x, V(8388608.0f)), x);
    const __m256i bits = _mm256_castps_si256(xs);
    const __m256i exponent = _mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(127));
    __m256 m = _mm256_castsi256_ps(_mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x007fffff)),
                                                   _mm256_set1_epi32(0x3f800000)));
    const __m256 big = _mm256_cmp_ps(m, V(1.41421356237309505f), _CMP_GT_OQ);
    m = v_select(big, _mm256_mul_ps(m, V(0.5f)), m);
    __m256 e = _mm256_cvtepi32_ps(exponent);
    e = _mm256_add_ps(e, _mm256_and_ps(big, V(1)));
    e = _mm256_sub_ps(e, _mm256_and_ps(tiny, V(23)));
    const __m256 f = _mm256_sub_ps(m, V(1));
    __m256 p = V(7.160313212e-02f);
    p = _mm256_fmadd_ps(p, f, V(-1.158679526e-01f));
    p = _mm256_fmadd_ps(p, f, V(1.166471952e-01f));
    p = _mm256_fmadd_ps(p, f, V(-1.240918043e-01f));
    p = _mm256_fmadd_ps(p, f, V(1.424946149e-01f));
    p = _mm256_fmadd_ps(p, f, V(-1.666854348e-01f));
    p = _mm256_fmadd_ps(p, f, V(2.000072153e-01f));
    p = _mm256_fmadd_ps(p, f, V(-2.499998850e-01f));
    p = _mm256_fmadd_ps(p, f, V(3.333333114e-01f));
    const __m256 f2 = _mm256_mul_ps(f, f);
    __m256 y = _mm256_fmadd_ps(_mm256_mul_ps(p, f2), f, _mm256_fnmadd_ps(V(0.5f), f2, f));
    y = _mm256_fmadd_ps(e, V(ANVIL_EXP_LN2_LOW), y);
    y = _mm256_fmadd_ps(e, V(ANVIL_EXP_LN2_HIGH), y);
    y = v_select(_mm256_cmp_ps(x, V(0), _CMP_EQ_OQ), V(-INFINITY), y);
    y = v_select(_mm256_cmp_ps(x, V(0), _CMP_LT_OQ), V(NAN), y);
    y = v_select(_mm256_cmp_ps(x, V(INFINITY), _CMP_EQ_OQ), x, y);
    return v_select(v_isnan(x), x, y);
}

/// log(1 + u) for u ≥ 0 (log1p's trick: log(v)·u/(v − 1) with v = 1 + u rounded).
ANVIL_INLINE __m256 v_log1p_positive(__m256 u) {
    const __m256 v = _mm256_add_ps(u, V(1));
    const __m256 w = _mm256_sub_ps(v, V(1));
    const __m256 y = _mm256_mul_ps(v_log(v), _mm256_div_ps(u, w));
    return v_select(_mm256_cmp_ps(w, V(0), _CMP_EQ_OQ), u, y);
}

ANVIL_INLINE __m256 v_tanh(__m256 x) {
    const __m256 ax = v_abs(x);
    const __m256 x2 = _mm256_mul_ps(x, x);
    __m256 p = V(2.298853348e-03f);
    p = _mm256_fmadd_ps(p, x2, V(-8.352642510e-03f));
    p = _mm256_fmadd_ps(p, x2, V(2.177302100e-02f));
    p = _mm256_fmadd_ps(p, x2, V(-5.396004368e-02f));
    p = _mm256_fmadd_ps(p, x2, V(1.333330912e-01f));
    p = _mm256_fmadd_ps(p, x2, V(-3.333333326e-01f));
    const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(p, x2), x, x);
    const __m256 ex = v_exp(_mm256_add_ps(ax, ax));
    __m256 large = _mm256_sub_ps(V(1), _mm256_div_ps(V(2), _mm256_add_ps(ex, V(1))));
    large = _mm256_or_ps(large, _mm256_and_ps(x, V(-0.0f)));
    return v_select(_mm256_cmp_ps(ax, V(0.625f), _CMP_LT_OQ), small, large);
}

ANVIL_INLINE __m256 v_erf(__m256 x) {
    const __m256 ax = v_abs(x);
    const __m256 x2 = _mm256_mul_ps(x, x);
    __m256 p = V(7.933422913e-05f);
    p = _mm256_fmadd_ps(p, x2, V(-8.034828135e-04f));
    p = _mm256_fmadd_ps(p, x2, V(5.191216625e-03f));
    p = _mm256_fmadd_ps(p, x2, V(-2.685539873e-02f));
    p = _mm256_fmadd_ps(p, x2, V(1.128362571e-01f));
    p = _mm256_fmadd_ps(p, x2, V(-3.761262988e-01f));
    p = _mm256_fmadd_ps(p, x2, V(1.128379167e+00f));
    const __m256 small = _mm256_mul_ps(x, p);
    const __m256 t = _mm256_sub_ps(_mm256_min_ps(ax, V(4)), V(2.5f));
    __m256 q = V(-8.709190291e-06f);
    q = _mm256_fmadd_ps(q, t, V(2.140609731e-05f));
    q = _mm256_fmadd_ps(q, t, V(5.941226127e-05f));
    q = _mm256_fmadd_ps(q, t, V(-2.808724222e-04f));
    q = _mm256_fmadd_ps(q, t, V(2.920029946e-04f));
    q = _mm256_fmadd_ps(q, t, V(5.742036797e-04f));
    q = _mm256_fmadd_ps(q, t, V(-2.823758015e-03f));
    q = _mm256_fmadd_ps(q, t, V(6.100024588e-03f));
    q = _mm256_fmadd_ps(q, t, V(-8.612777699e-03f));
    q = _mm256_fmadd_ps(q, t, V(8.354324905e-03f));
    q = _mm256_fmadd_ps(q, t, V(-5.447070567e-03f));
    q = _mm256_fmadd_ps(q, t, V(2.177979277e-03f));
    q = _mm256_fmadd_ps(q, t, V(9.995930794e-01f));
    q = _mm256_min_ps(q, V(1));
    q = v_select(_mm256_cmp_ps(ax, V(4), _CMP_GE_OQ), V(1), q);
    const __m256 large = _mm256_or_ps(q, _mm256_and_ps(x, V(-0.0f)));
    const __m256 y = v_select(_mm256_cmp_ps(ax, V(1), _CMP_LT_OQ), small, large);
    return v_select(v_isnan(x), x, y);
}

ANVIL_INLINE __m256 v_softplus(__m256 x) {
    return _mm256_add_ps(_mm256_max_ps(x, V(0)), v_log1p_positive(v_exp(_mm256_sub_ps(V(0), v_abs(x)))));
}

// One function per activation, each with its own loop: the bodies stay small even unoptimised
// (a switch over every kind inlined into one loop would need a stack frame per copy of each).
#define ANVIL_AVX2_ACTIVATION(NAME, EXPR)                                                              \
    ANVIL_INLINE __m256 NAME##_v(__m256 a, __m256 b, __m256 x) { (void)a; (void)b; return EXPR; }      \
    static void NAME(const anvil_activation_function *f, float *values, long count) {                   \
        const __m256 a = V(f->alpha), b = V(f->beta);                                                   \
        long i = 0;                                                                                     \
        for (; i + 8 <= count; i += 8) _mm256_storeu_ps(values + i, NAME##_v(a, b, _mm256_loadu_ps(values + i))); \
        if (i < count) {                                                                                \
            float tail[8] = {0, 0, 0, 0, 0, 0, 0, 0};                                                   \
            memcpy(tail, values + i, (size_t)(count - i) * sizeof(float));                              \
            _mm256_storeu_ps(tail, NAME##_v(a, b, _mm256_loadu_ps(tail)));                              \
            memcpy(values + i, tail, (size_t)(count - i) * sizeof(float));                              \
        }                                                                                               \
    }

ANVIL_INLINE __m256 v_hard_swish(__m256 x) {
    const __m256 r = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(x, V(3)), V(0)), V(6));
    return _mm256_mul_ps(x, _mm256_div_ps(r, V(6)));
}

ANVIL_INLINE __m256 v_gelu(__m256 x) {
    const __m256 e = v_erf(_mm256_mul_ps(x, V(0.70710678118654752f)));
    return _mm256_mul_ps(_mm256_mul_ps(V(0.5f), x), _mm256_add_ps(V(1), e));
}

ANVIL_INLINE __m256 v_gelu_tanh(__m256 x) {
    const __m256 inner = _mm256_mul_ps(V(0.79788456080286536f),
                                       _mm256_fmadd_ps(_mm256_mul_ps(V(0.044715f), x), _mm256_mul_ps(x, x), x));
    return _mm256_mul_ps(_mm256_mul_ps(V(0.5f), x), _mm256_add_ps(V(1), v_tanh(inner)));
}

ANVIL_INLINE __m256 v_mish(__m256 x) {
    // tanh(log(1 + n)) = n(n + 2) / (n(n + 2) + 2) with n = e^x; x itself beyond 20.
    const __m256 n = v_exp(x);
    const __m256 q = _mm256_mul_ps(n, _mm256_add_ps(n, V(2)));
    const __m256 y = _mm256_mul_ps(x, _mm256_div_ps(q, _mm256_add_ps(q, V(2))));
    return v_select(_mm256_cmp_ps(x, V(20), _CMP_GT_OQ), x, y);
}

ANVIL_INLINE __m256 v_elu(__m256 a, __m256 x) {
    return v_select(_mm256_cmp_ps(x, V(0), _CMP_GT_OQ), x, _mm256_mul_ps(a, _mm256_sub_ps(v_exp(x), V(1))));
}

ANVIL_INLINE __m256 v_celu(__m256 a, __m256 x) {
    const __m256 negative = _mm256_mul_ps(a, _mm256_sub_ps(v_exp(_mm256_div_ps(x, a)), V(1)));
    return _mm256_add_ps(_mm256_max_ps(x, V(0)), _mm256_min_ps(negative, V(0)));
}

ANVIL_AVX2_ACTIVATION(relu_avx2, _mm256_max_ps(x, V(0)))
ANVIL_AVX2_ACTIVATION(clip_avx2, _mm256_min_ps(_mm256_max_ps(x, a), b))
ANVIL_AVX2_ACTIVATION(leaky_relu_avx2, v_select(_mm256_cmp_ps(x, V(0), _CMP_GE_OQ), x, _mm256_mul_ps(a, x)))
ANVIL_AVX2_ACTIVATION(sigmoid_avx2, _mm256_div_ps(V(1), _mm256_add_ps(V(1), v_exp(_mm256_sub_ps(V(0), x)))))
ANVIL_AVX2_ACTIVATION(tanh_avx2, v_tanh(x))
ANVIL_AVX2_ACTIVATION(elu_avx2, v_elu(a, x))
ANVIL_AVX2_ACTIVATION(selu_avx2, _mm256_mul_ps(b, v_elu(a, x)))
ANVIL_AVX2_ACTIVATION(hard_sigmoid_avx2, _mm256_max_ps(_mm256_min_ps(_mm256_fmadd_ps(a, x, b), V(1)), V(0)))
ANVIL_AVX2_ACTIVATION(hard_swish_avx2, v_hard_swish(x))
ANVIL_AVX2_ACTIVATION(linear_avx2, _mm256_fmadd_ps(a, x, b))
// SiLU needs none of exp's fix-ups, a sizeable share of its time: above
// x = 86.6, 1 + e^−x rounds to 1 either way; below −88.72 the clamped e^−x already overflows to
// +∞, so x / ∞ is −0 as before; a NaN x stays NaN through the division. The same bits for every
// input (checked against the fixed-up exp over [−120, 120] in steps of 1e-4, ±∞, NaN, denormals).
ANVIL_AVX2_ACTIVATION(silu_avx2, _mm256_div_ps(x, _mm256_add_ps(V(1), v_exp_clamped(_mm256_sub_ps(V(0), x)))))
ANVIL_AVX2_ACTIVATION(gelu_avx2, v_gelu(x))
ANVIL_AVX2_ACTIVATION(gelu_tanh_avx2, v_gelu_tanh(x))
ANVIL_AVX2_ACTIVATION(mish_avx2, v_mish(x))
ANVIL_AVX2_ACTIVATION(softplus_avx2, v_softplus(x))
ANVIL_AVX2_ACTIVATION(softsign_avx2, _mm256_div_ps(x, _mm256_add_ps(V(1), v_abs(x))))
ANVIL_AVX2_ACTIVATION(celu_avx2, v_celu(a, x))
ANVIL_AVX2_ACTIVATION(thresholded_relu_avx2, _mm256_and_ps(_mm256_cmp_ps(x, a, _CMP_GT_OQ), x))
ANVIL_AVX2_ACTIVATION(negative_avx2, _mm256_xor_ps(x, V(-0.0f)))
ANVIL_AVX2_ACTIVATION(absolute_avx2, v_abs(x))
ANVIL_AVX2_ACTIVATION(sqrt_avx2, _mm256_sqrt_ps(x))
ANVIL_AVX2_ACTIVATION(exp_avx2, v_exp(x))
ANVIL_AVX2_ACTIVATION(log_avx2, v_log(x))
ANVIL_AVX2_ACTIVATION(reciprocal_avx2, _mm256_div_ps(V(1), x))
ANVIL_AVX2_ACTIVATION(erf_avx2, v_erf(x))

void anvil_activation_avx2(const anvil_activation_function *f, float *values, long count) {
    switch (f->kind) {
    case ANVIL_ACTIVATION_NONE: break;
    case ANVIL_ACTIVATION_RELU: relu_avx2(f, values, count); break;
    case ANVIL_ACTIVATION_CLIP: clip_avx2(f, values, count); break;
    case ANVIL_ACTIVATION_LEAKY_RELU: leaky_relu_avx2(f, values, count); break;
    case ANVIL_ACTIVATION_SIGMOID: sigmoid_avx2(f, values, count); break;
    case ANVIL_ACTIVATION_TANH: tanh_avx2(f, values, count); break;
    case ANVIL_ACTIVATION_ELU: elu_avx2(f, values, count); break;
    case ANVIL_ACTIVATION_SELU: selu_avx2(f, values, count); break;
    case ANVIL_ACTIVATION_HARD_SIGMOID: hard_sigmoid_avx2(f, values, count); break;
    case ANVIL_ACTIVATION_HARD_SWISH: hard_swish_avx2(f, values, count); break;
    case ANVIL_ACTIVATION_LINEAR: linear_avx2(f, values, count); break;
    case ANVIL_ACTIVATION_SILU: silu_avx2(f, values, count); break;
    case ANVIL_ACTIVATION_GELU: gelu_avx2(f, values, count); break;
    case ANVIL_ACTIVATION_GELU_TANH: gelu_tanh_avx2(f, values, count); break;
    case ANVIL_ACTIVATION_MISH: mish_avx2(f, values, count); break;
    case ANVIL_ACTIVATION_SOFTPLUS: softplus_avx2(f, values, count); break;
    case ANVIL_ACTIVATION_SOFTSIGN: softsign_avx2(f, values, count); break;
    case ANVIL_ACTIVATION_CELU: celu_avx2(f, values, count); break;
    case ANVIL_ACTIVATION_THRESHOLDED_RELU: thresholded_relu_avx2(f, values, count); break;
    case ANVIL_ACTIVATION_NEGATIVE: negative_avx2(f, values, count); break;
    case ANVIL_ACTIVATION_ABSOLUTE: absolute_avx2(f, values, count); break;
    case ANVIL_ACTIVATION_SQRT: sqrt_avx2(f, values, count); break;
    case ANVIL_ACTIVATION_EXP: exp_avx2(f, values, count); break;
    case ANVIL_ACTIVATION_LOG: log_avx2(f, values, count); break;
    case ANVIL_ACTIVATION_RECIPROCAL: reciprocal_avx2(f, values, count); break;
    case ANVIL_ACTIVATION_ERF: erf_avx2(f, values, count); break;
    // Trigonometry, hyperbolic functions and rounding: the C library's, value by value (where
    // exporters write them, on a box angle or a coordinate, they are a few values per image).
    case ANVIL_ACTIVATION_SIN:
    case ANVIL_ACTIVATION_COS:
    case ANVIL_ACTIVATION_TAN:
    case ANVIL_ACTIVATION_ASIN:
    case ANVIL_ACTIVATION_ACOS:
    case ANVIL_ACTIVATION_ATAN:
    case ANVIL_ACTIVATION_SINH:
    case ANVIL_ACTIVATION_COSH:
    case ANVIL_ACTIVATION_ASINH:
    case ANVIL_ACTIVATION_ACOSH:
    case ANVIL_ACTIVATION_ATANH:
    case ANVIL_ACTIVATION_FLOOR:
    case ANVIL_ACTIVATION_CEIL:
    case ANVIL_ACTIVATION_ROUND:
    case ANVIL_ACTIVATION_SIGN:
        anvil_activation_scalar(f, values, count);
        break;
    }
}

#pragma clang attribute pop
#endif
