#ifndef ANVIL_KERNELS_COMMON_H
#define ANVIL_KERNELS_COMMON_H

// Shared by every kernel file, whatever its instruction set. Include it (and any system
// header) before an ISA file's `#pragma clang attribute push`: the helpers here stay baseline
// code and are inlined into the ISA bodies that call them, as they were before the split.

#include "CAnvilKernels.h"
#include <stddef.h>
#include "bodies.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

/// Inlined into every caller, so constant arguments specialise the body.
#define ANVIL_INLINE static inline __attribute__((always_inline))

/// min(max(x, lo), hi), in that order (as the vector bodies and ONNX's Clip): with lo > hi every value is hi.
static inline float anvil_clamp(float x, float lo, float hi) {
    const float y = x < lo ? lo : x;
    return y > hi ? hi : y;
}

#endif
