#ifndef ANVIL_KERNELS_DENSE_H
#define ANVIL_KERNELS_DENSE_H

// The small-batch dense bodies' shared walk over weight rows; each body brings its block
// function — `BLOCK(R, I, w, x, bias, y, inputs, outputs, o, b, lo, hi)`: R rows from `o`
// against images `b ..< b + I`, always inlined so that R and I are constants in it.

#include "common.h"

/// Rows `[r0, r1)` for images `b ..< b + I` in blocks of `R` rows through `BLOCK`, then single
/// rows. Uses the enclosing body's `w, x, bias, y, inputs, outputs, r0, r1, b, lo, hi`.
#define ANVIL_DENSE_ROWS(BLOCK, R, I)                                                                  \
    do {                                                                                               \
        int o = r0;                                                                                    \
        for (; o + (R) <= r1; o += (R)) BLOCK(R, I, w, x, bias, y, inputs, outputs, o, b, lo, hi);     \
        for (; o < r1; o++) BLOCK(1, I, w, x, bias, y, inputs, outputs, o, b, lo, hi);                 \
    } while (0)

#endif
