#ifndef ANVIL_KERNELS_BODIES_H
#define ANVIL_KERNELS_BODIES_H

// Every op's bodies, one per instruction set, each its public entry point without the `isa`:
// the functions the tables in dispatch.c point at. An op's files in scalar/, x86_avx2/ and
// x86_avx512/ define them.

#include "CAnvilKernels.h"

/// The bodies, one per instruction set (`anvil_dense_rows` without the `isa`).
typedef void anvil_dense_body(const float *w, const float *x, const float *bias, float *y, int inputs, int outputs,
                              int batch, int output_begin, int output_end, float clamp_min, float clamp_max);
anvil_dense_body anvil_dense_scalar;
#if defined(__x86_64__)
anvil_dense_body anvil_dense_avx2;
anvil_dense_body anvil_dense_avx512;
#endif

/// The bodies, one per instruction set (`anvil_depthwise_rows` without the `isa`).
typedef void anvil_depthwise_body(const anvil_depthwise_shape *s, const float *input, const float *weights,
                                  const float *bias, float *output, int row_begin, int row_end);
anvil_depthwise_body anvil_depthwise_convolution_scalar;
#if defined(__x86_64__)
anvil_depthwise_body anvil_depthwise_convolution_avx2;
anvil_depthwise_body anvil_depthwise_convolution_avx512;
#endif

/// The bodies, one per instruction set (`anvil_conv_direct` without the `isa`).
typedef void anvil_direct_convolution_body(const anvil_conv_shape *s, const float *input, const float *packed,
                                           const float *bias, const float *residual, float *output, int pixel_begin,
                                           int pixel_end, int block_begin, int block_end);
anvil_direct_convolution_body anvil_direct_convolution_scalar;
#if defined(__x86_64__)
anvil_direct_convolution_body anvil_direct_convolution_avx2;
anvil_direct_convolution_body anvil_direct_convolution_avx512;
#endif

/// The bodies, one per instruction set (`anvil_max_pool_lines` without the `isa`).
void anvil_max_pooling_scalar(const anvil_pool_shape *s, const float *input, float *output, int line_begin, int line_end);
#if defined(__x86_64__)
void anvil_max_pooling_avx2(const anvil_pool_shape *s, const float *input, float *output, int line_begin, int line_end);
void anvil_max_pooling_avx512(const anvil_pool_shape *s, const float *input, float *output, int line_begin, int line_end);
#endif

/// The bodies, one per instruction set (`anvil_average_pool_lines` without the `isa`).
typedef void anvil_average_pooling_body(const anvil_pool_shape *s, anvil_pool_divisor d, const float *input,
                                        float *output, int line_begin, int line_end);
anvil_average_pooling_body anvil_average_pooling_scalar;
#if defined(__x86_64__)
anvil_average_pooling_body anvil_average_pooling_avx2;
anvil_average_pooling_body anvil_average_pooling_avx512;
#endif

/// The bodies, one per instruction set (`anvil_winograd5` without the `isa`).
typedef void anvil_winograd_5x5_body(const anvil_winograd5_shape *s, const float *input, const float *u,
                                     const float *bias, float *output, long tile_begin, long tile_end, float *scratch);
anvil_winograd_5x5_body anvil_winograd_5x5_scalar;
#if defined(__x86_64__)
anvil_winograd_5x5_body anvil_winograd_5x5_avx2;
anvil_winograd_5x5_body anvil_winograd_5x5_avx512;
#endif

/// The bodies, one per instruction set (`anvil_winograd_products` without the `isa`).
typedef void anvil_winograd_products_body(const anvil_winograd_products_shape *s, const float *v, const float *u,
                                          float *m, int block_begin, int block_end);
anvil_winograd_products_body anvil_winograd_products_scalar;
#if defined(__x86_64__)
anvil_winograd_products_body anvil_winograd_products_avx2;
anvil_winograd_products_body anvil_winograd_products_avx512;
#endif

/// The bodies, one per instruction set (`anvil_winograd3_transform_input` without the `isa`).
typedef void anvil_winograd3_input_body(const anvil_winograd3_shape *s, const float *input, float *v, long first_tile,
                                        long tile_begin, long tile_end);
/// The bodies, one per instruction set (`anvil_winograd3_transform_output` without the `isa`).
typedef void anvil_winograd3_output_body(const anvil_winograd3_shape *s, const float *m, const float *bias,
                                         float *output, long first_tile, long tile_begin, long tile_end);
/// The bodies, one per instruction set (`anvil_winograd3_transform_filters` without the `isa`).
typedef void anvil_winograd3_filters_body(int tile, const float *weights, anvil_winograd3_filter_strides strides,
                                          const float *scale, int outputs, int inputs, float *u, int input_begin,
                                          int input_end);
/// The bodies, one per instruction set (`anvil_winograd3_transform_taps` without the `isa`).
typedef void anvil_winograd3_taps_body(int tile, const float *taps, anvil_winograd3_tap_strides strides, int width,
                                       int input_begin, int input_end, float *u, long position_stride);
anvil_winograd3_input_body anvil_winograd3_input_scalar;
anvil_winograd3_output_body anvil_winograd3_output_scalar;
anvil_winograd3_filters_body anvil_winograd3_filters_scalar;
anvil_winograd3_taps_body anvil_winograd3_taps_scalar;
#if defined(__x86_64__)
anvil_winograd3_input_body anvil_winograd3_input_avx2;
anvil_winograd3_output_body anvil_winograd3_output_avx2;
anvil_winograd3_filters_body anvil_winograd3_filters_avx2;
anvil_winograd3_taps_body anvil_winograd3_taps_avx2;
anvil_winograd3_input_body anvil_winograd3_input_avx512;
anvil_winograd3_output_body anvil_winograd3_output_avx512;
anvil_winograd3_filters_body anvil_winograd3_filters_avx512;
anvil_winograd3_taps_body anvil_winograd3_taps_avx512;
#endif

/// The bodies, one per instruction set (`anvil_binary` without the `isa`).
typedef void anvil_binary_body(anvil_binary_op op, const anvil_binary_shape *s, const float *a, const float *b,
                               float *out, long begin, long end);
anvil_binary_body anvil_binary_scalar;
#if defined(__x86_64__)
anvil_binary_body anvil_binary_avx2;
#endif

/// The bodies, one per instruction set (`anvil_col2im_lines` without the `isa`).
typedef void anvil_col2im_body(const anvil_col2im_shape *s, const float *columns, const float *bias, float *output,
                               int line_begin, int line_end);
/// The bodies, one per instruction set (`anvil_resample_lines` without the `isa`).
typedef void anvil_resample_body(const anvil_resample_shape *s, const float *input, float *output, int line_begin,
                                 int line_end);
/// The bodies, one per instruction set (`anvil_pad_lines` without the `isa`).
typedef void anvil_pad_body(const anvil_pad_shape *s, const float *input, float *output, int line_begin, int line_end);
/// The bodies, one per instruction set (`anvil_group_norm_coefficients` without the `isa`).
typedef void anvil_group_norm_body(const float *image, int pixels, int channels, int groups, float epsilon,
                                   const float *gamma, const float *beta, float *scale, float *shift, float *work);
/// The bodies, one per instruction set (`anvil_scale_shift_pixels` without the `isa`).
typedef void anvil_scale_shift_body(const float *input, const float *scale, const float *shift, float *output,
                                    int channels, long pixel_begin, long pixel_end);
/// The bodies, one per instruction set (`anvil_layer_norm_pixels` without the `isa`).
typedef void anvil_layer_norm_body(const float *input, const float *gamma, const float *beta, float *output,
                                   int size, float epsilon, long run_begin, long run_end);
/// The bodies, one per instruction set (`anvil_lrn_pixels` without the `isa`).
typedef void anvil_lrn_body(const float *input, float *output, int channels, int size, float alpha, float beta,
                            float bias, long pixel_begin, long pixel_end);
/// The bodies, one per instruction set (`anvil_lp_pool_lines` without the `isa`).
typedef void anvil_lp_pool_body(const anvil_pool_shape *s, float p, const float *input, float *output, int line_begin,
                                int line_end);
anvil_col2im_body anvil_col2im_scalar;
anvil_resample_body anvil_resample_scalar;
anvil_pad_body anvil_pad_scalar;
anvil_group_norm_body anvil_group_norm_coefficients_scalar;
anvil_scale_shift_body anvil_scale_shift_pixels_scalar;
anvil_layer_norm_body anvil_layer_norm_pixels_scalar;
anvil_lrn_body anvil_lrn_pixels_scalar;
anvil_lp_pool_body anvil_lp_pool_scalar;
#if defined(__x86_64__)
anvil_col2im_body anvil_col2im_avx2;
anvil_resample_body anvil_resample_avx2;
anvil_pad_body anvil_pad_avx2;
anvil_group_norm_body anvil_group_norm_coefficients_avx2;
anvil_scale_shift_body anvil_scale_shift_pixels_avx2;
anvil_layer_norm_body anvil_layer_norm_pixels_avx2;
anvil_lrn_body anvil_lrn_pixels_avx2;
anvil_lp_pool_body anvil_lp_pool_avx2;
#endif

/// The bodies, one per instruction set (`anvil_strided_copy` without the `isa`).
typedef void anvil_strided_copy_body(const anvil_copy_shape *s, const float *input, float *output, long row_begin,
                                     long row_end);
anvil_strided_copy_body anvil_strided_copy_scalar;
#if defined(__x86_64__)
anvil_strided_copy_body anvil_strided_copy_avx2;
#endif

/// The bodies, one per instruction set (`anvil_activation` without the `isa`).
typedef void anvil_activation_body(const anvil_activation_function *f, float *values, long count);
anvil_activation_body anvil_activation_scalar;
#if defined(__x86_64__)
anvil_activation_body anvil_activation_avx2;
anvil_activation_body anvil_activation_avx512;
#endif

#endif
