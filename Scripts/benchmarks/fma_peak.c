/* Per-core FMA peak of this CPU: the ceiling a kernel's GFLOP/s is compared with.
 *
 *   cc -O2 -o fma_peak Scripts/benchmarks/fma_peak.c && ./fma_peak avx2|avx512
 *
 * One thread runs chains of fused multiply-adds on independent accumulators held in
 * registers (12 ymm accumulators for AVX2, 24 zmm for AVX-512: more than latency x
 * throughput, so the FMA ports stay busy) for about 0.2 s, five times; prints the best
 * rate as "gflops: X" (2 FLOPs per lane per FMA). Exit status 2 when the CPU lacks the set.
 */
#include <immintrin.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

__attribute__((target("avx2,fma")))
static inline float first256(__m256 v) { return _mm256_cvtss_f32(v); }
__attribute__((target("avx512f")))
static inline float first512(__m512 v) { return _mm512_cvtss_f32(v); }

/* The accumulators are separate variables, each its own register: 12 ymm for AVX2, 24 zmm for AVX-512. */
#define AVX2_ACC 12
#define AVX512_ACC 24

/* Written by the timed functions, so the compiler can neither drop their work nor move their calls
 * across the clock readings (a function without side effects could be). */
static volatile float sink;
__attribute__((target("avx2,fma"), noinline))
static float run_avx2(long iterations) {
    const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
    __m256 a0 = _mm256_set1_ps((float)0);
    __m256 a1 = _mm256_set1_ps((float)1);
    __m256 a2 = _mm256_set1_ps((float)2);
    __m256 a3 = _mm256_set1_ps((float)3);
    __m256 a4 = _mm256_set1_ps((float)4);
    __m256 a5 = _mm256_set1_ps((float)5);
    __m256 a6 = _mm256_set1_ps((float)6);
    __m256 a7 = _mm256_set1_ps((float)7);
    __m256 a8 = _mm256_set1_ps((float)8);
    __m256 a9 = _mm256_set1_ps((float)9);
    __m256 a10 = _mm256_set1_ps((float)10);
    __m256 a11 = _mm256_set1_ps((float)11);
    for (long n = 0; n < iterations; n++) {
        a0 = _mm256_fmadd_ps(a0, m, c);
        a1 = _mm256_fmadd_ps(a1, m, c);
        a2 = _mm256_fmadd_ps(a2, m, c);
        a3 = _mm256_fmadd_ps(a3, m, c);
        a4 = _mm256_fmadd_ps(a4, m, c);
        a5 = _mm256_fmadd_ps(a5, m, c);
        a6 = _mm256_fmadd_ps(a6, m, c);
        a7 = _mm256_fmadd_ps(a7, m, c);
        a8 = _mm256_fmadd_ps(a8, m, c);
        a9 = _mm256_fmadd_ps(a9, m, c);
        a10 = _mm256_fmadd_ps(a10, m, c);
        a11 = _mm256_fmadd_ps(a11, m, c);
    }
    sink = first256(a0) + first256(a1) + first256(a2) + first256(a3) + first256(a4) + first256(a5) + first256(a6) + first256(a7) + first256(a8) + first256(a9) + first256(a10) + first256(a11);
    return sink;
}

__attribute__((target("avx512f"), noinline))
static float run_avx512(long iterations) {
    const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
    __m512 a0 = _mm512_set1_ps((float)0);
    __m512 a1 = _mm512_set1_ps((float)1);
    __m512 a2 = _mm512_set1_ps((float)2);
    __m512 a3 = _mm512_set1_ps((float)3);
    __m512 a4 = _mm512_set1_ps((float)4);
    __m512 a5 = _mm512_set1_ps((float)5);
    __m512 a6 = _mm512_set1_ps((float)6);
    __m512 a7 = _mm512_set1_ps((float)7);
    __m512 a8 = _mm512_set1_ps((float)8);
    __m512 a9 = _mm512_set1_ps((float)9);
    __m512 a10 = _mm512_set1_ps((float)10);
    __m512 a11 = _mm512_set1_ps((float)11);
    __m512 a12 = _mm512_set1_ps((float)12);
    __m512 a13 = _mm512_set1_ps((float)13);
    __m512 a14 = _mm512_set1_ps((float)14);
    __m512 a15 = _mm512_set1_ps((float)15);
    __m512 a16 = _mm512_set1_ps((float)16);
    __m512 a17 = _mm512_set1_ps((float)17);
    __m512 a18 = _mm512_set1_ps((float)18);
    __m512 a19 = _mm512_set1_ps((float)19);
    __m512 a20 = _mm512_set1_ps((float)20);
    __m512 a21 = _mm512_set1_ps((float)21);
    __m512 a22 = _mm512_set1_ps((float)22);
    __m512 a23 = _mm512_set1_ps((float)23);
    for (long n = 0; n < iterations; n++) {
        a0 = _mm512_fmadd_ps(a0, m, c);
        a1 = _mm512_fmadd_ps(a1, m, c);
        a2 = _mm512_fmadd_ps(a2, m, c);
        a3 = _mm512_fmadd_ps(a3, m, c);
        a4 = _mm512_fmadd_ps(a4, m, c);
        a5 = _mm512_fmadd_ps(a5, m, c);
        a6 = _mm512_fmadd_ps(a6, m, c);
        a7 = _mm512_fmadd_ps(a7, m, c);
        a8 = _mm512_fmadd_ps(a8, m, c);
        a9 = _mm512_fmadd_ps(a9, m, c);
        a10 = _mm512_fmadd_ps(a10, m, c);
        a11 = _mm512_fmadd_ps(a11, m, c);
        a12 = _mm512_fmadd_ps(a12, m, c);
        a13 = _mm512_fmadd_ps(a13, m, c);
        a14 = _mm512_fmadd_ps(a14, m, c);
        a15 = _mm512_fmadd_ps(a15, m, c);
        a16 = _mm512_fmadd_ps(a16, m, c);
        a17 = _mm512_fmadd_ps(a17, m, c);
        a18 = _mm512_fmadd_ps(a18, m, c);
        a19 = _mm512_fmadd_ps(a19, m, c);
        a20 = _mm512_fmadd_ps(a20, m, c);
        a21 = _mm512_fmadd_ps(a21, m, c);
        a22 = _mm512_fmadd_ps(a22, m, c);
        a23 = _mm512_fmadd_ps(a23, m, c);
    }
    sink = first512(a0) + first512(a1) + first512(a2) + first512(a3) + first512(a4) + first512(a5) + first512(a6) + first512(a7) + first512(a8) + first512(a9) + first512(a10) + first512(a11) + first512(a12) + first512(a13) + first512(a14) + first512(a15) + first512(a16) + first512(a17) + first512(a18) + first512(a19) + first512(a20) + first512(a21) + first512(a22) + first512(a23);
    return sink;
}

int main(int argc, char **argv) {
    int wide = argc > 1 && strcmp(argv[1], "avx512") == 0;
    if (argc < 2 || (!wide && strcmp(argv[1], "avx2") != 0)) {
        fprintf(stderr, "usage: fma_peak avx2|avx512\n");
        return 1;
    }
    __builtin_cpu_init();
    if (wide ? !__builtin_cpu_supports("avx512f") : !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) {
        fprintf(stderr, "fma_peak: this CPU does not run %s\n", argv[1]);
        return 2;
    }
    double flops_per_iteration = wide ? AVX512_ACC * 16 * 2.0 : AVX2_ACC * 8 * 2.0;
    long iterations = 1 << 16;
    /* Grow the iteration count until one pass takes at least 0.2 s (this also warms the core). */
    for (;;) {
        double start = now();
        (void)(wide ? run_avx512(iterations) : run_avx2(iterations));
        if (now() - start >= 0.2) break;
        iterations *= 2;
    }
    double best = 0;
    for (int pass = 0; pass < 5; pass++) {
        double start = now();
        (void)(wide ? run_avx512(iterations) : run_avx2(iterations));
        double rate = flops_per_iteration * iterations / (now() - start) / 1e9;
        if (rate > best) best = rate;
    }
    printf("gflops: %.1f\n", best);
    return 0;
}
