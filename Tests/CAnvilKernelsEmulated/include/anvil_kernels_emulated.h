#ifndef ANVIL_KERNELS_EMULATED_H
#define ANVIL_KERNELS_EMULATED_H

// Test support only: kernel bodies of instruction sets this CPU may lack, compiled from their
// own source files against portable emulations of their intrinsics (avx512_emulation.h), so the
// tests run their loops, tiles, masks and pairings on any x86-64 CPU. On a CPU that has the set,
// the tests also run the real body through the dispatch table.

#include "anvil_direct_convolution.h"
#include "anvil_winograd_products.h"
#include "anvil_winograd_3x3.h"
#include "anvil_winograd_5x5.h"
#include "anvil_pooling.h"
#include "anvil_depthwise_convolution.h"
#include "anvil_activation.h"
#include "anvil_dense.h"

#ifdef __cplusplus
extern "C" {
#endif

/// 1 when this build has the emulated bodies (x86-64), else 0.
int anvil_emulated_bodies_available(void);

/// `x86_avx512/direct_convolution.c` on emulated AVX-512: `anvil_conv_direct`'s arguments without
/// the `isa`. Does nothing where `anvil_emulated_bodies_available` is 0.
void anvil_direct_convolution_avx512_emulated(const anvil_conv_shape *s, const float *input, const float *packed,
                                              const float *bias, const float *residual, float *output,
                                              int pixel_begin, int pixel_end, int block_begin, int block_end);

/// `x86_avx512/winograd_products.c` on emulated AVX-512: `anvil_winograd_products`'s arguments
/// without the `isa`. Does nothing where `anvil_emulated_bodies_available` is 0.
void anvil_winograd_products_avx512_emulated(const anvil_winograd_products_shape *s, const float *v, const float *u,
                                             float *m, int block_begin, int block_end);

/// `x86_avx512/winograd_3x3.c`'s three transforms (`internal/winograd_3x3.h` at 16 lanes)
/// compiled without the AVX-512 target: `anvil_winograd3_transform_input`'s, `…_output`'s,
/// `…_filters`' and `…_taps`' arguments without the `isa`. Built on every CPU.
void anvil_winograd3_input_avx512_emulated(const anvil_winograd3_shape *s, const float *input, float *v, long first_tile,
                                           long tile_begin, long tile_end);
void anvil_winograd3_output_avx512_emulated(const anvil_winograd3_shape *s, const float *m, const float *bias,
                                            float *output, long first_tile, long tile_begin, long tile_end);
void anvil_winograd3_filters_avx512_emulated(int tile, const float *weights, anvil_winograd3_filter_strides strides,
                                             const float *scale, int outputs, int inputs, float *u, int input_begin,
                                             int input_end);
void anvil_winograd3_taps_avx512_emulated(int tile, const float *taps, anvil_winograd3_tap_strides strides, int width,
                                          int input_begin, int input_end, float *u, long position_stride);

/// `x86_avx512/winograd_5x5.c` on emulated AVX-512: `anvil_winograd5`'s arguments without the
/// `isa`. Does nothing where `anvil_emulated_bodies_available` is 0.
void anvil_winograd_5x5_avx512_emulated(const anvil_winograd5_shape *s, const float *input, const float *u,
                                        const float *bias, float *output, long tile_begin, long tile_end,
                                        float *scratch);

/// `x86_avx512/pooling.c` on emulated AVX-512: `anvil_max_pool_lines`'s arguments without the
/// `isa`. Does nothing where `anvil_emulated_bodies_available` is 0.
void anvil_max_pooling_avx512_emulated(const anvil_pool_shape *s, const float *input, float *output, int line_begin,
                                       int line_end);
/// `x86_avx512/pooling.c`'s average pooling on emulated AVX-512: `anvil_average_pool_lines`'s
/// arguments without the `isa`. Does nothing where `anvil_emulated_bodies_available` is 0.
void anvil_average_pooling_avx512_emulated(const anvil_pool_shape *s, anvil_pool_divisor d, const float *input,
                                           float *output, int line_begin, int line_end);

/// `x86_avx512/depthwise_convolution.c` on emulated AVX-512: `anvil_depthwise_rows`'s arguments
/// without the `isa`. Does nothing where `anvil_emulated_bodies_available` is 0.
void anvil_depthwise_convolution_avx512_emulated(const anvil_depthwise_shape *s, const float *input,
                                                 const float *weights, const float *bias, float *output,
                                                 int row_begin, int row_end);

/// `x86_avx512/activation.c` on emulated AVX-512: `anvil_activation`'s arguments without the
/// `isa`. Does nothing where `anvil_emulated_bodies_available` is 0.
void anvil_activation_avx512_emulated(const anvil_activation_function *f, float *values, long count);

/// `x86_avx512/dense.c` on emulated AVX-512: `anvil_dense_rows`'s arguments without the `isa`.
/// Does nothing where `anvil_emulated_bodies_available` is 0.
void anvil_dense_avx512_emulated(const float *w, const float *x, const float *bias, float *y, int inputs, int outputs,
                                 int batch, int output_begin, int output_end, float clamp_min, float clamp_max);

#ifdef __cplusplus
}
#endif

#endif
