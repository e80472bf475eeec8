#ifndef ANVIL_INTERNAL_STRIDED_COPY_H
#define ANVIL_INTERNAL_STRIDED_COPY_H

#include "common.h"

/// The input and output offsets of row `row` (an index over every axis but the innermost).
ANVIL_INLINE void anvil_copy_row_offsets(const anvil_copy_shape *s, long row, long *in_offset, long *out_offset) {
    long in = 0, out = 0;
    for (int k = s->rank - 2; k >= 0; k--) {
        const long i = row % s->dims[k];
        row /= s->dims[k];
        in += i * s->in_strides[k];
        out += i * s->out_strides[k];
    }
    *in_offset = in;
    *out_offset = out;
}

/// The innermost axis of one row in plain C.
ANVIL_INLINE void anvil_copy_line_scalar(const float *in, float *out, long n, long in_step, long out_step) {
    if (in_step == 1 && out_step == 1) {
        for (long i = 0; i < n; i++) out[i] = in[i];
        return;
    }
    for (long i = 0; i < n; i++) out[i * out_step] = in[i * in_step];
}

/// Walks rows `[row_begin, row_end)`, copying each row's innermost axis with `line`.
#define ANVIL_COPY_ROWS(s, input, output, row_begin, row_end, line)                                    \
    do {                                                                                                \
        const int last = (s)->rank - 1;                                                                 \
        const long n = (s)->dims[last], in_step = (s)->in_strides[last], out_step = (s)->out_strides[last]; \
        for (long row = (row_begin); row < (row_end); row++) {                                          \
            long in_offset, out_offset;                                                                 \
            anvil_copy_row_offsets((s), row, &in_offset, &out_offset);                                  \
            line((input) + in_offset, (output) + out_offset, n, in_step, out_step);                     \
        }                                                                                               \
    } while (0)

#endif
