#include "internal/common.h"
#include <stdio.h>
#include <stdlib.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

// CPU detection and the tables of bodies. Bodies for another architecture (arm_neon/, one day)
// would add an `anvil_isa` value, a table under their own `#if defined(__aarch64__)` and a
// detection line below.

static const anvil_kernel_table scalar_table = {
    ANVIL_ISA_SCALAR,
    anvil_direct_convolution_scalar,
    anvil_depthwise_convolution_scalar,
    anvil_dense_scalar,
    anvil_max_pooling_scalar,
    anvil_average_pooling_scalar,
    anvil_winograd_5x5_scalar,
    anvil_winograd_products_scalar,
    anvil_winograd3_input_scalar,
    anvil_winograd3_output_scalar,
    anvil_winograd3_filters_scalar,
    anvil_winograd3_taps_scalar,
    anvil_binary_scalar,
    anvil_col2im_scalar,
    anvil_resample_scalar,
    anvil_pad_scalar,
    anvil_group_norm_coefficients_scalar,
    anvil_scale_shift_pixels_scalar,
    anvil_layer_norm_pixels_scalar,
    anvil_lrn_pixels_scalar,
    anvil_lp_pool_scalar,
    anvil_strided_copy_scalar,
    anvil_activation_scalar,
};

#if defined(__x86_64__)
static const anvil_kernel_table avx2_table = {
    ANVIL_ISA_AVX2,
    anvil_direct_convolution_avx2,
    anvil_depthwise_convolution_avx2,
    anvil_dense_avx2,
    anvil_max_pooling_avx2,
    anvil_average_pooling_avx2,
    anvil_winograd_5x5_avx2,
    anvil_winograd_products_avx2,
    anvil_winograd3_input_avx2,
    anvil_winograd3_output_avx2,
    anvil_winograd3_filters_avx2,
    anvil_winograd3_taps_avx2,
    anvil_binary_avx2,
    anvil_col2im_avx2,
    anvil_resample_avx2,
    anvil_pad_avx2,
    anvil_group_norm_coefficients_avx2,
    anvil_scale_shift_pixels_avx2,
    anvil_layer_norm_pixels_avx2,
    anvil_lrn_pixels_avx2,
    anvil_lp_pool_avx2,
    anvil_strided_copy_avx2,
    anvil_activation_avx2,
};

// AVX-512 bodies exist for direct and depthwise convolution, small-batch dense layers, max and
// average pooling, the Winograd 3×3 transforms and products, Winograd 5×5, and the activations (SiLU, sigmoid and hard-swish; the others
// fall back to AVX2 inside it); the other ops run their AVX2 bodies, which every AVX-512 CPU
// also runs.
static const anvil_kernel_table avx512_table = {
    ANVIL_ISA_AVX512,
    anvil_direct_convolution_avx512,
    anvil_depthwise_convolution_avx512,
    anvil_dense_avx512,
    anvil_max_pooling_avx512,
    anvil_average_pooling_avx512,
    anvil_winograd_5x5_avx512,
    anvil_winograd_products_avx512,
    anvil_winograd3_input_avx512,
    anvil_winograd3_output_avx512,
    anvil_winograd3_filters_avx512,
    anvil_winograd3_taps_avx512,
    anvil_binary_avx2,
    anvil_col2im_avx2,
    anvil_resample_avx2,
    anvil_pad_avx2,
    anvil_group_norm_coefficients_avx2,
    anvil_scale_shift_pixels_avx2,
    anvil_layer_norm_pixels_avx2,
    anvil_lrn_pixels_avx2,
    anvil_lp_pool_avx2,
    anvil_strided_copy_avx2,
    anvil_activation_avx512,
};

/// XCR0: which register states the OS saves on a context switch (0 when it manages none
/// through XSAVE). Instructions whose registers it does not save must not run.
static unsigned long long os_saved_state(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & bit_OSXSAVE)) return 0;
    unsigned int low, high;
    __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
    return ((unsigned long long)high << 32) | low;
}
#endif

/// Bit `isa` set for each instruction set this CPU and OS run.
static unsigned detect(void) {
    unsigned supported = 1u << ANVIL_ISA_SCALAR;
#if defined(__x86_64__)
    __builtin_cpu_init();
    const unsigned long long xcr0 = os_saved_state();
    // SSE and AVX state (bits 1-2); for AVX-512 also the opmask and both halves of the zmm
    // registers (bits 5-7).
    const int ymm = (xcr0 & 0x6) == 0x6, zmm = (xcr0 & 0xe6) == 0xe6;
    const int avx2 = ymm && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (avx2) supported |= 1u << ANVIL_ISA_AVX2;
    if (avx2 && zmm && __builtin_cpu_supports("avx512f")) supported |= 1u << ANVIL_ISA_AVX512;
#endif
    return supported;
}

static unsigned supported_set(void) {
    // Any thread may be first: all compute the same answer, stored atomically.
    static unsigned known = 0;
    unsigned value = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (value == 0) {
        value = detect();
        __atomic_store_n(&known, value, __ATOMIC_RELAXED);
    }
    return value;
}

int anvil_isa_supported(anvil_isa isa) {
    return (unsigned)isa < ANVIL_ISA_COUNT && (supported_set() >> isa & 1u);
}

anvil_isa anvil_isa_detected(void) {
    const unsigned supported = supported_set();
    if (supported >> ANVIL_ISA_AVX512 & 1u) return ANVIL_ISA_AVX512;
    if (supported >> ANVIL_ISA_AVX2 & 1u) return ANVIL_ISA_AVX2;
    return ANVIL_ISA_SCALAR;
}

const anvil_kernel_table *anvil_kernel_table_for(anvil_isa isa) {
    if (!anvil_isa_supported(isa)) return NULL;
    switch (isa) {
#if defined(__x86_64__)
    case ANVIL_ISA_AVX2: return &avx2_table;
    case ANVIL_ISA_AVX512: return &avx512_table;
#endif
    case ANVIL_ISA_SCALAR: return &scalar_table;
    default: return NULL;
    }
}

const anvil_kernel_table *anvil_kernel_table_detected(void) {
    static const anvil_kernel_table *table = NULL;
    const anvil_kernel_table *value = __atomic_load_n(&table, __ATOMIC_ACQUIRE);
    if (!value) {
        value = anvil_kernel_table_for(anvil_isa_detected());
        __atomic_store_n(&table, value, __ATOMIC_RELEASE);
    }
    return value;
}

/// The table of `isa` for an entry point. An ISA the CPU lacks is the caller's error; stop
/// here with a message rather than die of an illegal instruction somewhere in a body.
static const anvil_kernel_table *table_or_abort(anvil_isa isa) {
    const anvil_kernel_table *table = anvil_kernel_table_for(isa);
    if (!table) {
        fprintf(stderr, "CAnvilKernels: instruction set %d is not supported by this CPU\n", (int)isa);
        abort();
    }
    return table;
}

void anvil_conv_direct(anvil_isa isa, const anvil_conv_shape *s, const float *input, const float *packed,
                       const float *bias, const float *residual, float *output, int pixel_begin, int pixel_end,
                       int block_begin, int block_end) {
    table_or_abort(isa)->direct_convolution(s, input, packed, bias, residual, output, pixel_begin, pixel_end,
                                            block_begin, block_end);
}

void anvil_depthwise_rows(anvil_isa isa, const anvil_depthwise_shape *s, const float *input, const float *weights,
                          const float *bias, float *output, int row_begin, int row_end) {
    table_or_abort(isa)->depthwise_convolution(s, input, weights, bias, output, row_begin, row_end);
}

void anvil_dense_rows(anvil_isa isa, const float *w, const float *x, const float *bias, float *y, int inputs,
                      int outputs, int batch, int output_begin, int output_end, float clamp_min, float clamp_max) {
    table_or_abort(isa)->dense(w, x, bias, y, inputs, outputs, batch, output_begin, output_end, clamp_min, clamp_max);
}

void anvil_max_pool_lines(anvil_isa isa, const anvil_pool_shape *s, const float *input, float *output, int line_begin,
                          int line_end) {
    table_or_abort(isa)->max_pooling(s, input, output, line_begin, line_end);
}

void anvil_average_pool_lines(anvil_isa isa, const anvil_pool_shape *s, anvil_pool_divisor divisor, const float *input,
                              float *output, int line_begin, int line_end) {
    table_or_abort(isa)->average_pooling(s, divisor, input, output, line_begin, line_end);
}

void anvil_winograd5(anvil_isa isa, const anvil_winograd5_shape *s, const float *input, const float *u,
                     const float *bias, float *output, long tile_begin, long tile_end, float *scratch) {
    table_or_abort(isa)->winograd_5x5(s, input, u, bias, output, tile_begin, tile_end, scratch);
}

void anvil_winograd_products(anvil_isa isa, const anvil_winograd_products_shape *s, const float *v, const float *u,
                             float *m, int block_begin, int block_end) {
    if (s->tiles <= 0 || block_begin >= block_end) return;
    table_or_abort(isa)->winograd_products(s, v, u, m, block_begin, block_end);
}

void anvil_winograd3_transform_input(anvil_isa isa, const anvil_winograd3_shape *s, const float *input, float *v,
                                     long first_tile, long tile_begin, long tile_end) {
    table_or_abort(isa)->winograd3_input(s, input, v, first_tile, tile_begin, tile_end);
}

void anvil_winograd3_transform_output(anvil_isa isa, const anvil_winograd3_shape *s, const float *m, const float *bias,
                                      float *output, long first_tile, long tile_begin, long tile_end) {
    table_or_abort(isa)->winograd3_output(s, m, bias, output, first_tile, tile_begin, tile_end);
}

void anvil_winograd3_transform_filters(anvil_isa isa, int tile, const float *weights,
                                       anvil_winograd3_filter_strides strides, const float *scale, int outputs,
                                       int inputs, float *u, int input_begin, int input_end) {
    table_or_abort(isa)->winograd3_filters(tile, weights, strides, scale, outputs, inputs, u, input_begin, input_end);
}

void anvil_winograd3_transform_taps(anvil_isa isa, int tile, const float *taps, anvil_winograd3_tap_strides strides,
                                    int width, int input_begin, int input_end, float *u, long position_stride) {
    table_or_abort(isa)->winograd3_taps(tile, taps, strides, width, input_begin, input_end, u, position_stride);
}

void anvil_binary(anvil_isa isa, anvil_binary_op op, const anvil_binary_shape *s, const float *a, const float *b,
                  float *out, long begin, long end) {
    if (begin >= end) return;
    table_or_abort(isa)->binary(op, s, a, b, out, begin, end);
}

void anvil_col2im_lines(anvil_isa isa, const anvil_col2im_shape *s, const float *columns, const float *bias,
                        float *output, int line_begin, int line_end) {
    table_or_abort(isa)->col2im(s, columns, bias, output, line_begin, line_end);
}

void anvil_resample_lines(anvil_isa isa, const anvil_resample_shape *s, const float *input, float *output,
                          int line_begin, int line_end) {
    table_or_abort(isa)->resample(s, input, output, line_begin, line_end);
}

void anvil_pad_lines(anvil_isa isa, const anvil_pad_shape *s, const float *input, float *output, int line_begin,
                     int line_end) {
    table_or_abort(isa)->pad(s, input, output, line_begin, line_end);
}

void anvil_group_norm_coefficients(anvil_isa isa, const float *image, int pixels, int channels, int groups,
                                   float epsilon, const float *gamma, const float *beta, float *scale, float *shift,
                                   float *work) {
    table_or_abort(isa)->group_norm_coefficients(image, pixels, channels, groups, epsilon, gamma, beta, scale, shift,
                                                 work);
}

void anvil_scale_shift_pixels(anvil_isa isa, const float *input, const float *scale, const float *shift,
                              float *output, int channels, long pixel_begin, long pixel_end) {
    table_or_abort(isa)->scale_shift_pixels(input, scale, shift, output, channels, pixel_begin, pixel_end);
}

void anvil_layer_norm_pixels(anvil_isa isa, const float *input, const float *gamma, const float *beta, float *output,
                             int size, float epsilon, long run_begin, long run_end) {
    table_or_abort(isa)->layer_norm_pixels(input, gamma, beta, output, size, epsilon, run_begin, run_end);
}

void anvil_lrn_pixels(anvil_isa isa, const float *input, float *output, int channels, int size, float alpha,
                      float beta, float bias, long pixel_begin, long pixel_end) {
    table_or_abort(isa)->lrn_pixels(input, output, channels, size, alpha, beta, bias, pixel_begin, pixel_end);
}

void anvil_lp_pool_lines(anvil_isa isa, const anvil_pool_shape *s, float p, const float *input, float *output,
                         int line_begin, int line_end) {
    table_or_abort(isa)->lp_pool(s, p, input, output, line_begin, line_end);
}

void anvil_strided_copy(anvil_isa isa, const anvil_copy_shape *s, const float *input, float *output, long row_begin,
                        long row_end) {
    if (row_begin >= row_end) return;
    table_or_abort(isa)->strided_copy(s, input, output, row_begin, row_end);
}

void anvil_activation(anvil_isa isa, const anvil_activation_function *f, float *values, long count) {
    if (count <= 0 || f->kind == ANVIL_ACTIVATION_NONE) return;
    table_or_abort(isa)->activation(f, values, count);
}
