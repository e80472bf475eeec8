#if defined(__x86_64__)
#include "../internal/normalization.h"

// Group / instance / layer normalisation, LRN and Lp pooling with AVX2: 8 channels per
// register, moments widened to double 4 at a time.

#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)

static void accumulate_avx2(double *sums, const float *x, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        _mm256_storeu_pd(sums + i, _mm256_add_pd(_mm256_loadu_pd(sums + i), _mm256_cvtps_pd(_mm256_castps256_ps128(v))));
        _mm256_storeu_pd(sums + i + 4, _mm256_add_pd(_mm256_loadu_pd(sums + i + 4), _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1))));
    }
    for (; i < n; i++) sums[i] += x[i];
}

static void accumulate_squares_avx2(double *sums, const float *x, const float *mean, int n) {
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        const __m256d d = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + i)), _mm256_cvtps_pd(_mm_loadu_ps(mean + i)));
        _mm256_storeu_pd(sums + i, _mm256_fmadd_pd(d, d, _mm256_loadu_pd(sums + i)));
    }
    for (; i < n; i++) { const double d = (double)x[i] - mean[i]; sums[i] += d * d; }
}

static void scale_shift_avx2(float *y, const float *x, const float *scale, const float *shift, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(scale + i), _mm256_loadu_ps(shift + i)));
    for (; i < n; i++) y[i] = x[i] * scale[i] + shift[i];
}

static double horizontal_sum(__m256d v) {
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    s = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
    return _mm_cvtsd_f64(s);
}

static double sum_avx2(const float *x, int n) {
    __m256d a = _mm256_setzero_pd(), b = _mm256_setzero_pd();
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        a = _mm256_add_pd(a, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
        b = _mm256_add_pd(b, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
    }
    double s = horizontal_sum(_mm256_add_pd(a, b));
    for (; i < n; i++) s += x[i];
    return s;
}

static double sum_squares_avx2(const float *x, double mean, int n) {
    const __m256d m = _mm256_set1_pd(mean);
    __m256d a = _mm256_setzero_pd(), b = _mm256_setzero_pd();
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        const __m256d d0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), m);
        const __m256d d1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), m);
        a = _mm256_fmadd_pd(d0, d0, a);
        b = _mm256_fmadd_pd(d1, d1, b);
    }
    double s = horizontal_sum(_mm256_add_pd(a, b));
    for (; i < n; i++) s += ((double)x[i] - mean) * ((double)x[i] - mean);
    return s;
}

static void normalize_avx2(float *y, const float *x, float mean, float inv, const float *gamma, const float *beta,
                           int n) {
    const __m256 m = _mm256_set1_ps(mean), k = _mm256_set1_ps(inv), one = _mm256_set1_ps(1), zero = _mm256_setzero_ps();
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 g = gamma ? _mm256_loadu_ps(gamma + i) : one, b = beta ? _mm256_loadu_ps(beta + i) : zero;
        const __m256 t = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), m), k);
        _mm256_storeu_ps(y + i, _mm256_fmadd_ps(t, g, b));
    }
    for (; i < n; i++) y[i] = (x[i] - mean) * inv * (gamma ? gamma[i] : 1.0f) + (beta ? beta[i] : 0.0f);
}

static const anvil_norm_primitives avx2_primitives = {
    accumulate_avx2, accumulate_squares_avx2, scale_shift_avx2, sum_avx2, sum_squares_avx2, normalize_avx2,
};

void anvil_group_norm_coefficients_avx2(const float *image, int pixels, int channels, int groups, float epsilon,
                                        const float *gamma, const float *beta, float *scale, float *shift,
                                        float *work) {
    anvil_group_norm_coefficients_impl(image, pixels, channels, groups, epsilon, gamma, beta, scale, shift, work,
                                       &avx2_primitives);
}

void anvil_scale_shift_pixels_avx2(const float *input, const float *scale, const float *shift, float *output,
                                   int channels, long pixel_begin, long pixel_end) {
    anvil_scale_shift_pixels_impl(input, scale, shift, output, channels, pixel_begin, pixel_end, &avx2_primitives);
}

void anvil_layer_norm_pixels_avx2(const float *input, const float *gamma, const float *beta, float *output,
                                  int size, float epsilon, long run_begin, long run_end) {
    anvil_layer_norm_pixels_impl(input, gamma, beta, output, size, epsilon, run_begin, run_end,
                                 &avx2_primitives);
}

/// (bias + alpha_n · s)^−beta for beta 0.75 (AlexNet, GoogLeNet) and 0.5 with square roots;
/// other powers take the scalar channel.
void anvil_lrn_pixels_avx2(const float *input, float *output, int channels, int size, float alpha, float beta,
                           float bias, long pixel_begin, long pixel_end) {
    int before, after;
    anvil_lrn_window(size, &before, &after);
    const float alpha_n = alpha / (float)size;
    const int vector = beta == 0.75f || beta == 0.5f;
    const __m256 a = _mm256_set1_ps(alpha_n), k = _mm256_set1_ps(bias), one = _mm256_set1_ps(1);
    for (long p = pixel_begin; p < pixel_end; p++) {
        const float *x = input + p * channels;
        float *y = output + p * channels;
        int c = 0;
        for (; c < channels && c < before; c++) y[c] = anvil_lrn_channel(x, c, channels, before, after, alpha_n, beta, bias);
        if (vector) {
            for (; c + 8 + after <= channels; c += 8) {
                __m256 s = _mm256_setzero_ps();
                for (int d = -before; d <= after; d++) {
                    const __m256 v = _mm256_loadu_ps(x + c + d);
                    s = _mm256_fmadd_ps(v, v, s);
                }
                const __m256 base = _mm256_fmadd_ps(a, s, k);
                const __m256 root = _mm256_sqrt_ps(base);
                const __m256 denominator = beta == 0.5f ? root : _mm256_mul_ps(root, _mm256_sqrt_ps(root));
                _mm256_storeu_ps(y + c, _mm256_mul_ps(_mm256_loadu_ps(x + c), _mm256_div_ps(one, denominator)));
            }
        }
        for (; c < channels; c++) y[c] = anvil_lrn_channel(x, c, channels, before, after, alpha_n, beta, bias);
    }
}

static void lp_pixel_avx2(const anvil_pool_shape *s, float p, const float *image, float *out, int oy, int ox) {
    if (p != 2.0f && p != 1.0f) { anvil_lp_pool_pixel_scalar(s, p, image, out, oy, ox); return; }
    int ky0, ky1, kx0, kx1;
    anvil_pool_window(s, oy, ox, &ky0, &ky1, &kx0, &kx1);
    const int C = s->channels;
    const int top = oy * s->stride_height - s->pad_top, left = ox * s->stride_width - s->pad_left;
    const __m256 sign = _mm256_set1_ps(-0.0f);
    int c = 0;
    for (; c + 8 <= C; c += 8) {
        __m256 acc = _mm256_setzero_ps();
        for (int ky = ky0; ky < ky1; ky++) {
            for (int kx = kx0; kx < kx1; kx++) {
                const __m256 v = _mm256_loadu_ps(image + ((size_t)(top + ky * s->dilation_height) * s->input_width
                                                          + (left + kx * s->dilation_width)) * C + c);
                acc = p == 2.0f ? _mm256_fmadd_ps(v, v, acc) : _mm256_add_ps(acc, _mm256_andnot_ps(sign, v));
            }
        }
        _mm256_storeu_ps(out + c, p == 2.0f ? _mm256_sqrt_ps(acc) : acc);
    }
    for (; c < C; c++) {
        float acc = 0;
        for (int ky = ky0; ky < ky1; ky++) {
            for (int kx = kx0; kx < kx1; kx++) {
                const float v = image[((size_t)(top + ky * s->dilation_height) * s->input_width
                                       + (left + kx * s->dilation_width)) * C + c];
                acc += p == 2.0f ? v * v : fabsf(v);
            }
        }
        out[c] = p == 2.0f ? sqrtf(acc) : acc;
    }
}

void anvil_lp_pool_lines_avx2(const anvil_pool_shape *s, float p, const float *input, float *output, int line_begin,
                              int line_end) {
    anvil_lp_pool_lines_impl(s, p, input, output, line_begin, line_end, lp_pixel_avx2);
}

#pragma clang attribute pop
#endif
