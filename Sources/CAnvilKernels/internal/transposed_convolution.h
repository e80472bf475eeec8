#ifndef ANVIL_KERNELS_TRANSPOSED_CONVOLUTION_H
#define ANVIL_KERNELS_TRANSPOSED_CONVOLUTION_H

// col2im as a gather, shared by every body: for output row oy the taps ky with
// (oy + pad_top − ky·dilation) divisible by the stride and inside the input contribute, and
// likewise per column; each contributing (input pixel, tap) adds one run of a group's channels.
// `add` is the body's vector `dst[i] += src[i]` over `n` floats.

#include "common.h"

typedef void anvil_col2im_add(float *dst, const float *src, int n);

/// The input coordinate tap `k` of output coordinate `o` reads, or -1 when none.
static inline int anvil_col2im_source(int o, int k, int pad, int dilation, int stride, int size) {
    int t = o + pad - k * dilation;
    if (t < 0 || t % stride) return -1;
    t /= stride;
    return t < size ? t : -1;
}

ANVIL_INLINE void anvil_col2im_lines_impl(const anvil_col2im_shape *s, const float *columns, const float *bias,
                                          float *output, int line_begin, int line_end, anvil_col2im_add *add) {
    const int G = s->groups, CG = s->group_channels, C = G * CG;
    const int KH = s->kernel_height, KW = s->kernel_width;
    const size_t row = (size_t)G * KH * KW * CG;
    for (int oy = line_begin; oy < line_end; oy++) {
        float *out = output + (size_t)oy * s->output_width * C;
        for (int ox = 0; ox < s->output_width; ox++, out += C) {
            if (bias) { for (int c = 0; c < C; c++) out[c] = bias[c]; }
            else { for (int c = 0; c < C; c++) out[c] = 0; }
            for (int ky = 0; ky < KH; ky++) {
                const int iy = anvil_col2im_source(oy, ky, s->pad_top, s->dilation_height, s->stride_height,
                                                   s->input_height);
                if (iy < 0) continue;
                for (int kx = 0; kx < KW; kx++) {
                    const int ix = anvil_col2im_source(ox, kx, s->pad_left, s->dilation_width, s->stride_width,
                                                       s->input_width);
                    if (ix < 0) continue;
                    const float *source = columns + ((size_t)iy * s->input_width + ix) * row
                                          + ((size_t)ky * KW + kx) * CG;
                    for (int g = 0; g < G; g++) add(out + g * CG, source + (size_t)g * KH * KW * CG, CG);
                }
            }
        }
    }
}

#endif
