#ifndef ANVIL_ACTIVATION_H
#define ANVIL_ACTIVATION_H

#include "anvil_isa.h"
#include "anvil_kernel_list.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The element-wise functions of `anvil_activation` (Swift's `ActivationFunction` cases).
typedef enum {
    ANVIL_ACTIVATION_NONE = 0,             ///< x
    ANVIL_ACTIVATION_RELU = 1,             ///< max(x, 0)
    ANVIL_ACTIVATION_CLIP = 2,             ///< min(max(x, alpha), beta) (relu6: 0, 6)
    ANVIL_ACTIVATION_LEAKY_RELU = 3,       ///< x ≥ 0 ? x : alpha·x
    ANVIL_ACTIVATION_SIGMOID = 4,          ///< 1 / (1 + e^−x)
    ANVIL_ACTIVATION_TANH = 5,             ///< tanh x
    ANVIL_ACTIVATION_ELU = 6,              ///< x > 0 ? x : alpha·(e^x − 1)
    ANVIL_ACTIVATION_SELU = 7,             ///< beta·(x > 0 ? x : alpha·(e^x − 1)) (alpha, beta = SELU's α, λ)
    ANVIL_ACTIVATION_HARD_SIGMOID = 8,     ///< max(0, min(1, alpha·x + beta))
    ANVIL_ACTIVATION_HARD_SWISH = 9,       ///< x·(min(max(x + 3, 0), 6) / 6)
    ANVIL_ACTIVATION_LINEAR = 10,          ///< alpha·x + beta
    ANVIL_ACTIVATION_SILU = 11,            ///< x / (1 + e^−x)
    ANVIL_ACTIVATION_GELU = 12,            ///< x/2·(1 + erf(x/√2))
    ANVIL_ACTIVATION_GELU_TANH = 13,       ///< x/2·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
    ANVIL_ACTIVATION_MISH = 14,            ///< x·tanh(softplus(x))
    ANVIL_ACTIVATION_SOFTPLUS = 15,        ///< log(1 + e^x)
    ANVIL_ACTIVATION_SOFTSIGN = 16,        ///< x / (1 + |x|)
    ANVIL_ACTIVATION_CELU = 17,            ///< max(0, x) + min(0, alpha·(e^(x/alpha) − 1))
    ANVIL_ACTIVATION_THRESHOLDED_RELU = 18, ///< x > alpha ? x : 0
    ANVIL_ACTIVATION_NEGATIVE = 19,        ///< −x
    ANVIL_ACTIVATION_ABSOLUTE = 20,        ///< |x|
    ANVIL_ACTIVATION_SQRT = 21,            ///< √x (NaN below 0)
    ANVIL_ACTIVATION_EXP = 22,             ///< e^x
    ANVIL_ACTIVATION_LOG = 23,             ///< ln x (−∞ at 0, NaN below)
    ANVIL_ACTIVATION_RECIPROCAL = 24,      ///< 1 / x
    ANVIL_ACTIVATION_ERF = 25,             ///< erf x
    ANVIL_ACTIVATION_SIN = 26,           ///< sin x
    ANVIL_ACTIVATION_COS = 27,           ///< cos x
    ANVIL_ACTIVATION_TAN = 28,           ///< tan x
    ANVIL_ACTIVATION_ASIN = 29,          ///< asin x (NaN outside [−1, 1])
    ANVIL_ACTIVATION_ACOS = 30,          ///< acos x (NaN outside [−1, 1])
    ANVIL_ACTIVATION_ATAN = 31,          ///< atan x
    ANVIL_ACTIVATION_SINH = 32,          ///< sinh x
    ANVIL_ACTIVATION_COSH = 33,          ///< cosh x
    ANVIL_ACTIVATION_ASINH = 34,         ///< asinh x
    ANVIL_ACTIVATION_ACOSH = 35,         ///< acosh x (NaN below 1)
    ANVIL_ACTIVATION_ATANH = 36,         ///< atanh x (NaN outside [−1, 1])
    ANVIL_ACTIVATION_FLOOR = 37,         ///< ⌊x⌋
    ANVIL_ACTIVATION_CEIL = 38,          ///< ⌈x⌉
    ANVIL_ACTIVATION_ROUND = 39,         ///< x rounded to the nearest integer, halves to even
    ANVIL_ACTIVATION_SIGN = 40,          ///< −1, 0 or 1 by the sign of x
} anvil_activation_kind;

/// One activation and its constants (what each kind reads is in its comment above).
typedef struct {
    anvil_activation_kind kind;
    float alpha, beta;
} anvil_activation_function;

/// The entry points (see kernels/activation.inc).
#define ANVIL_KERNEL ANVIL_KERNEL_ENTRY
#include "../kernels/activation.inc"
#undef ANVIL_KERNEL

#ifdef __cplusplus
}
#endif

#endif
