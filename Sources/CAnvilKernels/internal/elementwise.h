#ifndef ANVIL_KERNELS_ELEMENTWISE_H
#define ANVIL_KERNELS_ELEMENTWISE_H

#include "common.h"
#include <math.h>

/// What every body of `anvil_binary` does per operation and element (the vector bodies agree
/// with it exactly: maximum and minimum return `b` when either operand is NaN, as maxps/minps).
ANVIL_INLINE float anvil_binary_scalar_op(const anvil_binary_op op, float a, float b) {
    switch (op) {
    case ANVIL_BINARY_ADD: return a + b;
    case ANVIL_BINARY_SUBTRACT: return a - b;
    case ANVIL_BINARY_MULTIPLY: return a * b;
    case ANVIL_BINARY_DIVIDE: return a / b;
    case ANVIL_BINARY_MAXIMUM: return a > b ? a : b;
    case ANVIL_BINARY_MINIMUM: return a < b ? a : b;
    case ANVIL_BINARY_POWER: return powf(a, b);
    case ANVIL_BINARY_REMAINDER: {
        const float r = fmodf(a, b);
        return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    }
    case ANVIL_BINARY_FMOD: return fmodf(a, b);
    case ANVIL_BINARY_LESS: return a < b ? 1.0f : 0.0f;
    case ANVIL_BINARY_LESS_OR_EQUAL: return a <= b ? 1.0f : 0.0f;
    case ANVIL_BINARY_GREATER: return a > b ? 1.0f : 0.0f;
    case ANVIL_BINARY_GREATER_OR_EQUAL: return a >= b ? 1.0f : 0.0f;
    case ANVIL_BINARY_EQUAL: return a == b ? 1.0f : 0.0f;
    case ANVIL_BINARY_AND: return (a != 0 && b != 0) ? 1.0f : 0.0f;
    case ANVIL_BINARY_OR: return (a != 0 || b != 0) ? 1.0f : 0.0f;
    case ANVIL_BINARY_XOR: return ((a != 0) != (b != 0)) ? 1.0f : 0.0f;
    }
    return a;
}

/// One contiguous span of `n` output floats: a and b advance by their channel strides (0 or 1).
typedef void anvil_binary_span(anvil_binary_op op, const float *a, long sa, const float *b, long sb, float *out,
                               long n);

/// Walks output elements `[begin, end)` as spans along the channel axis, calling `span` on each
/// with the operands' addresses for that pixel.
ANVIL_INLINE void anvil_binary_walk(anvil_binary_op op, const anvil_binary_shape *s, const float *a, const float *b,
                                    float *out, long begin, long end, anvil_binary_span *span) {
    const long C = s->channels, W = s->width, H = s->height;
    long c = begin % C, pixel = begin / C;
    long x = pixel % W, row = pixel / W;
    long y = row % H, n = row / H;
    long index = begin;
    while (index < end) {
        long count = C - c;
        if (count > end - index) count = end - index;
        const float *pa = a + n * s->a_image + y * s->a_row + x * s->a_column + c * s->a_channel;
        const float *pb = b + n * s->b_image + y * s->b_row + x * s->b_column + c * s->b_channel;
        span(op, pa, s->a_channel, pb, s->b_channel, out + index, count);
        index += count;
        c = 0;
        if (++x == W) {
            x = 0;
            if (++y == H) { y = 0; n++; }
        }
    }
}

/// The scalar span for one operation (inlined with a constant `op` into each body's switch).
ANVIL_INLINE void anvil_binary_span_scalar(const anvil_binary_op op, const float *a, long sa, const float *b, long sb,
                                           float *out, long n) {
    if (sa && sb) {
        for (long i = 0; i < n; i++) out[i] = anvil_binary_scalar_op(op, a[i], b[i]);
    } else if (sa) {
        const float vb = b[0];
        for (long i = 0; i < n; i++) out[i] = anvil_binary_scalar_op(op, a[i], vb);
    } else if (sb) {
        const float va = a[0];
        for (long i = 0; i < n; i++) out[i] = anvil_binary_scalar_op(op, va, b[i]);
    } else {
        const float v = anvil_binary_scalar_op(op, a[0], b[0]);
        for (long i = 0; i < n; i++) out[i] = v;
    }
}

#endif
