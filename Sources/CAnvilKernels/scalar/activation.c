#include "../internal/common.h"
#include <math.h>

// Activations in plain C with the C library's exp, tanh, erf, log, log1p (correctly rounded or
// within an ulp or two on glibc).

ANVIL_INLINE float softplus_scalar(float x) {
    // max(x, 0) + log1p(e^−|x|): no overflow, full precision for large negative x.
    return (x > 0 ? x : 0) + log1pf(expf(-fabsf(x)));
}

ANVIL_INLINE float apply_scalar(const anvil_activation_kind kind, float a, float b, float x) {
    switch (kind) {
    case ANVIL_ACTIVATION_NONE: return x;
    case ANVIL_ACTIVATION_RELU: return x > 0 ? x : 0;
    case ANVIL_ACTIVATION_CLIP: return anvil_clamp(x, a, b);
    case ANVIL_ACTIVATION_LEAKY_RELU: return x >= 0 ? x : a * x;
    case ANVIL_ACTIVATION_SIGMOID: return 1 / (1 + expf(-x));
    case ANVIL_ACTIVATION_TANH: return tanhf(x);
    case ANVIL_ACTIVATION_ELU: return x > 0 ? x : a * expm1f(x);
    case ANVIL_ACTIVATION_SELU: return b * (x > 0 ? x : a * expm1f(x));
    case ANVIL_ACTIVATION_HARD_SIGMOID: { const float y = a * x + b; return y < 0 ? 0 : (y > 1 ? 1 : y); }
    case ANVIL_ACTIVATION_HARD_SWISH: { const float r = x + 3; return x * ((r < 0 ? 0 : (r > 6 ? 6 : r)) / 6); }
    case ANVIL_ACTIVATION_LINEAR: return a * x + b;
    case ANVIL_ACTIVATION_SILU: return x / (1 + expf(-x));
    case ANVIL_ACTIVATION_GELU: return 0.5f * x * (1 + erff(x * 0.70710678118654752f));
    case ANVIL_ACTIVATION_GELU_TANH:
        return 0.5f * x * (1 + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
    case ANVIL_ACTIVATION_MISH: return x * tanhf(softplus_scalar(x));
    case ANVIL_ACTIVATION_SOFTPLUS: return softplus_scalar(x);
    case ANVIL_ACTIVATION_SOFTSIGN: return x / (1 + fabsf(x));
    case ANVIL_ACTIVATION_CELU: return (x > 0 ? x : 0) + (x < 0 ? a * expm1f(x / a) : 0);
    case ANVIL_ACTIVATION_THRESHOLDED_RELU: return x > a ? x : 0;
    case ANVIL_ACTIVATION_NEGATIVE: return -x;
    case ANVIL_ACTIVATION_ABSOLUTE: return fabsf(x);
    case ANVIL_ACTIVATION_SQRT: return sqrtf(x);
    case ANVIL_ACTIVATION_EXP: return expf(x);
    case ANVIL_ACTIVATION_LOG: return logf(x);
    case ANVIL_ACTIVATION_RECIPROCAL: return 1 / x;
    case ANVIL_ACTIVATION_ERF: return erff(x);
    }
    return x;
}

/// One loop per kind (each its own function, so an unoptimised build keeps small frames).
#define ANVIL_SCALAR_LOOP(NAME, KIND)                                                            \
    static void NAME(float a, float b, float *values, long count) {                              \
        for (long i = 0; i < count; i++) values[i] = apply_scalar(KIND, a, b, values[i]);        \
    }
#define ANVIL_SCALAR_CASE(KIND) case KIND: loop_##KIND(a, b, values, count); break;
#define ANVIL_SCALAR_KIND(KIND) ANVIL_SCALAR_LOOP(loop_##KIND, KIND)
ANVIL_SCALAR_KIND(ANVIL_ACTIVATION_RELU)
ANVIL_SCALAR_KIND(ANVIL_ACTIVATION_CLIP)
ANVIL_SCALAR_KIND(ANVIL_ACTIVATION_LEAKY_RELU)
ANVIL_SCALAR_KIND(ANVIL_ACTIVATION_SIGMOID)
ANVIL_SCALAR_KIND(ANVIL_ACTIVATION_TANH)
ANVIL_SCALAR_KIND(ANVIL_ACTIVATION_ELU)
ANVIL_SCALAR_KIND(ANVIL_ACTIVATION_SELU)
ANVIL_SCALAR_KIND(ANVIL_ACTIVATION_HARD_SIGMOID)
ANVIL_SCALAR_KIND(ANVIL_ACTIVATION_HARD_SWISH)
ANVIL_SCALAR_KIND(ANVIL_ACTIVATION_LINEAR)
ANVIL_SCALAR_KIND(ANVIL_ACTIVATION_SILU)
ANVIL_SCALAR_KIND(ANVIL_ACTIVATION_GELU)
ANVIL_SCALAR_KIND(ANVIL_ACTIVATION_GELU_TANH)
ANVIL_SCALAR_KIND(ANVIL_ACTIVATION_MISH)
ANVIL_SCALAR_KIND(ANVIL_ACTIVATION_SOFTPLUS)
ANVIL_SCALAR_KIND(ANVIL_ACTIVATION_SOFTSIGN)
ANVIL_SCALAR_KIND(ANVIL_ACTIVATION_CELU)
ANVIL_SCALAR_KIND(ANVIL_ACTIVATION_THRESHOLDED_RELU)
ANVIL_SCALAR_KIND(ANVIL_ACTIVATION_NEGATIVE)
ANVIL_SCALAR_KIND(ANVIL_ACTIVATION_ABSOLUTE)
ANVIL_SCALAR_KIND(ANVIL_ACTIVATION_SQRT)
ANVIL_SCALAR_KIND(ANVIL_ACTIVATION_EXP)
ANVIL_SCALAR_KIND(ANVIL_ACTIVATION_LOG)
ANVIL_SCALAR_KIND(ANVIL_ACTIVATION_RECIPROCAL)
ANVIL_SCALAR_KIND(ANVIL_ACTIVATION_ERF)

void anvil_activation_scalar(const anvil_activation_function *f, float *values, long count) {
    const float a = f->alpha, b = f->beta;
    switch (f->kind) {
    case ANVIL_ACTIVATION_NONE: break;
    ANVIL_SCALAR_CASE(ANVIL_ACTIVATION_RELU)
    ANVIL_SCALAR_CASE(ANVIL_ACTIVATION_CLIP)
    ANVIL_SCALAR_CASE(ANVIL_ACTIVATION_LEAKY_RELU)
    ANVIL_SCALAR_CASE(ANVIL_ACTIVATION_SIGMOID)
    ANVIL_SCALAR_CASE(ANVIL_ACTIVATION_TANH)
    ANVIL_SCALAR_CASE(ANVIL_ACTIVATION_ELU)
    ANVIL_SCALAR_CASE(ANVIL_ACTIVATION_SELU)
    ANVIL_SCALAR_CASE(ANVIL_ACTIVATION_HARD_SIGMOID)
    ANVIL_SCALAR_CASE(ANVIL_ACTIVATION_HARD_SWISH)
    ANVIL_SCALAR_CASE(ANVIL_ACTIVATION_LINEAR)
    ANVIL_SCALAR_CASE(ANVIL_ACTIVATION_SILU)
    ANVIL_SCALAR_CASE(ANVIL_ACTIVATION_GELU)
    ANVIL_SCALAR_CASE(ANVIL_ACTIVATION_GELU_TANH)
    ANVIL_SCALAR_CASE(ANVIL_ACTIVATION_MISH)
    ANVIL_SCALAR_CASE(ANVIL_ACTIVATION_SOFTPLUS)
    ANVIL_SCALAR_CASE(ANVIL_ACTIVATION_SOFTSIGN)
    ANVIL_SCALAR_CASE(ANVIL_ACTIVATION_CELU)
    ANVIL_SCALAR_CASE(ANVIL_ACTIVATION_THRESHOLDED_RELU)
    ANVIL_SCALAR_CASE(ANVIL_ACTIVATION_NEGATIVE)
    ANVIL_SCALAR_CASE(ANVIL_ACTIVATION_ABSOLUTE)
    ANVIL_SCALAR_CASE(ANVIL_ACTIVATION_SQRT)
    ANVIL_SCALAR_CASE(ANVIL_ACTIVATION_EXP)
    ANVIL_SCALAR_CASE(ANVIL_ACTIVATION_LOG)
    ANVIL_SCALAR_CASE(ANVIL_ACTIVATION_RECIPROCAL)
    ANVIL_SCALAR_CASE(ANVIL_ACTIVATION_ERF)
    }
}
