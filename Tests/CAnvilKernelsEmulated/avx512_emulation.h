#ifndef ANVIL_AVX512_EMULATION_H
#define ANVIL_AVX512_EMULATION_H

// The AVX-512F intrinsics Anvil's AVX-512 bodies use, in portable C with the instructions'
// documented semantics (Intel's intrinsics guide), so an emulated build of a body computes what
// the real one computes, bit for bit:
// - multiply-add is fused (one rounding: C's fmaf, as VFMADD231PS);
// - max/min return the second operand when the comparison is false or unordered (VMAXPS/VMINPS);
// - masked loads and stores neither read nor write masked-off lanes (a load zeroes them, or
//   keeps `src`'s);
// - division and the other arithmetic round once, as IEEE float; rounding to an integer is to
//   nearest, ties to even (VRNDSCALEPS with _MM_FROUND_TO_NEAREST_INT, VCVTPS2DQ in the default
//   rounding mode: rintf); comparisons follow their predicate's ordered/unordered rule.
// Include after <immintrin.h>: the names below replace the real ones from here on.

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct { float f[16]; } emulated_m512;
typedef uint16_t emulated_mask16;

static inline emulated_m512 emulated_loadu_ps(const float *p) {
    emulated_m512 r;
    for (int i = 0; i < 16; i++) r.f[i] = p[i];
    return r;
}
static inline void emulated_storeu_ps(float *p, emulated_m512 a) {
    for (int i = 0; i < 16; i++) p[i] = a.f[i];
}
static inline emulated_m512 emulated_maskz_loadu_ps(emulated_mask16 k, const float *p) {
    emulated_m512 r;
    for (int i = 0; i < 16; i++) r.f[i] = (k >> i & 1) ? p[i] : 0.0f;
    return r;
}
static inline emulated_m512 emulated_mask_loadu_ps(emulated_m512 src, emulated_mask16 k, const float *p) {
    for (int i = 0; i < 16; i++)
        if (k >> i & 1) src.f[i] = p[i];
    return src;
}
static inline void emulated_mask_storeu_ps(float *p, emulated_mask16 k, emulated_m512 a) {
    for (int i = 0; i < 16; i++)
        if (k >> i & 1) p[i] = a.f[i];
}
static inline emulated_m512 emulated_set1_ps(float x) {
    emulated_m512 r;
    for (int i = 0; i < 16; i++) r.f[i] = x;
    return r;
}
static inline emulated_m512 emulated_setzero_ps(void) { return emulated_set1_ps(0.0f); }
static inline emulated_m512 emulated_add_ps(emulated_m512 a, emulated_m512 b) {
    for (int i = 0; i < 16; i++) a.f[i] += b.f[i];
    return a;
}
static inline emulated_m512 emulated_fmadd_ps(emulated_m512 a, emulated_m512 b, emulated_m512 c) {
    for (int i = 0; i < 16; i++) c.f[i] = fmaf(a.f[i], b.f[i], c.f[i]);
    return c;
}
static inline emulated_m512 emulated_max_ps(emulated_m512 a, emulated_m512 b) {
    for (int i = 0; i < 16; i++) a.f[i] = a.f[i] > b.f[i] ? a.f[i] : b.f[i];
    return a;
}
static inline emulated_m512 emulated_min_ps(emulated_m512 a, emulated_m512 b) {
    for (int i = 0; i < 16; i++) a.f[i] = a.f[i] < b.f[i] ? a.f[i] : b.f[i];
    return a;
}

typedef struct { int32_t i[16]; } emulated_m512i;

static inline emulated_m512 emulated_sub_ps(emulated_m512 a, emulated_m512 b) {
    for (int i = 0; i < 16; i++) a.f[i] -= b.f[i];
    return a;
}
static inline emulated_m512 emulated_mul_ps(emulated_m512 a, emulated_m512 b) {
    for (int i = 0; i < 16; i++) a.f[i] *= b.f[i];
    return a;
}
static inline emulated_m512 emulated_div_ps(emulated_m512 a, emulated_m512 b) {
    for (int i = 0; i < 16; i++) a.f[i] /= b.f[i];
    return a;
}
static inline emulated_m512 emulated_fnmadd_ps(emulated_m512 a, emulated_m512 b, emulated_m512 c) {
    for (int i = 0; i < 16; i++) c.f[i] = fmaf(-a.f[i], b.f[i], c.f[i]);
    return c;
}
/// Only the rounding Anvil's bodies ask for: to the nearest integer, ties to even.
static inline emulated_m512 emulated_roundscale_ps(emulated_m512 a, int mode) {
    (void)mode;
    for (int i = 0; i < 16; i++) a.f[i] = rintf(a.f[i]);
    return a;
}
/// a·2^⌊b⌋ (exact while the result is a normal float, as in the kernels' uses).
static inline emulated_m512 emulated_scalef_ps(emulated_m512 a, emulated_m512 b) {
    for (int i = 0; i < 16; i++) a.f[i] = ldexpf(a.f[i], (int)floorf(b.f[i]));
    return a;
}
static inline emulated_m512i emulated_cvtps_epi32(emulated_m512 a) {
    emulated_m512i r;
    for (int i = 0; i < 16; i++) r.i[i] = (int32_t)rintf(a.f[i]);
    return r;
}
static inline emulated_m512i emulated_set1_epi32(int32_t x) {
    emulated_m512i r;
    for (int i = 0; i < 16; i++) r.i[i] = x;
    return r;
}
static inline emulated_m512i emulated_add_epi32(emulated_m512i a, emulated_m512i b) {
    for (int i = 0; i < 16; i++) a.i[i] = (int32_t)((uint32_t)a.i[i] + (uint32_t)b.i[i]);
    return a;
}
static inline emulated_m512i emulated_slli_epi32(emulated_m512i a, unsigned count) {
    for (int i = 0; i < 16; i++) a.i[i] = count > 31 ? 0 : (int32_t)((uint32_t)a.i[i] << count);
    return a;
}
static inline emulated_m512 emulated_castsi512_ps(emulated_m512i a) {
    emulated_m512 r;
    memcpy(r.f, a.i, sizeof r.f);
    return r;
}
/// The predicates Anvil's bodies use: less than and greater than (ordered: false when either is
/// NaN) and unordered (true when either is NaN).
static inline emulated_mask16 emulated_cmp_ps_mask(emulated_m512 a, emulated_m512 b, int predicate) {
    emulated_mask16 k = 0;
    for (int i = 0; i < 16; i++) {
        const float x = a.f[i], y = b.f[i];
        int bit;
        switch (predicate) {
        case _CMP_LT_OQ: bit = x < y; break;
        case _CMP_GT_OQ: bit = x > y; break;
        case _CMP_UNORD_Q: bit = isnan(x) || isnan(y); break;
        default: abort();
        }
        k |= (emulated_mask16)(bit << i);
    }
    return k;
}
/// `b`'s lanes where `k` is set, `a`'s elsewhere.
static inline emulated_m512 emulated_mask_blend_ps(emulated_mask16 k, emulated_m512 a, emulated_m512 b) {
    for (int i = 0; i < 16; i++)
        if (k >> i & 1) a.f[i] = b.f[i];
    return a;
}

#define __m512 emulated_m512
#define __mmask16 emulated_mask16
#define _mm512_loadu_ps emulated_loadu_ps
#define _mm512_storeu_ps emulated_storeu_ps
#define _mm512_maskz_loadu_ps emulated_maskz_loadu_ps
#define _mm512_mask_loadu_ps emulated_mask_loadu_ps
#define _mm512_mask_storeu_ps emulated_mask_storeu_ps
#define _mm512_set1_ps emulated_set1_ps
#define _mm512_setzero_ps emulated_setzero_ps
#define _mm512_add_ps emulated_add_ps
#define _mm512_fmadd_ps emulated_fmadd_ps
#define _mm512_max_ps emulated_max_ps
#define _mm512_min_ps emulated_min_ps
#define __m512i emulated_m512i
#define _mm512_sub_ps emulated_sub_ps
#define _mm512_mul_ps emulated_mul_ps
#define _mm512_div_ps emulated_div_ps
#define _mm512_fnmadd_ps emulated_fnmadd_ps
#undef _mm512_roundscale_ps // a macro in <immintrin.h> (its rounding mode is an immediate)
#define _mm512_roundscale_ps emulated_roundscale_ps
#define _mm512_scalef_ps emulated_scalef_ps
#define _mm512_cvtps_epi32 emulated_cvtps_epi32
#define _mm512_set1_epi32 emulated_set1_epi32
#define _mm512_add_epi32 emulated_add_epi32
#define _mm512_slli_epi32 emulated_slli_epi32
#define _mm512_castsi512_ps emulated_castsi512_ps
#undef _mm512_cmp_ps_mask // a macro in <immintrin.h> (its predicate is an immediate)
#define _mm512_cmp_ps_mask emulated_cmp_ps_mask
#define _mm512_mask_blend_ps emulated_mask_blend_ps

#endif
