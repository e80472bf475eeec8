#include "../internal/elementwise.h"

// Element-wise binary operations with broadcasting, plain C (the compiler may vectorise the
// same-stride loops for the baseline target).

static void span_scalar(anvil_binary_op op, const float *a, long sa, const float *b, long sb, float *out, long n) {
    switch (op) {
    case ANVIL_BINARY_ADD: anvil_binary_span_scalar(ANVIL_BINARY_ADD, a, sa, b, sb, out, n); break;
    case ANVIL_BINARY_SUBTRACT: anvil_binary_span_scalar(ANVIL_BINARY_SUBTRACT, a, sa, b, sb, out, n); break;
    case ANVIL_BINARY_MULTIPLY: anvil_binary_span_scalar(ANVIL_BINARY_MULTIPLY, a, sa, b, sb, out, n); break;
    case ANVIL_BINARY_DIVIDE: anvil_binary_span_scalar(ANVIL_BINARY_DIVIDE, a, sa, b, sb, out, n); break;
    case ANVIL_BINARY_MAXIMUM: anvil_binary_span_scalar(ANVIL_BINARY_MAXIMUM, a, sa, b, sb, out, n); break;
    case ANVIL_BINARY_MINIMUM: anvil_binary_span_scalar(ANVIL_BINARY_MINIMUM, a, sa, b, sb, out, n); break;
    case ANVIL_BINARY_POWER: anvil_binary_span_scalar(ANVIL_BINARY_POWER, a, sa, b, sb, out, n); break;
    case ANVIL_BINARY_REMAINDER: anvil_binary_span_scalar(ANVIL_BINARY_REMAINDER, a, sa, b, sb, out, n); break;
    case ANVIL_BINARY_FMOD: anvil_binary_span_scalar(ANVIL_BINARY_FMOD, a, sa, b, sb, out, n); break;
    // (Comparisons and logic: one loop each is not worth it; the switch per element is.)
    default: anvil_binary_span_scalar(op, a, sa, b, sb, out, n); break;
    }
}

void anvil_binary_scalar(anvil_binary_op op, const anvil_binary_shape *s, const float *a, const float *b, float *out,
                         long begin, long end) {
    anvil_binary_walk(op, s, a, b, out, begin, end, span_scalar);
}
