#ifndef ANVIL_KERNELS_WINOGRAD_5X5_H
#define ANVIL_KERNELS_WINOGRAD_5X5_H

// Winograd F(2×2, 5×5) (Lavin & Gray 2016, interpolation points 0, ±1, ±2, ∞): a 2×2 output
// tile is Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A for its 6×6 input patch d, 36 products per channel pair
// instead of 100 — 2.8× fewer multiplies than direct convolution.
//
// Fused and cache-resident, unlike the 3×3 kernel's GEMMs over large blocks: for 5×5 layers
// the channel counts are small (MNIST: 32 → 64), so each transformed value is used in few
// multiply-adds and a round trip through memory would cost more than it saves. Six tiles at
// a time: their inputs are transformed into V (36 × 6 × channels, in L1/L2); for each group of
// up to `MAX_BLOCKS` blocks of 16 output channels (the body's choice) and each of the 36
// positions, a register tile of 6 tiles × the group's channels accumulates V · U over the input
// channels (the direct kernel's inner loop), into M (36 × 6 × 16 per block, in L1/L2); the output
// transform then writes the 2×2 pixels with bias and clamp.

// The transforms and the tile loop are shared by the bodies and live here (vector extensions of
// LANES channels: 8, or 16 where the including body defines ANVIL_WINOGRAD5_LANES so, compiled to
// whatever the including body's target has: zmm in the AVX-512 body, ymm in the AVX2 one, SSE
// pairs in the scalar one); each body file brings the products. Contraction into FMA is off so
// every body rounds each step of the transforms alike: the lanes' arithmetic is the same at
// either width, and the AVX2 and AVX-512 bodies' products add the same multiply-adds in the same
// order, so those two agree bit for bit.

#include "common.h"
#include <string.h>

#pragma clang fp contract(off)

#ifndef ANVIL_WINOGRAD5_LANES
#define ANVIL_WINOGRAD5_LANES 8
#endif

#define ANVIL_VECTOR_LANES ANVIL_WINOGRAD5_LANES
#include "vector_lanes.h"

/// `MAX_LANES`: the widest body's vector, to which the scratch rounds V's rows; `MAX_BLOCKS`:
/// the blocks of 16 output channels one products call takes at most (M holds that many).
enum {
    ALPHA = 6, POSITIONS = 36, GROUP = 6, BLOCK = ANVIL_CONV_BLOCK, TAPS = 5, MAX_LANES = 16, MAX_BLOCKS = 4,
    M_BLOCK = POSITIONS * GROUP * BLOCK
};
_Static_assert(BLOCK % LANES == 0 && MAX_LANES % LANES == 0, "a block is whole vectors");

/// Tiles per image: ⌈output_height / 2⌉ · ⌈output_width / 2⌉ (`anvil_winograd5_tiles_per_image`).
static inline long tiles_per_image(const anvil_winograd5_shape *s) {
    return (long)((s->output_height + 1) / 2) * ((s->output_width + 1) / 2);
}

/// Input channels rounded up to whole vectors of this body: V's row stride.
static inline int padded_channels(int channels) { return (channels + LANES - 1) / LANES * LANES; }

/// Floats of a call's scratch for `channels` inputs, for any body: V with rows rounded to the
/// widest vector, then M for `MAX_BLOCKS` blocks (`anvil_winograd5_scratch_count`).
static inline size_t scratch_floats(int channels) {
    return (size_t)POSITIONS * GROUP * (size_t)((channels + MAX_LANES - 1) / MAX_LANES * MAX_LANES)
         + (size_t)MAX_BLOCKS * M_BLOCK;
}

/// `Bᵀ d` along one line of six vectors, `ds` and `ts` vectors apart.
/// Bᵀ = [4 0 −5 0 1 0; 0 −4 −4 1 1 0; 0 4 −4 −1 1 0; 0 −2 −1 2 1 0; 0 2 −1 −2 1 0; 0 4 0 −5 0 1].
INLINE void input_line(const vf *d, int ds, vf *t, int ts) {
    vf d0 = d[0], d1 = d[ds], d2 = d[2 * ds], d3 = d[3 * ds], d4 = d[4 * ds], d5 = d[5 * ds];
    vf a = d4 - splat(4) * d2, b = d3 - splat(4) * d1;
    vf c = d4 - d2, e = splat(2) * (d3 - d1);
    t[0] = splat(4) * d0 - splat(5) * d2 + d4;
    t[ts] = a + b;
    t[2 * ts] = a - b;
    t[3 * ts] = c + e;
    t[4 * ts] = c - e;
    t[5 * ts] = splat(4) * d1 - splat(5) * d3 + d5;
}

/// `Aᵀ m` of six vectors `ms` apart into two: Aᵀ = [1 1 1 1 1 0; 0 1 −1 2 −2 1].
INLINE void output_line(const vf *m, int ms, vf *y0, vf *y1) {
    vf m0 = m[0], m1 = m[ms], m2 = m[2 * ms], m3 = m[3 * ms], m4 = m[4 * ms], m5 = m[5 * ms];
    *y0 = m0 + (m1 + m2) + (m3 + m4);
    *y1 = (m1 - m2) + splat(2) * (m3 - m4) + m5;
}

/// Where tile `tile` of the batch lies.
typedef struct { long image; int y, x; } tile_position;

INLINE tile_position locate(const anvil_winograd5_shape *s, long tile) {
    const long tiles_wide = (s->output_width + 1) / 2, per_image = tiles_per_image(s);
    tile_position t;
    t.image = tile / per_image;
    long index = tile - t.image * per_image;
    t.y = (int)(index / tiles_wide) * 2;
    t.x = (int)(index % tiles_wide) * 2;
    return t;
}

/// Writes `Bᵀ d B` of one tile's 6×6 patch (zeros outside the input) to `v`: value
/// (position p, channel c) at `v[p · GROUP · cp + c]`, all `cp` (padded) channels.
INLINE void transform_input(const anvil_winograd5_shape *s, const float *input, long tile, float *v, int cp) {
    const int channels = s->channels, height = s->input_height, width = s->input_width;
    const tile_position t = locate(s, tile);
    const int y0 = t.y - s->pad_top, x0 = t.x - s->pad_left;
    const int interior = y0 >= 0 && x0 >= 0 && y0 + ALPHA <= height && x0 + ALPHA <= width;
    const float *image = input + (size_t)t.image * height * width * channels;
    for (int c = 0; c < cp; c += LANES) {
        vf d[POSITIONS], x[POSITIONS], r[POSITIONS];
        const int lanes = channels - c < LANES ? channels - c : LANES;
        for (int i = 0; i < ALPHA; i++) {
            const int y = y0 + i;
            for (int j = 0; j < ALPHA; j++) {
                const int xx = x0 + j;
                if (interior && lanes == LANES) {
                    d[i * ALPHA + j] = loadv(image + ((size_t)y * width + xx) * channels + c);
                } else if (y >= 0 && y < height && xx >= 0 && xx < width) {
                    d[i * ALPHA + j] = load_lanes(image + ((size_t)y * width + xx) * channels + c, lanes);
                } else {
                    d[i * ALPHA + j] = splat(0);
                }
            }
        }
        for (int j = 0; j < ALPHA; j++) input_line(d + j, ALPHA, x + j, ALPHA);          // down each column
        for (int i = 0; i < ALPHA; i++) input_line(x + i * ALPHA, 1, r + i * ALPHA, 1);  // along each row
        for (int p = 0; p < POSITIONS; p++) storev(v + (size_t)p * GROUP * cp + c, r[p]);
    }
}

/// `Aᵀ M A` of one tile for output channels `[first, first + 16)`, plus bias, clamped, into
/// the tile's output pixels that exist. `m` holds (position p, channel j) at `m[p · GROUP · 16 + j]`.
INLINE void transform_output(const anvil_winograd5_shape *s, const float *m, long tile, int first,
                             const float bias[BLOCK], float *output) {
    const tile_position t = locate(s, tile);
    const int rows = s->output_height - t.y < 2 ? 1 : 2, columns = s->output_width - t.x < 2 ? 1 : 2;
    for (int h = 0; h < BLOCK; h += LANES) {
        const int channel = first + h;
        if (channel >= s->outputs) break;
        const int lanes = s->outputs - channel < LANES ? s->outputs - channel : LANES;
        vf z0[ALPHA], z1[ALPHA];
        for (int a = 0; a < ALPHA; a++) {
            vf line[ALPHA];
            for (int b = 0; b < ALPHA; b++) line[b] = loadv(m + (size_t)(a * ALPHA + b) * GROUP * BLOCK + h);
            output_line(line, 1, z0 + a, z1 + a);
        }
        vf y[2][2];
        output_line(z0, 1, &y[0][0], &y[1][0]);
        output_line(z1, 1, &y[0][1], &y[1][1]);
        const vf shift = loadv(bias + h), lower = splat(s->clamp_min), upper = splat(s->clamp_max);
        for (int r = 0; r < rows; r++) {
            for (int q = 0; q < columns; q++) {
                // max then min, as anvil_clamp does lane by lane (NaN stays NaN).
                vf x = y[r][q] + shift;
                x = pick(x < lower, lower, x);
                x = pick(x > upper, upper, x);
                float *pixel = output + (((size_t)t.image * s->output_height + t.y + r) * s->output_width + t.x + q) * s->outputs + channel;
                store_lanes(pixel, x, lanes);
            }
        }
    }
}

/// A body's products for one position: `M[p] = V[p] · U[p]` for `n` tiles (rows `cp` apart in
/// `v`) × `blocks` blocks of 16 channels (block k's filters `u + k · u_block`, its sums at
/// `m + k · M_BLOCK`, rows 16 apart), over `channels` inputs.
typedef void (*products_body)(const float *v, int cp, const float *u, size_t u_block, int channels, int n, int blocks,
                              float *m);

/// Tiles `[t0, t1)`, six at a time, with a body's `products` (a constant at each call site)
/// over groups of up to `group_blocks` blocks.
INLINE void run_tiles(const anvil_winograd5_shape *s, const float *input, const float *u, const float *bias,
                      float *output, long t0, long t1, float *scratch, products_body products, int group_blocks) {
    const int channels = s->channels, cp = padded_channels(channels);
    const int blocks = (s->outputs + BLOCK - 1) / BLOCK;
    const size_t u_block = (size_t)POSITIONS * channels * BLOCK;
    float *v = scratch, *m = scratch + (size_t)POSITIONS * GROUP * cp;
    for (long t = t0; t < t1; t += GROUP) {
        const int n = t1 - t < GROUP ? (int)(t1 - t) : GROUP;
        for (int i = 0; i < n; i++) transform_input(s, input, t + i, v + (size_t)i * cp, cp);
        for (int b = 0; b < blocks; b += group_blocks) {
            const int count = blocks - b < group_blocks ? blocks - b : group_blocks;
            const float *ub = u + (size_t)b * u_block;
            for (int p = 0; p < POSITIONS; p++)
                products(v + (size_t)p * GROUP * cp, cp, ub + (size_t)p * channels * BLOCK, u_block, channels, n, count,
                         m + (size_t)p * GROUP * BLOCK);
            for (int k = 0; k < count; k++) {
                float padded_bias[BLOCK] = { 0 };
                const int first = (b + k) * BLOCK;
                const int valid = s->outputs - first < BLOCK ? s->outputs - first : BLOCK;
                if (bias) memcpy(padded_bias, bias + first, (size_t)valid * sizeof(float));
                for (int i = 0; i < n; i++)
                    transform_output(s, m + (size_t)k * M_BLOCK + (size_t)i * BLOCK, t + i, first, padded_bias, output);
            }
        }
    }
}

#endif
