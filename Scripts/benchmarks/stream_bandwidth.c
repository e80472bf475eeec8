/* Memory read bandwidth of this machine with 1 and 2 threads: the ceiling of a layer that
 * streams its weights from DRAM once per prediction (VGG16's first fully connected layer reads
 * 411 MB at batch 1).
 *
 *   cc -O2 -pthread -o stream_bandwidth Scripts/benchmarks/stream_bandwidth.c && ./stream_bandwidth [MB]
 *
 * Fills a buffer of MB megabytes (default 411, 2 MB aligned, advised for huge pages), then five
 * times per thread count sums it with AVX2 loads, each thread one contiguous half; prints each
 * time as "threads: T ms: X gb_per_s: Y" and the best rate per thread count last.
 */
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

typedef struct {
    const float *begin, *end;
    float sum;
} share;

/* Four independent sums so the loads, not the adds' latency, set the pace. */
__attribute__((target("avx2")))
static void *sum_share(void *argument) {
    share *s = argument;
    __m256 a = _mm256_setzero_ps(), b = a, c = a, d = a;
    for (const float *p = s->begin; p < s->end; p += 32) {
        a = _mm256_add_ps(a, _mm256_load_ps(p));
        b = _mm256_add_ps(b, _mm256_load_ps(p + 8));
        c = _mm256_add_ps(c, _mm256_load_ps(p + 16));
        d = _mm256_add_ps(d, _mm256_load_ps(p + 24));
    }
    float lanes[8];
    _mm256_storeu_ps(lanes, _mm256_add_ps(_mm256_add_ps(a, b), _mm256_add_ps(c, d)));
    s->sum = lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] + lanes[6] + lanes[7];
    return NULL;
}

int main(int argc, char **argv) {
    const size_t megabytes = argc > 1 ? (size_t)atol(argv[1]) : 411;
    const size_t huge = 2u << 20, bytes = (megabytes << 20) / huge * huge;
    if (bytes == 0 || !__builtin_cpu_supports("avx2")) {
        fprintf(stderr, "stream_bandwidth: needs AVX2 and at least 2 MB\n");
        return 2;
    }
    float *buffer = aligned_alloc(huge, bytes);
    if (!buffer) return 1;
    madvise(buffer, bytes, MADV_HUGEPAGE);
    const size_t count = bytes / sizeof(float);
    for (size_t i = 0; i < count; i++) buffer[i] = 1.0f;

    double best[3] = { 0, 0, 0 };
    for (int threads = 1; threads <= 2; threads++) {
        for (int round = 0; round < 5; round++) {
            share shares[2];
            pthread_t workers[2];
            const size_t half = count / 2 / 32 * 32;
            shares[0] = (share){ buffer, buffer + (threads == 1 ? count : half), 0 };
            shares[1] = (share){ buffer + half, buffer + count, 0 };
            const double start = now();
            for (int t = 1; t < threads; t++) pthread_create(&workers[t], NULL, sum_share, &shares[t]);
            sum_share(&shares[0]);
            for (int t = 1; t < threads; t++) pthread_join(workers[t], NULL);
            const double seconds = now() - start;
            const double sum = shares[0].sum + (threads == 2 ? shares[1].sum : 0);
            if (sum != (double)count) fprintf(stderr, "stream_bandwidth: sum %.0f, expected %zu\n", sum, count);
            const double rate = bytes / seconds / 1e9;
            if (rate > best[threads]) best[threads] = rate;
            printf("threads: %d ms: %.2f gb_per_s: %.1f\n", threads, seconds * 1e3, rate);
        }
    }
    printf("best gb_per_s: 1 thread %.1f, 2 threads %.1f\n", best[1], best[2]);
    free(buffer);
    return 0;
}
