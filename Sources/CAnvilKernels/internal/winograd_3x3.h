#ifndef ANVIL_KERNELS_WINOGRAD_3X3_H
#define ANVIL_KERNELS_WINOGRAD_3X3_H


// The transforms of Winograd's F(2×2, 3×3) and F(4×4, 3×3) (Lavin & Gray, "Fast Algorithms for
// Convolutional Neural Networks", 2016): an m×m output tile is Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A for
// its α×α input patch d (α = m + 2) and a 3×3 filter g. The products between the transforms are
// `anvil_winograd_products`; the blocking and threading are the Swift kernel's.
//
// F(4×4) interpolates at 0, 1, −1, ½, −2, ∞ rather than Lavin & Gray's 0, ±1, ±2, ∞: on
// VGG-like layers the float32 error is about 3.5× smaller (Barabasz et al., "Error analysis and
// improving the accuracy of Winograd convolution for deep neural networks", 2020). Bᵀ and Aᵀ
// keep dyadic entries; the thirds and fifteenths are all in G, applied once to the filters.
//
// LANES channels at a time in a vector (8, or 16 where the including body defines
// ANVIL_WINOGRAD3_LANES so); every 2-D transform is a pass along rows, then one down columns.
// Contraction into FMA is off so every body rounds each step alike: each lane's arithmetic is
// the same at either width, so the bodies agree bit for bit.
//
// Everything is shared by the bodies and lives here (vector extensions, compiled to whatever
// the including body's target has: zmm in the AVX-512 body, ymm in the AVX2 body, SSE pairs in
// the scalar one — and the 16-lane body compiled without its target is its own emulation).

#include "common.h"
#include <string.h>

#pragma clang fp contract(off)

#ifndef ANVIL_WINOGRAD3_LANES
#define ANVIL_WINOGRAD3_LANES 8
#endif

#define ANVIL_VECTOR_LANES ANVIL_WINOGRAD3_LANES
#include "vector_lanes.h"

enum { MAX_ALPHA = 6, MAX_POSITIONS = 36, PACK = ANVIL_WINOGRAD_BLOCK };
_Static_assert(PACK % LANES == 0, "a vector of filters must stay inside one packed block");

// ---- The 1-D transforms: read α (or 3) vectors `s` apart, write `t` apart. ----

// Bᵀ = [1 0 −1 0; 0 1 1 0; 0 −1 1 0; 0 1 0 −1]
INLINE void f2_input(const vf *d, int s, vf *t, int ts) {
    const vf d0 = d[0], d1 = d[s], d2 = d[2 * s], d3 = d[3 * s];
    t[0] = d0 - d2;
    t[ts] = d1 + d2;
    t[2 * ts] = d2 - d1;
    t[3 * ts] = d1 - d3;
}

// Aᵀ = [1 1 1 0; 0 1 −1 −1]
INLINE void f2_output(const vf *m, int s, vf *t, int ts) {
    const vf m0 = m[0], m1 = m[s], m2 = m[2 * s], m3 = m[3 * s];
    t[0] = m0 + m1 + m2;
    t[ts] = m1 - m2 - m3;
}

// G = [1 0 0; ½ ½ ½; ½ −½ ½; 0 0 1]
INLINE void f2_filter(const vf *g, int s, vf *t, int ts) {
    const vf g0 = g[0], g1 = g[s], g2 = g[2 * s];
    const vf outer = splat(0.5f) * (g0 + g2), middle = splat(0.5f) * g1;
    t[0] = g0;
    t[ts] = outer + middle;
    t[2 * ts] = outer - middle;
    t[3 * ts] = g2;
}

// Bᵀ = [1 −3/2 −2 3/2 1 0; 0 −1 1/2 5/2 1 0; 0 1 −5/2 1/2 1 0;
//       0 −2 −1 2 1 0; 0 1/2 −1 −1/2 1 0; 0 1 −3/2 −2 3/2 1]
INLINE void f4_input(const vf *d, int s, vf *t, int ts) {
    const vf d0 = d[0], d1 = d[s], d2 = d[2 * s], d3 = d[3 * s], d4 = d[4 * s], d5 = d[5 * s];
    const vf e = d4 - d2, f = d3 - d1, h = splat(1.5f);
    t[0] = d0 + (e - d2) + h * f;
    t[ts] = (e + f) + h * (d2 + d3);
    t[2 * ts] = (e - f) - h * (d2 - d3);
    t[3 * ts] = e + splat(2) * f;
    t[4 * ts] = e - splat(0.5f) * f;
    t[5 * ts] = d5 + h * e - (f + d3);
}

// Aᵀ = [1 1 1 1 1 0; 0 1 −1 1/2 −2 0; 0 1 1 1/4 4 0; 0 1 −1 1/8 −8 1]
INLINE void f4_output(const vf *m, int s, vf *t, int ts) {
    const vf m0 = m[0], m1 = m[s], m2 = m[2 * s], m3 = m[3 * s], m4 = m[4 * s], m5 = m[5 * s];
    const vf sum = m1 + m2, difference = m1 - m2;
    t[0] = m0 + sum + (m3 + m4);
    t[ts] = difference + (splat(0.5f) * m3 - splat(2) * m4);
    t[2 * ts] = sum + (splat(0.25f) * m3 + splat(4) * m4);
    t[3 * ts] = difference + (splat(0.125f) * m3 - splat(8) * m4) + m5;
}

// G = [1 0 0; ⅓ ⅓ ⅓; −⅓ ⅓ −⅓; −16/15 −8/15 −4/15; 1/15 −2/15 4/15; 0 0 1]
INLINE void f4_filter(const vf *g, int s, vf *t, int ts) {
    const vf g0 = g[0], g1 = g[s], g2 = g[2 * s];
    const vf outer = g0 + g2;
    const vf third = splat(1.0f / 3), fifteenth = splat(1.0f / 15), four_fifteenths = splat(4.0f / 15);
    t[0] = g0;
    t[ts] = third * (outer + g1);
    t[2 * ts] = third * (g1 - outer);
    t[3 * ts] = -four_fifteenths * (splat(4) * g0 + splat(2) * g1 + g2);
    t[4 * ts] = fifteenth * (g0 - splat(2) * g1 + splat(4) * g2);
    t[5 * ts] = g2;
}

INLINE void input_line(int m, const vf *d, int s, vf *t, int ts) {
    if (m == 2) f2_input(d, s, t, ts); else f4_input(d, s, t, ts);
}

INLINE void output_line(int m, const vf *d, int s, vf *t, int ts) {
    if (m == 2) f2_output(d, s, t, ts); else f4_output(d, s, t, ts);
}

INLINE void filter_line(int m, const vf *d, int s, vf *t, int ts) {
    if (m == 2) f2_filter(d, s, t, ts); else f4_filter(d, s, t, ts);
}

// ---- Tiles ----

/// Tiles per image: ⌈output_height / m⌉ · ⌈output_width / m⌉.
INLINE long tiles_per_image(const anvil_winograd3_shape *s) {
    const long m = s->tile;
    return ((s->output_height + m - 1) / m) * ((s->output_width + m - 1) / m);
}

/// Where tile `tile` of the batch lies: its image and its top-left output pixel.
typedef struct { long image; int y, x; } tile_position;

INLINE tile_position locate(const anvil_winograd3_shape *s, int m, long tile) {
    const long wide = (s->output_width + m - 1) / m, per_image = tiles_per_image(s);
    tile_position t;
    t.image = tile / per_image;
    const long index = tile - t.image * per_image;
    t.y = (int)(index / wide) * m;
    t.x = (int)(index % wide) * m;
    return t;
}

/// `Bᵀ d B` of one tile into its row of V.
INLINE void input_tile(const anvil_winograd3_shape *s, const int m, const float *input, long tile, float *v) {
    const int alpha = m + 2, channels = s->channels, height = s->input_height, width = s->input_width;
    const tile_position t = locate(s, m, tile);
    const int y0 = t.y - s->pad_top, x0 = t.x - s->pad_left;
    const int interior = y0 >= 0 && x0 >= 0 && y0 + alpha <= height && x0 + alpha <= width;
    const float *image = input + (size_t)t.image * height * width * channels;
    for (int c = 0; c < channels; c += LANES) {
        const int lanes = channels - c < LANES ? channels - c : LANES;
        vf d[MAX_POSITIONS], rows[MAX_POSITIONS], r[MAX_POSITIONS];
        for (int i = 0; i < alpha; i++) {
            const int y = y0 + i;
            for (int j = 0; j < alpha; j++) {
                const int x = x0 + j;
                const float *pixel = image + ((size_t)y * width + x) * channels + c;
                const int inside = interior || (y >= 0 && y < height && x >= 0 && x < width);
                d[i * alpha + j] = inside ? load_lanes(pixel, lanes) : splat(0);
            }
        }
        for (int i = 0; i < alpha; i++) input_line(m, d + i * alpha, 1, rows + i * alpha, 1);  // along each row
        for (int j = 0; j < alpha; j++) input_line(m, rows + j, alpha, r + j, alpha);          // down each column
        for (int p = 0; p < alpha * alpha; p++) store_lanes(v + (size_t)p * s->v_position_stride + c, r[p], lanes);
    }
}

/// `Aᵀ M A` + bias, clamped and sloped, of one tile from its row of M into the output.
INLINE void output_tile(const anvil_winograd3_shape *s, const int m, const float *mt, long tile, const float *bias,
                        float *output) {
    const int alpha = m + 2, outputs = s->outputs;
    const tile_position t = locate(s, m, tile);
    const int rows = s->output_height - t.y < m ? s->output_height - t.y : m;
    const int columns = s->output_width - t.x < m ? s->output_width - t.x : m;
    const vf lower = splat(s->clamp_min), upper = splat(s->clamp_max), slope = splat(s->negative_slope);
    const int sloped = s->negative_slope != 1.0f;
    for (int o = 0; o < outputs; o += LANES) {
        const int lanes = outputs - o < LANES ? outputs - o : LANES;
        vf values[MAX_POSITIONS], partial[MAX_POSITIONS], y[16];
        // A position holds whole blocks of 16: reading past the last channel stays inside it.
        for (int p = 0; p < alpha * alpha; p++) values[p] = loadv(mt + (size_t)p * s->m_position_stride + o);
        for (int i = 0; i < alpha; i++) output_line(m, values + i * alpha, 1, partial + i * m, 1);  // along each row
        for (int q = 0; q < m; q++) output_line(m, partial + q, m, y + q, m);                     // down each column
        const vf shift = bias ? load_lanes(bias + o, lanes) : splat(0);
        for (int r = 0; r < rows; r++) {
            for (int q = 0; q < columns; q++) {
                // max then min, as the activations do (NaN stays NaN), then the slope.
                vf x = y[r * m + q] + shift;
                x = pick(x < lower, lower, x);
                x = pick(x > upper, upper, x);
                if (sloped) x = pick(x < splat(0), x * slope, x);
                float *pixel = output + (((size_t)t.image * s->output_height + t.y + r) * s->output_width + t.x + q) * outputs + o;
                store_lanes(pixel, x, lanes);
            }
        }
    }
}

/// `G g Gᵀ` of one vector of filters' 9 taps `g` (row-major), its α² vectors' first `lanes`
/// stored `position_stride` apart from `u`. Each column is stored as it is made: the 3α row
/// values stay in registers (α² results would not).
INLINE void transform_group(const int m, const vf g[9], float *u, size_t position_stride, int lanes) {
    const int alpha = m + 2;
    vf rows[3 * MAX_ALPHA];
    for (int y = 0; y < 3; y++) filter_line(m, g + 3 * y, 1, rows + y * alpha, 1);  // along each row
    for (int b = 0; b < alpha; b++) {                                                 // down each column
        vf column[MAX_ALPHA];
        filter_line(m, rows + b, alpha, column, 1);
        for (int a = 0; a < alpha; a++) store_lanes(u + (a * alpha + b) * position_stride, column[a], lanes);
    }
}

/// `G g Gᵀ` of input `i`'s filters for outputs `[first, first + LANES)`, into the packed filters.
INLINE void filter_group(const int m, const float *weights, anvil_winograd3_filter_strides s, const float *scale,
                         int outputs, int inputs, float *u, int i, int first) {
    const size_t padded = (size_t)(outputs + PACK - 1) / PACK * PACK, position_stride = padded * inputs;
    const int lanes = outputs - first < LANES ? outputs - first : LANES;
    vf taps[9];
    for (int tap = 0; tap < 9; tap++) {
        const float *origin = weights + first * s.output + i * s.input + (tap / 3) * s.row + (tap % 3) * s.column;
        float lane[LANES] = { 0 };
        for (int l = 0; l < lanes; l++) lane[l] = origin[l * s.output];
        taps[tap] = loadv(lane);
        if (scale) taps[tap] = taps[tap] * load_lanes(scale + first, lanes);
    }
    // LANES lanes from a multiple of LANES stay inside one block of 16.
    transform_group(m, taps, u + ((size_t)(first / PACK) * inputs + i) * PACK + first % PACK, position_stride, lanes);
}

/// `G g Gᵀ` of LANES outputs' taps at `taps` (side by side, `tap_stride` floats from one tap to
/// the next, already scaled), its α² vectors stored `position_stride` apart from `u`: the
/// arithmetic of `filter_group`, so the same values bit for bit.
INLINE void taps_group(const int m, const float *taps, long tap_stride, float *u, long position_stride) {
    vf g[9];
    for (int tap = 0; tap < 9; tap++) g[tap] = loadv(taps + tap * tap_stride);
    transform_group(m, g, u, (size_t)position_stride, LANES);
}

// ---- What each body runs ----

INLINE void input_tiles(const anvil_winograd3_shape *s, const float *input, float *v, long first, long begin, long end) {
    if (s->tile == 2) for (long t = begin; t < end; t++) input_tile(s, 2, input, first + t, v + t * s->v_tile_stride);
    else for (long t = begin; t < end; t++) input_tile(s, 4, input, first + t, v + t * s->v_tile_stride);
}

INLINE void output_tiles(const anvil_winograd3_shape *s, const float *m, const float *bias, float *output, long first,
                         long begin, long end) {
    if (s->tile == 2) for (long t = begin; t < end; t++) output_tile(s, 2, m + t * s->m_tile_stride, first + t, bias, output);
    else for (long t = begin; t < end; t++) output_tile(s, 4, m + t * s->m_tile_stride, first + t, bias, output);
}

/// Inputs in blocks of 16: the taps a block reads for LANES outputs share cache lines in every
/// layout (PyTorch's `[o][i][3][3]`: 16 inputs' filters are 9 lines per output).
enum { FILTER_BLOCK = 16 };

INLINE void filter_inputs_m(const int m, const float *weights, anvil_winograd3_filter_strides strides,
                            const float *scale, int outputs, int inputs, float *u, int begin, int end) {
    for (int block = begin; block < end; block += FILTER_BLOCK) {
        const int block_end = end - block < FILTER_BLOCK ? end : block + FILTER_BLOCK;
        for (int first = 0; first < outputs; first += LANES)
            for (int i = block; i < block_end; i++) filter_group(m, weights, strides, scale, outputs, inputs, u, i, first);
    }
}

INLINE void filter_inputs(int tile, const float *weights, anvil_winograd3_filter_strides strides, const float *scale,
                          int outputs, int inputs, float *u, int begin, int end) {
    if (tile == 2) filter_inputs_m(2, weights, strides, scale, outputs, inputs, u, begin, end);
    else filter_inputs_m(4, weights, strides, scale, outputs, inputs, u, begin, end);
}

/// Inputs ahead whose taps the taps transform prefetches. Read from the direct kernel's packed
/// weights, a slot's taps are 18 streams 16 × inputs floats apart (9 taps × 2 blocks) that the
/// hardware prefetchers leave to memory latency (Anvil's own taps are one stream and need no
/// help); 8 ahead hides most of it, and more ahead does no better.
enum { TAP_PREFETCH = 8 };

INLINE void taps_inputs_m(const int m, const float *taps, anvil_winograd3_tap_strides s, int width, int begin, int end,
                          float *u, long position_stride) {
    const size_t n = (size_t)(end - begin);
    for (int i = begin; i < end; i++)
        for (int o = 0; o < width; o += LANES) {
            const float *g = taps + (o / PACK) * s.block + i * s.input + o % PACK;
            if (i + TAP_PREFETCH < end)
                for (int t = 0; t < 9; t++) __builtin_prefetch(g + TAP_PREFETCH * s.input + t * s.tap);
            taps_group(m, g, s.tap, u + ((size_t)(o / PACK) * n + (size_t)(i - begin)) * PACK + o % PACK, position_stride);
        }
}

INLINE void taps_inputs(int tile, const float *taps, anvil_winograd3_tap_strides strides, int width, int begin, int end,
                        float *u, long position_stride) {
    if (tile == 2) taps_inputs_m(2, taps, strides, width, begin, end, u, position_stride);
    else taps_inputs_m(4, taps, strides, width, begin, end, u, position_stride);
}

/// Defines the four entry bodies of one instruction set (`anvil_winograd3_transform_input_<isa>`, …):
/// each body file expands it once, inside its target attribute.
#define ANVIL_WINOGRAD3_BODIES(isa)                                                                                  \
    void anvil_winograd3_transform_input_##isa(const anvil_winograd3_shape *s, const float *input, float *v,         \
                                               long first, long begin, long end) {                                   \
        input_tiles(s, input, v, first, begin, end);                                                                 \
    }                                                                                                                \
    void anvil_winograd3_transform_output_##isa(const anvil_winograd3_shape *s, const float *m, const float *bias,   \
                                                float *output, long first, long begin, long end) {                   \
        output_tiles(s, m, bias, output, first, begin, end);                                                         \
    }                                                                                                                \
    void anvil_winograd3_transform_filters_##isa(int tile, const float *weights,                                     \
                                                 anvil_winograd3_filter_strides strides, const float *scale,         \
                                                 int outputs, int inputs, float *u, int begin, int end) {            \
        filter_inputs(tile, weights, strides, scale, outputs, inputs, u, begin, end);                                \
    }                                                                                                                \
    void anvil_winograd3_transform_taps_##isa(int tile, const float *taps, anvil_winograd3_tap_strides strides,      \
                                              int width, int begin, int end, float *u, long position_stride) {       \
        taps_inputs(tile, taps, strides, width, begin, end, u, position_stride);                                     \
    }

#endif
