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

/// `count` rows of an interleave in plain C: `out[i·n + j] = in[i + j·in_step]` for `i < count`,
/// `j < n` (the output of each row follows the last; each stream `j` is read contiguously).
ANVIL_INLINE void anvil_copy_interleave_scalar(const float *in, float *out, long count, long n, long in_step) {
    for (long i = 0; i < count; i++)
        for (long j = 0; j < n; j++) out[i * n + j] = in[i + j * in_step];
}

/// Whether rows of `s` interleave short streams: an innermost axis of at most 8 that writes
/// contiguously, inside an axis that reads contiguously and writes a whole innermost row apart
/// (a channel shuffle `[pixels, k, g] ← [pixels, g, k]`: g streams of k channels woven together).
/// Such rows are copied a run at a time, not 2 to 8 floats per row.
ANVIL_INLINE int anvil_copy_interleaves(const anvil_copy_shape *s) {
    const int last = s->rank - 1;
    return s->rank >= 2 && s->dims[last] <= 8 && s->out_strides[last] == 1 && s->in_strides[last - 1] == 1 &&
           s->out_strides[last - 1] == s->dims[last];
}

/// Walks rows `[row_begin, row_end)`, copying each row's innermost axis with `line`; rows of an
/// interleave (`anvil_copy_interleaves`) go by runs along the axis before it, with `weave`.
#define ANVIL_COPY_ROWS(s, input, output, row_begin, row_end, line, weave)                             \
    do {                                                                                                \
        const int last = (s)->rank - 1;                                                                 \
        const long n = (s)->dims[last], in_step = (s)->in_strides[last], out_step = (s)->out_strides[last]; \
        if (anvil_copy_interleaves(s)) {                                                                \
            const long run = (s)->dims[last - 1];                                                       \
            for (long row = (row_begin); row < (row_end);) {                                            \
                const long left = run - row % run, count = left < (row_end) - row ? left : (row_end) - row; \
                long in_offset, out_offset;                                                             \
                anvil_copy_row_offsets((s), row, &in_offset, &out_offset);                              \
                weave((input) + in_offset, (output) + out_offset, count, n, in_step);                   \
                row += count;                                                                           \
            }                                                                                           \
            break;                                                                                      \
        }                                                                                               \
        for (long row = (row_begin); row < (row_end); row++) {                                          \
            long in_offset, out_offset;                                                                 \
            anvil_copy_row_offsets((s), row, &in_offset, &out_offset);                                  \
            line((input) + in_offset, (output) + out_offset, n, in_step, out_step);                     \
        }                                                                                               \
    } while (0)

#endif
