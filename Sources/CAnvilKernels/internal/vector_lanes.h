#ifndef ANVIL_KERNELS_VECTOR_LANES_H
#define ANVIL_KERNELS_VECTOR_LANES_H

// Vectors of LANES floats as clang vector extensions, for the kernels written once for any width
// (the Winograd transforms): the including header sets ANVIL_VECTOR_LANES (8 or 16), and the
// including body's target makes them zmm (AVX-512), ymm (AVX2) or SSE pairs (the scalar body, and
// the 16-lane header compiled without its target as its own emulation).

#include <string.h>

#ifndef ANVIL_VECTOR_LANES
#error "define ANVIL_VECTOR_LANES before including vector_lanes.h"
#endif

enum { LANES = ANVIL_VECTOR_LANES };

#define INLINE static inline __attribute__((always_inline))

// The helpers pass 32- and 64-byte vectors by value; they are always inlined, so the AVX
// calling convention the warning is about never applies.
#pragma clang diagnostic ignored "-Wpsabi"

/// LANES channels.
typedef float vf __attribute__((vector_size(LANES * 4)));
typedef int vi __attribute__((vector_size(LANES * 4)));

INLINE vf loadv(const float *p) { vf v; memcpy(&v, p, sizeof v); return v; }
INLINE void storev(float *p, vf v) { memcpy(p, &v, sizeof v); }
INLINE vf splat(float x) {
    vf v;
    for (int i = 0; i < LANES; i++) v[i] = x;
    return v;
}

/// `lanes` floats at `p`, zeros after them.
INLINE vf load_lanes(const float *p, int lanes) {
    if (lanes == LANES) return loadv(p);
    float lane[LANES] = { 0 };
    memcpy(lane, p, (size_t)lanes * sizeof(float));
    return loadv(lane);
}

/// The first `lanes` floats of `v` to `p`.
INLINE void store_lanes(float *p, vf v, int lanes) {
    if (lanes == LANES) { storev(p, v); return; }
    float lane[LANES];
    storev(lane, v);
    memcpy(p, lane, (size_t)lanes * sizeof(float));
}

/// `mask ? a : b`, lane by lane.
INLINE vf pick(vi mask, vf a, vf b) { return (vf)((mask & (vi)a) | (~mask & (vi)b)); }

#endif
