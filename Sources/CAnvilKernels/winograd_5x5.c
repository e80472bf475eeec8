#include "CAnvilKernels.h"
#include "kernels_internal.h"
#include <string.h>

// Winograd F(2×2, 5×5) (Lavin & Gray 2016, interpolation points 0, ±1, ±2, ∞): a 2×2 output
// tile is Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A for its 6×6 input patch d, 36 products per channel pair
// instead of 100 — 2.8× fewer multiplies than direct convolution.
//
// Fused and cache-resident, unlike the 3×3 kernel's GEMMs over large blocks: for 5×5 layers
// the channel counts are small (MNIST: 32 → 64), so each transformed value is used in few
// multiply-adds and a round trip through memory would cost more than it saves. Six tiles at
// a time: their inputs are transformed into V (36 × 6 × channels, in L1/L2); for each block of
// 16 output channels and each of the 36 positions, a 6 tiles × 16 channels register tile
// accumulates V · U over the input channels (the direct kernel's inner loop), into M
// (36 × 6 × 16, in L1); the output transform then writes the 2×2 pixels with bias and clamp.

enum { ALPHA = 6, POSITIONS = 36, GROUP = 6, BLOCK = ANVIL_CONV_BLOCK, TAPS = 5 };

#define INLINE static inline __attribute__((always_inline))

// The helpers below pass 32-byte vectors by value; they are always inlined, so the AVX
// calling convention the warning is about never applies.
#pragma clang diagnostic ignored "-Wpsabi"

/// Eight channels; compiled to AVX inside the AVX2 body and to SSE pairs in the portable one.
typedef float v8 __attribute__((vector_size(32)));

INLINE v8 load8(const float *p) { v8 v; memcpy(&v, p, sizeof v); return v; }
INLINE void store8(float *p, v8 v) { memcpy(p, &v, sizeof v); }
INLINE v8 splat(float x) { return (v8){ x, x, x, x, x, x, x, x }; }

long anvil_winograd5_tiles_per_image(const anvil_winograd5_shape *s) {
    return (long)((s->output_height + 1) / 2) * ((s->output_width + 1) / 2);
}

size_t anvil_winograd5_filter_count(int outputs, int channels) {
    size_t blocks = (size_t)(outputs + BLOCK - 1) / BLOCK;
    return blocks * POSITIONS * (size_t)channels * BLOCK;
}

/// Input channels rounded up to whole vectors: V's row stride.
static inline int padded_channels(int channels) { return (channels + 7) & ~7; }

size_t anvil_winograd5_scratch_count(int channels) {
    return (size_t)POSITIONS * GROUP * padded_channels(channels) + (size_t)POSITIONS * GROUP * BLOCK;
}

// G (6 × 5): row i is f_i · (1, p_i, p_i², p_i³, p_i⁴) for p = 0, 1, −1, 2, −2 and
// f = 1/4, −1/6, −1/6, 1/24, 1/24; the last row picks g₄ (the point at infinity).
static const double G[ALPHA][TAPS] = {
    { 1.0 / 4, 0, 0, 0, 0 },
    { -1.0 / 6, -1.0 / 6, -1.0 / 6, -1.0 / 6, -1.0 / 6 },
    { -1.0 / 6, 1.0 / 6, -1.0 / 6, 1.0 / 6, -1.0 / 6 },
    { 1.0 / 24, 2.0 / 24, 4.0 / 24, 8.0 / 24, 16.0 / 24 },
    { 1.0 / 24, -2.0 / 24, 4.0 / 24, -8.0 / 24, 16.0 / 24 },
    { 0, 0, 0, 0, 1 },
};

void anvil_winograd5_transform_filters(const float *w, int outputs, int channels, float *u) {
    memset(u, 0, anvil_winograd5_filter_count(outputs, channels) * sizeof(float));
    for (int o = 0; o < outputs; o++) {
        for (int c = 0; c < channels; c++) {
            double g[TAPS][TAPS], rows[ALPHA][TAPS];
            for (int y = 0; y < TAPS; y++)
                for (int x = 0; x < TAPS; x++) g[y][x] = w[(((size_t)o * TAPS + y) * TAPS + x) * channels + c];
            for (int a = 0; a < ALPHA; a++)
                for (int x = 0; x < TAPS; x++) {
                    double sum = 0;
                    for (int y = 0; y < TAPS; y++) sum += G[a][y] * g[y][x];
                    rows[a][x] = sum;
                }
            float *target = u + ((size_t)(o / BLOCK) * POSITIONS * channels + c) * BLOCK + o % BLOCK;
            for (int a = 0; a < ALPHA; a++)
                for (int b = 0; b < ALPHA; b++) {
                    double sum = 0;
                    for (int x = 0; x < TAPS; x++) sum += rows[a][x] * G[b][x];
                    target[(size_t)(a * ALPHA + b) * channels * BLOCK] = (float)sum;
                }
        }
    }
}

/// `Bᵀ d` along one line of six vectors, `ds` and `ts` vectors apart.
/// Bᵀ = [4 0 −5 0 1 0; 0 −4 −4 1 1 0; 0 4 −4 −1 1 0; 0 −2 −1 2 1 0; 0 2 −1 −2 1 0; 0 4 0 −5 0 1].
INLINE void input_line(const v8 *d, int ds, v8 *t, int ts) {
    v8 d0 = d[0], d1 = d[ds], d2 = d[2 * ds], d3 = d[3 * ds], d4 = d[4 * ds], d5 = d[5 * ds];
    v8 a = d4 - splat(4) * d2, b = d3 - splat(4) * d1;
    v8 c = d4 - d2, e = splat(2) * (d3 - d1);
    t[0] = splat(4) * d0 - splat(5) * d2 + d4;
    t[ts] = a + b;
    t[2 * ts] = a - b;
    t[3 * ts] = c + e;
    t[4 * ts] = c - e;
    t[5 * ts] = splat(4) * d1 - splat(5) * d3 + d5;
}

/// `Aᵀ m` of six vectors `ms` apart into two: Aᵀ = [1 1 1 1 1 0; 0 1 −1 2 −2 1].
INLINE void output_line(const v8 *m, int ms, v8 *y0, v8 *y1) {
    v8 m0 = m[0], m1 = m[ms], m2 = m[2 * ms], m3 = m[3 * ms], m4 = m[4 * ms], m5 = m[5 * ms];
    *y0 = m0 + (m1 + m2) + (m3 + m4);
    *y1 = (m1 - m2) + splat(2) * (m3 - m4) + m5;
}

/// Where tile `tile` of the batch lies.
typedef struct { long image; int y, x; } tile_position;

INLINE tile_position locate(const anvil_winograd5_shape *s, long tile) {
    const long tiles_wide = (s->output_width + 1) / 2, per_image = anvil_winograd5_tiles_per_image(s);
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
    for (int c = 0; c < cp; c += 8) {
        v8 d[POSITIONS], x[POSITIONS], r[POSITIONS];
        const int lanes = channels - c < 8 ? channels - c : 8;
        for (int i = 0; i < ALPHA; i++) {
            const int y = y0 + i;
            for (int j = 0; j < ALPHA; j++) {
                const int xx = x0 + j;
                if (interior && lanes == 8) {
                    d[i * ALPHA + j] = load8(image + ((size_t)y * width + xx) * channels + c);
                } else if (y >= 0 && y < height && xx >= 0 && xx < width) {
                    float lane[8] = { 0 };
                    memcpy(lane, image + ((size_t)y * width + xx) * channels + c, (size_t)lanes * sizeof(float));
                    d[i * ALPHA + j] = load8(lane);
                } else {
                    d[i * ALPHA + j] = splat(0);
                }
            }
        }
        for (int j = 0; j < ALPHA; j++) input_line(d + j, ALPHA, x + j, ALPHA);          // down each column
        for (int i = 0; i < ALPHA; i++) input_line(x + i * ALPHA, 1, r + i * ALPHA, 1);  // along each row
        for (int p = 0; p < POSITIONS; p++) store8(v + (size_t)p * GROUP * cp + c, r[p]);
    }
}

/// `Aᵀ M A` of one tile for output channels `[first, first + 16)`, plus bias, clamped, into
/// the tile's output pixels that exist. `m` holds (position p, channel j) at `m[p · GROUP · 16 + j]`.
INLINE void transform_output(const anvil_winograd5_shape *s, const float *m, long tile, int first,
                             const float bias[BLOCK], float *output) {
    const tile_position t = locate(s, tile);
    const int rows = s->output_height - t.y < 2 ? 1 : 2, columns = s->output_width - t.x < 2 ? 1 : 2;
    for (int h = 0; h < BLOCK; h += 8) {
        const int channel = first + h;
        if (channel >= s->outputs) break;
        const int lanes = s->outputs - channel < 8 ? s->outputs - channel : 8;
        v8 z0[ALPHA], z1[ALPHA];
        for (int a = 0; a < ALPHA; a++) {
            v8 line[ALPHA];
            for (int b = 0; b < ALPHA; b++) line[b] = load8(m + (size_t)(a * ALPHA + b) * GROUP * BLOCK + h);
            output_line(line, 1, z0 + a, z1 + a);
        }
        v8 y[2][2];
        output_line(z0, 1, &y[0][0], &y[1][0]);
        output_line(z1, 1, &y[0][1], &y[1][1]);
        const v8 shift = load8(bias + h);
        for (int r = 0; r < rows; r++) {
            for (int q = 0; q < columns; q++) {
                float values[8];
                store8(values, y[r][q] + shift);
                for (int l = 0; l < 8; l++) values[l] = anvil_clamp(values[l], s->clamp_min, s->clamp_max);
                float *pixel = output + (((size_t)t.image * s->output_height + t.y + r) * s->output_width + t.x + q) * s->outputs + channel;
                if (lanes == 8) memcpy(pixel, values, sizeof values);
                else memcpy(pixel, values, (size_t)lanes * sizeof(float));
            }
        }
    }
}

/// `M[p] = V[p] · U[p]` for one position and one block: `n` tiles (rows `cp` apart in `v`)
/// × 16 channels, over `channels` inputs, into `m` (rows 16 apart).
static void products_portable(const float *v, int cp, const float *u, int channels, int n, float *m) {
    for (int i = 0; i < n; i++) {
        float acc[BLOCK] = { 0 };
        for (int c = 0; c < channels; c++) {
            const float x = v[(size_t)i * cp + c];
            for (int j = 0; j < BLOCK; j++) acc[j] += x * u[(size_t)c * BLOCK + j];
        }
        memcpy(m + (size_t)i * BLOCK, acc, sizeof acc);
    }
}

#if ANVIL_X86
ANVIL_AVX2 INLINE void products_avx2_n(const int N, const float *v, int cp, const float *u, int channels, float *m) {
    __m256 a0[GROUP], a1[GROUP];
    for (int i = 0; i < N; i++) { a0[i] = _mm256_setzero_ps(); a1[i] = _mm256_setzero_ps(); }
    for (int c = 0; c < channels; c++) {
        __m256 w0 = _mm256_loadu_ps(u + (size_t)c * BLOCK), w1 = _mm256_loadu_ps(u + (size_t)c * BLOCK + 8);
        for (int i = 0; i < N; i++) {
            __m256 x = _mm256_broadcast_ss(v + (size_t)i * cp + c);
            a0[i] = _mm256_fmadd_ps(x, w0, a0[i]);
            a1[i] = _mm256_fmadd_ps(x, w1, a1[i]);
        }
    }
    for (int i = 0; i < N; i++) {
        _mm256_storeu_ps(m + (size_t)i * BLOCK, a0[i]);
        _mm256_storeu_ps(m + (size_t)i * BLOCK + 8, a1[i]);
    }
}

ANVIL_AVX2 static void products_avx2(const float *v, int cp, const float *u, int channels, int n, float *m) {
    switch (n) {
    case 6: products_avx2_n(6, v, cp, u, channels, m); break;
    case 5: products_avx2_n(5, v, cp, u, channels, m); break;
    case 4: products_avx2_n(4, v, cp, u, channels, m); break;
    case 3: products_avx2_n(3, v, cp, u, channels, m); break;
    case 2: products_avx2_n(2, v, cp, u, channels, m); break;
    default: products_avx2_n(1, v, cp, u, channels, m); break;
    }
}
#endif

/// Tiles `[t0, t1)`, six at a time. `avx2` is a constant in each instantiation below.
INLINE void run_tiles(const anvil_winograd5_shape *s, const float *input, const float *u, const float *bias,
                      float *output, long t0, long t1, float *scratch, const int avx2) {
    const int channels = s->channels, cp = padded_channels(channels);
    const int blocks = (s->outputs + BLOCK - 1) / BLOCK;
    float *v = scratch, *m = scratch + (size_t)POSITIONS * GROUP * cp;
    for (long t = t0; t < t1; t += GROUP) {
        const int n = t1 - t < GROUP ? (int)(t1 - t) : GROUP;
        for (int i = 0; i < n; i++) transform_input(s, input, t + i, v + (size_t)i * cp, cp);
        for (int b = 0; b < blocks; b++) {
            const float *ub = u + (size_t)b * POSITIONS * channels * BLOCK;
            for (int p = 0; p < POSITIONS; p++) {
                const float *vp = v + (size_t)p * GROUP * cp, *up = ub + (size_t)p * channels * BLOCK;
                float *mp = m + (size_t)p * GROUP * BLOCK;
#if ANVIL_X86
                if (avx2) { products_avx2(vp, cp, up, channels, n, mp); continue; }
#endif
                products_portable(vp, cp, up, channels, n, mp);
            }
            float padded_bias[BLOCK] = { 0 };
            const int valid = s->outputs - b * BLOCK < BLOCK ? s->outputs - b * BLOCK : BLOCK;
            if (bias) memcpy(padded_bias, bias + b * BLOCK, (size_t)valid * sizeof(float));
            for (int i = 0; i < n; i++) transform_output(s, m + (size_t)i * BLOCK, t + i, b * BLOCK, padded_bias, output);
        }
    }
    (void)avx2;
}

#if ANVIL_X86
ANVIL_AVX2 static void run_avx2(const anvil_winograd5_shape *s, const float *input, const float *u, const float *bias,
                                float *output, long t0, long t1, float *scratch) {
    run_tiles(s, input, u, bias, output, t0, t1, scratch, 1);
}
#endif

static void run_portable(const anvil_winograd5_shape *s, const float *input, const float *u, const float *bias,
                         float *output, long t0, long t1, float *scratch) {
    run_tiles(s, input, u, bias, output, t0, t1, scratch, 0);
}

void anvil_winograd5(const anvil_winograd5_shape *s, const float *input, const float *u, const float *bias,
                     float *output, long tile_begin, long tile_end, float *scratch) {
#if ANVIL_X86
    if (!s->portable && anvil_kernels_uses_avx2()) {
        run_avx2(s, input, u, bias, output, tile_begin, tile_end, scratch);
        return;
    }
#endif
    run_portable(s, input, u, bias, output, tile_begin, tile_end, scratch);
}
