#if defined(__x86_64__)
#include "../internal/elementwise.h"

// Element-wise binary operations with broadcasting, AVX2: 8 floats a step, 32 in the unrolled
// loop; a broadcast operand is one register. Power and the remainders have no vector form here:
// powf or fmodf per element; nor have the mask logic operations (and, or, xor).

#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)

ANVIL_INLINE __m256 op_avx2(const anvil_binary_op op, __m256 a, __m256 b) {
    switch (op) {
    case ANVIL_BINARY_ADD: return _mm256_add_ps(a, b);
    case ANVIL_BINARY_SUBTRACT: return _mm256_sub_ps(a, b);
    case ANVIL_BINARY_MULTIPLY: return _mm256_mul_ps(a, b);
    case ANVIL_BINARY_DIVIDE: return _mm256_div_ps(a, b);
    case ANVIL_BINARY_MAXIMUM: return _mm256_max_ps(a, b);
    case ANVIL_BINARY_MINIMUM: return _mm256_min_ps(a, b);
    // Comparisons: an ordered predicate's all-ones lanes masked to 1.0f (NaN compares false).
    case ANVIL_BINARY_LESS: return _mm256_and_ps(_mm256_cmp_ps(a, b, _CMP_LT_OQ), _mm256_set1_ps(1.0f));
    case ANVIL_BINARY_LESS_OR_EQUAL: return _mm256_and_ps(_mm256_cmp_ps(a, b, _CMP_LE_OQ), _mm256_set1_ps(1.0f));
    case ANVIL_BINARY_GREATER: return _mm256_and_ps(_mm256_cmp_ps(a, b, _CMP_GT_OQ), _mm256_set1_ps(1.0f));
    case ANVIL_BINARY_GREATER_OR_EQUAL: return _mm256_and_ps(_mm256_cmp_ps(a, b, _CMP_GE_OQ), _mm256_set1_ps(1.0f));
    case ANVIL_BINARY_EQUAL: return _mm256_and_ps(_mm256_cmp_ps(a, b, _CMP_EQ_OQ), _mm256_set1_ps(1.0f));
    default: break;
    }
    return a;
}

ANVIL_INLINE __m256 load_or_splat(const float *p, long stride, long i) {
    return stride ? _mm256_loadu_ps(p + i) : _mm256_set1_ps(p[0]);
}

ANVIL_INLINE void span_op(const anvil_binary_op op, const float *a, long sa, const float *b, long sb, float *out,
                          long n) {
    if (op == ANVIL_BINARY_POWER || op == ANVIL_BINARY_REMAINDER || op == ANVIL_BINARY_FMOD || op == ANVIL_BINARY_AND ||
        op == ANVIL_BINARY_OR || op == ANVIL_BINARY_XOR || (!sa && !sb)) {
        anvil_binary_span_scalar(op, a, sa, b, sb, out, n);
        return;
    }
    long i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m256 r0 = op_avx2(op, load_or_splat(a, sa, i), load_or_splat(b, sb, i));
        const __m256 r1 = op_avx2(op, load_or_splat(a, sa, i + 8), load_or_splat(b, sb, i + 8));
        const __m256 r2 = op_avx2(op, load_or_splat(a, sa, i + 16), load_or_splat(b, sb, i + 16));
        const __m256 r3 = op_avx2(op, load_or_splat(a, sa, i + 24), load_or_splat(b, sb, i + 24));
        _mm256_storeu_ps(out + i, r0); _mm256_storeu_ps(out + i + 8, r1);
        _mm256_storeu_ps(out + i + 16, r2); _mm256_storeu_ps(out + i + 24, r3);
    }
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, op_avx2(op, load_or_splat(a, sa, i), load_or_splat(b, sb, i)));
    for (; i < n; i++) out[i] = anvil_binary_scalar_op(op, a[sa * i], b[sb * i]);
}

ANVIL_INLINE void span_strides(const anvil_binary_op op, const float *a, long sa, const float *b, long sb, float *out,
                               long n) {
    // One specialised loop per stride pair, so no load tests its stride inside the loop.
    if (sa && sb) span_op(op, a, 1, b, 1, out, n);
    else if (sa) span_op(op, a, 1, b, 0, out, n);
    else if (sb) span_op(op, a, 0, b, 1, out, n);
    else span_op(op, a, 0, b, 0, out, n);
}

static void span_avx2(anvil_binary_op op, const float *a, long sa, const float *b, long sb, float *out, long n) {
    switch (op) {
    case ANVIL_BINARY_ADD: span_strides(ANVIL_BINARY_ADD, a, sa, b, sb, out, n); break;
    case ANVIL_BINARY_SUBTRACT: span_strides(ANVIL_BINARY_SUBTRACT, a, sa, b, sb, out, n); break;
    case ANVIL_BINARY_MULTIPLY: span_strides(ANVIL_BINARY_MULTIPLY, a, sa, b, sb, out, n); break;
    case ANVIL_BINARY_DIVIDE: span_strides(ANVIL_BINARY_DIVIDE, a, sa, b, sb, out, n); break;
    case ANVIL_BINARY_MAXIMUM: span_strides(ANVIL_BINARY_MAXIMUM, a, sa, b, sb, out, n); break;
    case ANVIL_BINARY_MINIMUM: span_strides(ANVIL_BINARY_MINIMUM, a, sa, b, sb, out, n); break;
    case ANVIL_BINARY_POWER: anvil_binary_span_scalar(ANVIL_BINARY_POWER, a, sa, b, sb, out, n); break;
    case ANVIL_BINARY_REMAINDER: anvil_binary_span_scalar(ANVIL_BINARY_REMAINDER, a, sa, b, sb, out, n); break;
    case ANVIL_BINARY_FMOD: anvil_binary_span_scalar(ANVIL_BINARY_FMOD, a, sa, b, sb, out, n); break;
    case ANVIL_BINARY_LESS: span_strides(ANVIL_BINARY_LESS, a, sa, b, sb, out, n); break;
    case ANVIL_BINARY_LESS_OR_EQUAL: span_strides(ANVIL_BINARY_LESS_OR_EQUAL, a, sa, b, sb, out, n); break;
    case ANVIL_BINARY_GREATER: span_strides(ANVIL_BINARY_GREATER, a, sa, b, sb, out, n); break;
    case ANVIL_BINARY_GREATER_OR_EQUAL: span_strides(ANVIL_BINARY_GREATER_OR_EQUAL, a, sa, b, sb, out, n); break;
    case ANVIL_BINARY_EQUAL: span_strides(ANVIL_BINARY_EQUAL, a, sa, b, sb, out, n); break;
    default: anvil_binary_span_scalar(op, a, sa, b, sb, out, n); break;
    }
}

void anvil_binary_avx2(anvil_binary_op op, const anvil_binary_shape *s, const float *a, const float *b, float *out,
                       long begin, long end) {
    anvil_binary_walk(op, s, a, b, out, begin, end, span_avx2);
}

#pragma clang attribute pop
#endif
