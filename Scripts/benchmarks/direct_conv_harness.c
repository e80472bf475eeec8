// One convolution layer through Anvil's direct kernel (`anvil_conv_direct`), alone, in a loop:
// the kernel's own speed, with its buffers hot in cache or coming from memory, on one or two
// threads. For Scripts/benchmarks and BENCHMARKS.md, not part of the test suite.
//
//   K=Sources/CAnvilKernels
//   clang -O2 -I$K/include -o /tmp/direct_conv_harness Scripts/benchmarks/direct_conv_harness.c \
//       $K/*.c $K/scalar/*.c $K/x86_avx2/*.c $K/x86_avx512/*.c -lm -lpthread
//   /tmp/direct_conv_harness 56x56x256 64 [--kernel 1] [--isa avx512] [--reps 500] [--threads 1]
//       [--cold-input] [--cold-output]
//
// The layer: an H×W×C NHWC image (zero-bordered by (kernel − 1) so the output is H×W), `OUT`
// output channels, a square kernel at stride 1, a bias and a ReLU. `--cold-input` /
// `--cold-output` rotate each run through 16 copies of that buffer (many times the L2 and what
// this process keeps of the L3), so its lines come from memory, as a network's activations can;
// without them the same buffers serve every run and stay in cache. `--threads 2` splits the
// pixels in two halves of whole 24-pixel chunks, as Anvil's `DirectConvolutionKernel` does, the
// second half on a spinning helper thread. Prints the minimum, 10th percentile and median time
// of `--reps` runs (after 20 untimed) and GFLOP/s from the nominal multiply-adds. Compiled with
// the kernels' own sources (with clang: they select instruction sets by clang's `#pragma clang
// attribute`), so it measures the checkout it is built from.

#include "CAnvilKernels.h"
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { COPIES = 16, MAX_REPS = 100000, WARMUP = 20, CHUNK = 24 };

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int ascending(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/// What both threads read for one run: the buffers and the pixel range of each half.
typedef struct {
    anvil_isa isa;
    anvil_conv_shape shape;
    const float *input, *packed, *bias;
    float *output;
    int pixels, blocks, split;
} run_t;

static run_t current;
static atomic_int started, finished; // the run the helper may start; the runs it has finished

static void *helper(void *unused) {
    (void)unused;
    for (int seen = 0;; seen++) {
        int go;
        while ((go = atomic_load_explicit(&started, memory_order_acquire)) == seen) {}
        if (go < 0) return NULL;
        anvil_conv_direct(current.isa, &current.shape, current.input, current.packed, current.bias, NULL,
                          current.output, current.split, current.pixels, 0, current.blocks);
        atomic_store_explicit(&finished, seen + 1, memory_order_release);
    }
}

static void usage(void) {
    fprintf(stderr, "usage: direct_conv_harness HxWxC OUT [--kernel K] [--isa scalar|avx2|avx512] [--reps N]"
                    " [--threads 1|2] [--cold-input] [--cold-output]\n");
    exit(2);
}

int main(int argc, char **argv) {
    int height, width, channels;
    if (argc < 3 || sscanf(argv[1], "%dx%dx%d", &height, &width, &channels) != 3) usage();
    const int outputs = atoi(argv[2]);
    int kernel = 1, reps = 500, threads = 1, cold_input = 0, cold_output = 0;
    anvil_isa isa = ANVIL_ISA_AVX512;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--kernel") && i + 1 < argc) kernel = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--isa") && i + 1 < argc) {
            const char *name = argv[++i];
            if (!strcmp(name, "scalar")) isa = ANVIL_ISA_SCALAR;
            else if (!strcmp(name, "avx2")) isa = ANVIL_ISA_AVX2;
            else if (!strcmp(name, "avx512")) isa = ANVIL_ISA_AVX512;
            else usage();
        } else if (!strcmp(argv[i], "--cold-input")) cold_input = 1;
        else if (!strcmp(argv[i], "--cold-output")) cold_output = 1;
        else usage();
    }
    if (height < 1 || width < 1 || channels < 1 || outputs < 1 || kernel < 1 || reps < 1 || reps > MAX_REPS
        || (threads != 1 && threads != 2))
        usage();
    if (!anvil_isa_supported(isa)) {
        fprintf(stderr, "direct_conv_harness: this CPU does not run the chosen instruction set\n");
        return 2;
    }
    const int padded_width = width + kernel - 1, padded_height = height + kernel - 1;
    const int depth = kernel * kernel * channels, pixels = height * width;
    // Each copy rounded to whole cache lines so that copies never share one.
    const size_t input_count = ((size_t)padded_height * padded_width * channels + 15) / 16 * 16;
    const size_t output_count = ((size_t)pixels * outputs + 15) / 16 * 16;
    const int input_copies = cold_input ? COPIES : 1, output_copies = cold_output ? COPIES : 1;
    float *inputs = aligned_alloc(64, input_count * input_copies * sizeof(float));
    float *results = aligned_alloc(64, output_count * output_copies * sizeof(float));
    float *weights = malloc((size_t)outputs * depth * sizeof(float)), *bias = malloc((size_t)outputs * sizeof(float));
    float *packed = aligned_alloc(64, (anvil_conv_packed_count(outputs, depth) * sizeof(float) + 63) / 64 * 64);
    double *times = malloc((size_t)reps * sizeof(double));
    if (!inputs || !results || !weights || !bias || !packed || !times) {
        fprintf(stderr, "direct_conv_harness: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < input_count * input_copies; i++) inputs[i] = (float)(i % 97) / 97.0f - 0.5f;
    memset(results, 0, output_count * output_copies * sizeof(float));
    for (size_t i = 0; i < (size_t)outputs * depth; i++) weights[i] = (float)(i % 89) / 89.0f - 0.5f;
    for (int i = 0; i < outputs; i++) bias[i] = 0.1f;
    anvil_conv_pack_weights(weights, outputs, depth, packed);

    current = (run_t){ .isa = isa, .packed = packed, .bias = bias, .pixels = pixels,
                       .blocks = (outputs + ANVIL_CONV_BLOCK - 1) / ANVIL_CONV_BLOCK };
    current.shape = (anvil_conv_shape){ padded_width, channels, kernel, kernel, 1, 1, 1, 1, width, outputs, 0.0f, INFINITY };
    const int chunks = (pixels + CHUNK - 1) / CHUNK;
    current.split = threads == 2 ? (chunks / 2) * CHUNK : pixels;
    pthread_t thread;
    if (threads == 2) pthread_create(&thread, NULL, helper, NULL);

    for (int r = -WARMUP; r < reps; r++) {
        const int k = r + WARMUP;
        current.input = inputs + input_count * (size_t)(k % input_copies);
        current.output = results + output_count * (size_t)((k * 7) % output_copies);
        const double start = now();
        if (threads == 2) atomic_store_explicit(&started, k + 1, memory_order_release);
        anvil_conv_direct(isa, &current.shape, current.input, packed, bias, NULL, current.output, 0, current.split, 0,
                          current.blocks);
        if (threads == 2) while (atomic_load_explicit(&finished, memory_order_acquire) != k + 1) {}
        if (r >= 0) times[r] = now() - start;
    }
    if (threads == 2) {
        atomic_store_explicit(&started, -1, memory_order_release);
        pthread_join(thread, NULL);
    }
    qsort(times, (size_t)reps, sizeof(double), ascending);
    const double flops = 2.0 * pixels * outputs * depth;
    const double t[3] = { times[0], times[reps / 10], times[reps / 2] };
    printf("%dx%dx%d -> %d, %dx%d, %d thread(s), input %s, output %s: min %.4f ms (%.1f GFLOP/s), "
           "p10 %.4f ms (%.1f), median %.4f ms (%.1f)\n",
           height, width, channels, outputs, kernel, kernel, threads, cold_input ? "cold" : "hot",
           cold_output ? "cold" : "hot", t[0] * 1e3, flops / t[0] / 1e9, t[1] * 1e3, flops / t[1] / 1e9,
           t[2] * 1e3, flops / t[2] / 1e9);
    return 0;
}
