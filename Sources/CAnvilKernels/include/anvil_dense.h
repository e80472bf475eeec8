#ifndef ANVIL_DENSE_H
#define ANVIL_DENSE_H

// Fully connected layers for small batches: every weight row is read once for up to four
// images at a time, so a batch of 4 costs about what one image does (the layer is bound by
// reading its weights, not by arithmetic).

#include <stddef.h>
#include "anvil_isa.h"

#ifdef __cplusplus
extern "C" {
#endif

/// `y[b][o] = clamp(bias[o] + Σ_k w[o][k] · x[b][k])` for outputs `[output_begin, output_end)`
/// and images `0 ..< batch`: `w` is `[outputs][inputs]` row-major (used in place), `x` is
/// `[batch][inputs]`, `y` is `[batch][outputs]`, `bias` may be NULL. `isa` picks the body; it
/// must be one `anvil_isa_supported` accepts (the process aborts otherwise).
void anvil_dense_rows(anvil_isa isa, const float *w, const float *x, const float *bias, float *y, int inputs,
                      int outputs, int batch, int output_begin, int output_end, float clamp_min, float clamp_max);

#ifdef __cplusplus
}
#endif

#endif
