/* make bench-bf16: the bf16 GEMM's GFLOP/s beside the fp32 GEMM's on the
 * bench's big shapes, at 1 and 2 threads, each the median of several timed
 * runs after two warm-up runs, with the load average before and after (time
 * it on a quiet machine: other work only lowers the figures).
 *
 *   bench_gemm_bf16 [--runs N] [--bf16 avx512_bf16|neon_bf16|avx2|portable]
 *
 * Not a test: it checks nothing but that the path asked for runs here. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "qkv/qkv.h"
#include "tensor/kernels/cpu.h"
#include "tensor/kernels/gemm.h"
#include "tensor/kernels/gemm_bf16.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void print_load(const char *when)
{
    char line[128] = "?";
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (!fgets(line, sizeof line, f))
            strcpy(line, "?\n");
        fclose(f);
    }
    printf("load average %s: %s", when, line);
}

typedef struct shape {
    int M, N, K;
    bool ta, tb;
} shape;

/* GFLOP/s of one product, bf16 or fp32, on `threads` threads: the median of runs. */
static double time_product(const shape *s, bool bf16, int threads, int runs, const float *A,
                           const float *B, float *C)
{
    omp_set_num_threads(threads);
    int lda = s->ta ? s->M : s->K, ldb = s->tb ? s->K : s->N;
    double flops = 2.0 * s->M * s->N * s->K, g[64];
    int reps = (int)(4e8 / flops) + 1; /* a few ms of work per timed run */
    for (int r = -2; r < runs; r++) {     /* two warm-up runs */
        double t0 = now();
        for (int i = 0; i < reps; i++)
            if (bf16)
                qkv__gemm_bf16(s->ta, s->tb, s->M, s->N, s->K, 1, A, lda, B, ldb, 0, C, s->N);
            else
                qkv__gemm(1, s->ta, s->tb, s->M, s->N, s->K, 1, A, lda, 0, B, ldb, 0, 0, C, s->N,
                          0);
        if (r >= 0)
            g[r] = flops * reps / (now() - t0) * 1e-9;
    }
    qsort(g, (size_t)runs, sizeof *g, by_value);
    return g[runs / 2];
}

int main(int argc, char **argv)
{
    int runs = 9;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--bf16") == 0 && i + 1 < argc)
            path = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--runs N] [--bf16 avx512_bf16|neon_bf16|avx2|portable]\n", argv[0]);
            return 2;
        }
    }
    if (runs < 1 || runs > 64) {
        fprintf(stderr, "bench_gemm_bf16: --runs %d: want 1 to 64\n", runs);
        return 2;
    }
    if (qkv__gemm_bf16_use("--bf16 ", path) != 0) {
        fprintf(stderr, "bench_gemm_bf16: %s\n", qkv_last_error());
        return 1;
    }
    static const shape shapes[] = {
        {4096, 1536, 384, false, false}, {4096, 1536, 384, false, true},
        {4096, 384, 1536, false, false}, {4096, 384, 1536, false, true},
        {768, 128, 384, false, false},   {768, 128, 384, false, true},
        /* a 6L/384 B16×T256 step's: the q/k/v/out projections and their weight gradients */
        {4096, 384, 384, false, true},   {384, 384, 4096, true, false},
        {1536, 384, 4096, true, false},
    };
    size_t most = (size_t)4096 * 1536 * 2 + (size_t)1536 * 384;
    float *mem = qkv_alloc(most * sizeof *mem);
    if (!mem) {
        fprintf(stderr, "bench_gemm_bf16: %s\n", qkv_last_error());
        return 1;
    }
    qkv_rng rng;
    qkv_rng_seed(&rng, 1);
    for (size_t i = 0; i < most; i++)
        mem[i] = (float)qkv_rng_uniform(&rng) - 0.5f;

    print_load("before");
    printf("fp32 GEMM: %s kernel; bf16 GEMM: %s path; GFLOP/s, median of %d runs\n",
           qkv_cpu_name(qkv_cpu_active()), qkv__gemm_bf16_name(qkv__gemm_bf16_path()), runs);
    printf("%-16s %-4s %9s %9s %6s   %9s %9s %6s\n", "M x N x K", "form", "fp32 1t", "bf16 1t",
           "ratio", "fp32 2t", "bf16 2t", "ratio");
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        const shape *s = &shapes[i];
        float *A = mem, *B = A + (size_t)s->M * s->K, *C = B + (size_t)s->K * s->N;
        char dims[32];
        snprintf(dims, sizeof dims, "%dx%dx%d", s->M, s->N, s->K);
        printf("%-16s %c%c  ", dims, s->ta ? 'T' : 'N', s->tb ? 'T' : 'N');
        for (int t = 1; t <= 2; t++) {
            double f32 = time_product(s, false, t, runs, A, B, C);
            double b16 = time_product(s, true, t, runs, A, B, C);
            printf(" %9.1f %9.1f %5.2fx  ", f32, b16, b16 / f32);
            fflush(stdout);
        }
        printf("\n");
    }
    print_load("after");
    qkv_free(mem);
    return 0;
}
