#ifndef ANVIL_AVX512_EMULATION_H
#define ANVIL_AVX512_EMULATION_H

// The AVX-512F intrinsics Anvil's AVX-512 bodies use, in portable C with the instructions'
// documented semantics (Intel's intrinsics guide), so an emulated build of a body computes what
// the real one computes, bit for bit:
// - multiply-add is fused (one rounding: C's fmaf, as VFMADD231PS);
// - max/min return the second operand when the comparison is false or unordered (VMAXPS/VMINPS);
// - masked loads and stores neither read nor write masked-off lanes (a load zeroes them, or
//   keeps `src`'s).
// Include after <immintrin.h>: the names below replace the real ones from here on.

#include <math.h>
#include <stdint.h>

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

#endif
