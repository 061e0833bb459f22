/* qkv bench, part 1: qkv_gemm's speed on the model's shapes, as a share of
 * the machine's measured fp32 FMA peak; beside it the bf16 GEMM's (the
 * products of --precision bf16, qkv/precision.h) and its ratio to fp32, with
 * the bf16 peak where the CPU has AVX512_BF16 (a loop of vdpbf16ps).
 *
 * The peak is the best of many short timed runs of a loop of independent
 * FMAs in the active path's vectors (qkv/cpu.h: zmm on AVX-512, ymm on AVX2, a
 * multiply and an add on SSE2's xmm for the portable path): a peak, since
 * other work on the machine only lowers it. Each GEMM figure is the median of several
 * timed runs after two warm-up runs. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "qkv/cpu.h"
#include "qkv/gemm.h"
#include "qkv/qkv.h"
#include "runtime.h"
#include "threads.h"

/* The largest of v[0..n) (n >= 1). */
static double largest(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

/* `chains` independent FMA chains (a multiple of 4), every accumulator in a
 * register beside the two constants: enough chains to cover the FMA latency
 * on both pipes (4 cycles × 2 needs 8), few enough not to spill. */
#define PEAK_LOOP(vec, set1, fmadd, lanes, chains)                                            \
    vec acc[chains], x = set1(0.999f), y = set1(0.001f);                                      \
    for (int i = 0; i < chains; i++)                                                          \
        acc[i] = set1((float)i);                                                              \
    for (long it = 0; it < iters; it++)                                                       \
        _Pragma("GCC unroll 24") for (int i = 0; i < chains; i++)                             \
            acc[i] = fmadd(acc[i], x, y);                                                     \
    float s = 0, out[lanes];                                                                  \
    for (int i = 0; i < chains; i++) {                                                        \
        memcpy(out, &acc[i], sizeof out);                                                     \
        s += out[0];                                                                          \
    }                                                                                         \
    return s

#if BENCH_X86
#include <immintrin.h>

/* 24 of AVX-512's 32 zmm registers: its kernel's 12×32 tile holds as many. */
enum { CHAINS_AVX512 = 24, CHAINS_AVX2 = 12, CHAINS_SSE2 = 12 };

__attribute__((target("avx512f,fma"))) static float fma_loop_avx512(long iters)
{
    PEAK_LOOP(__m512, _mm512_set1_ps, _mm512_fmadd_ps, 16, CHAINS_AVX512);
}

/* 12 of AVX2's 16 ymm registers (16 would spill: 16 + the two constants). */
__attribute__((target("avx2,fma"))) static float fma_loop_avx2(long iters)
{
    PEAK_LOOP(__m256, _mm256_set1_ps, _mm256_fmadd_ps, 8, CHAINS_AVX2);
}

/* SSE2 has no FMA: a multiply and an add per step, 2 flops per lane as an FMA's. */
static inline __m128 mul_add(__m128 a, __m128 x, __m128 y)
{
    return _mm_add_ps(_mm_mul_ps(a, x), y);
}
static float mul_add_loop_sse2(long iters)
{
    PEAK_LOOP(__m128, _mm_set1_ps, mul_add, 4, CHAINS_SSE2);
}

/* vdpbf16ps: 16 lanes, each adding two products (4 flops, an FMA's 2 twice). */
__attribute__((target("avx512f,avx512bf16"))) static inline __m512 dot_bf16(__m512 a, __m512 x,
                                                                             __m512 y)
{
    return _mm512_dpbf16_ps(a, (__m512bh)x, (__m512bh)y);
}
__attribute__((target("avx512f,avx512bf16"))) static float dot_loop_bf16(long iters)
{
    PEAK_LOOP(__m512, _mm512_set1_ps, dot_bf16, 16, CHAINS_AVX512);
}

/* The bf16 kernel's loop (iters 0: only its width and chains; lanes count
 * fp32 lanes twice, two products each), or none: *lanes 0. */
static float bf16_loop(long iters, int *lanes, int *chains)
{
    bool dot = strcmp(qkv_precision_kernel(), "avx512_bf16") == 0;
    *lanes = dot ? 32 : 0, *chains = CHAINS_AVX512;
    return iters && dot ? dot_loop_bf16(iters) : 0;
}

/* The active path's FMA loop, its vector width and its chains. */
static float fma_loop(long iters, int *lanes, int *chains)
{
    switch (qkv_cpu_active()) {
    case QKV_CPU_AVX512:
        *lanes = 16, *chains = CHAINS_AVX512;
        return iters ? fma_loop_avx512(iters) : 0;
    case QKV_CPU_AVX2:
        *lanes = 8, *chains = CHAINS_AVX2;
        return iters ? fma_loop_avx2(iters) : 0;
    default:
        *lanes = 4, *chains = CHAINS_SSE2;
        return iters ? mul_add_loop_sse2(iters) : 0;
    }
}
#elif BENCH_AARCH64
#include <arm_neon.h>

/* 24 of NEON's 32 q registers, as many as its GEMM kernel's 8×12 tile holds. */
enum { CHAINS_NEON = 24 };

static inline float32x4_t fma_neon(float32x4_t a, float32x4_t x, float32x4_t y)
{
    return vfmaq_f32(y, a, x); /* a·x + y, as _mm256_fmadd_ps(a, x, y) */
}
static float fma_loop_neon(long iters)
{
    PEAK_LOOP(float32x4_t, vdupq_n_f32, fma_neon, 4, CHAINS_NEON);
}

/* NEON's FMA loop (every path runs it: NEON is aarch64's baseline). */
static float fma_loop(long iters, int *lanes, int *chains)
{
    *lanes = 4, *chains = CHAINS_NEON;
    return iters ? fma_loop_neon(iters) : 0;
}
#else
/* No vector FMA loop for this CPU: one scalar multiply-add chain per slot. */
static float fma_loop(long iters, int *lanes, int *chains)
{
    *lanes = 1, *chains = 4;
    PEAK_LOOP(float, (float), fmaf, 1, 4);
}
#endif

#if !BENCH_X86
/* No bf16 instructions the library uses here: no bf16 peak. */
static float bf16_loop(long iters, int *lanes, int *chains)
{
    (void)iters;
    *lanes = 0, *chains = 4;
    return 0;
}
#endif

/* GFLOP/s of `threads` threads each running loop (total over threads): the
 * active path's FMA loop (fp32) or the bf16 kernel's; 0 for a loop of no lanes. */
static double measure_peak(int threads, float (*loop)(long, int *, int *))
{
    int lanes, chains;
    loop(0, &lanes, &chains);
    if (lanes == 0)
        return 0;
    /* many short runs (~5 ms): on a shared machine some run undisturbed */
    enum { PEAK_RUNS = 41 };
    const long iters = 32 * 1000 * 1000 / chains;
    double flops_per_iter = 2.0 * chains * lanes, runs[PEAK_RUNS];
    volatile float sink = 0;
    for (int r = 0; r < PEAK_RUNS; r++) {
        double t0 = cli_now();
#pragma omp parallel num_threads(threads) reduction(+ : sink)
        sink += loop(iters, &(int){0}, &(int){0});
        runs[r] = flops_per_iter * (double)iters * threads / (cli_now() - t0) * 1e-9;
    }
    return largest(runs, PEAK_RUNS); /* a peak: other work on the machine only lowers it */
}

typedef struct shape {
    const char *what;  /* M x N x K, and where the model uses it */
    int batch, M, N, K;
    const char *forms; /* which of NN, NT, TN to time */
} shape;

/* GFLOP/s of qkv_gemm (or qkv_gemm_bf16) for one
 * shape and form on `threads` threads: the median of n_runs timed runs, and
 * the best and worst of them in *best and *worst. */
static double time_gemm(const shape *s, bool ta, bool tb, bool bf16, int threads, int n_runs,
                        const float *A, const float *B, float *C, double *best, double *worst)
{
    cli_use_threads(threads);
    int lda = ta ? s->M : s->K, ldb = tb ? s->K : s->N;
    size_t sa = (size_t)s->M * s->K, sb = (size_t)s->K * s->N, sc = (size_t)s->M * s->N;
    double flops = 2.0 * s->batch * s->M * s->N * s->K, runs[16];
    int reps = (int)(2e8 / flops) + 1; /* about 1 ms of work per timed run */
    for (int r = -2; r < n_runs; r++) { /* two warm-up runs */
        double t0 = cli_now();
        for (int i = 0; i < reps; i++)
            (bf16 ? qkv_gemm_bf16 : qkv_gemm)(s->batch, ta, tb, s->M, s->N, s->K, 1, A, lda, sa,
                                              B, ldb, sb, 0, C, s->N, sc);
        if (r >= 0)
            runs[r] = flops * reps / (cli_now() - t0) * 1e-9;
    }
    double median = cli_median(runs, n_runs); /* sorts runs */
    *best = runs[n_runs - 1], *worst = runs[0];
    return median;
}

void bench_gemm(int runs, int max_threads, bool quick)
{
    /* The table below has a column for 1 thread and one for 2, so no more are timed. */
    if (max_threads > BENCH_GEMM_MAX_THREADS)
        max_threads = BENCH_GEMM_MAX_THREADS;
    double peak[BENCH_GEMM_MAX_THREADS + 1] = {0}; /* peak[t]: the FMA peak of t threads */
    double peak16[BENCH_GEMM_MAX_THREADS + 1] = {0}; /* and the bf16 peak */
    for (int t = 1; t <= max_threads; t++) {
        cli_use_threads(t);
        peak[t] = measure_peak(t, fma_loop);
        peak16[t] = measure_peak(t, bf16_loop);
    }
    /* Every path has a GEMM kernel of its own (the portable one is plain C),
     * so the kernel is named by the path. */
    const char *path = qkv_cpu_name(qkv_cpu_active());
    printf("\nGEMM (qkv_gemm, %s kernel), fp32\n", path);
    printf("measured fp32 peak of the %s path: 1 thread %.1f GFLOP/s", path, peak[1]);
    if (max_threads > 1)
        printf(", 2 threads %.1f GFLOP/s (%.1f per core)", peak[2], peak[2] / 2);
    printf("\nbf16 (qkv_gemm_bf16, %s kernel, the products of --precision bf16)",
           qkv_precision_kernel());
    if (peak16[1] > 0)
        printf(": measured vdpbf16ps peak 1 thread %.1f GFLOP/s", peak16[1]);
    if (peak16[1] > 0 && max_threads > 1)
        printf(", 2 threads %.1f GFLOP/s", peak16[2]);
    printf("\n\n");

    /* The shapes in every form, then the weight gradients (TN, K =
     * tokens) and the attention products as the model runs them. */
    static const shape shapes[] = {
        {"768x128x384", 1, 768, 128, 384, "NN NT TN"},
        {"4096x384x1536", 1, 4096, 384, 1536, "NN NT TN"},
        {"4096x1536x384", 1, 4096, 1536, 384, "NN NT TN"},
        {"4096x384x384", 1, 4096, 384, 384, "NN NT TN"},
        {"4096x1152x384", 1, 4096, 1152, 384, "NN NT TN"},
        {"768x65x128 lm head", 1, 768, 65, 128, "NN NT TN"},
        {"48 x 64x64x32 attn QK'", 48, 64, 64, 32, "NN NT TN"},
        {"48 x 64x32x64 attn PV", 48, 64, 32, 64, "NN TN"},
        {"1536x384x4096 dW", 1, 1536, 384, 4096, "TN"},
        {"384x1536x4096 dW", 1, 384, 1536, 4096, "TN"},
        {"1152x384x4096 dW", 1, 1152, 384, 4096, "TN"},
        {"384x384x4096 dW", 1, 384, 384, 4096, "TN"},
        {"384x128x768 dW", 1, 384, 128, 768, "TN"},
        {"65x128x768 lm head dW", 1, 65, 128, 768, "TN"},
    };
    size_t most = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        const shape *s = &shapes[i];
        size_t m = (size_t)s->batch * ((size_t)s->M * s->K + (size_t)s->K * s->N + (size_t)s->M * s->N);
        most = m > most ? m : most;
    }
    float *mem = qkv_alloc(most * sizeof *mem);
    if (!mem) {
        fprintf(stderr, "qkv bench: %s\n", qkv_last_error());
        return;
    }
    qkv_rng rng;
    qkv_rng_seed(&rng, 1);
    for (size_t i = 0; i < most; i++)
        mem[i] = (float)qkv_rng_uniform(&rng) - 0.5f;

    printf("GFLOP/s: median of %d runs (%% of peak), then the worst and best run; bf16: "
           "median (x fp32's median)\n", runs);
    printf("%-24s %-4s%31s", "M x N x K", "form", "1 thread");
    if (max_threads > 1)
        printf("%31s", "2 threads");
    printf(" %16s", "bf16 1 thread");
    if (max_threads > 1)
        printf(" %16s", "bf16 2 threads");
    printf("\n");
    /* --quick: the two shapes the targets name */
    size_t n_shapes = quick ? 2 : sizeof shapes / sizeof *shapes;
    for (size_t i = 0; i < n_shapes; i++) {
        const shape *s = &shapes[i];
        float *A = mem, *B = A + (size_t)s->batch * s->M * s->K, *C = B + (size_t)s->batch * s->K * s->N;
        for (const char *f = s->forms; *f; f += f[2] ? 3 : 2) {
            bool ta = f[0] == 'T', tb = f[1] == 'T';
            printf("%-24s %c%c  ", s->what, f[0], f[1]);
            double fp32[BENCH_GEMM_MAX_THREADS + 1];
            for (int t = 1; t <= max_threads; t++) {
                double best, worst, g = time_gemm(s, ta, tb, false, t, runs, A, B, C, &best, &worst);
                double to_pct = peak[t] > 0 ? 100 / peak[t] : 0;
                char range[32];
                snprintf(range, sizeof range, "%.0f-%.0f", worst, best);
                printf("  %6.1f (%5.1f%%) %13s", g, g * to_pct, range);
                fp32[t] = g;
            }
            for (int t = 1; t <= max_threads; t++) {
                double best, worst, g = time_gemm(s, ta, tb, true, t, runs, A, B, C, &best, &worst);
                printf("  %6.1f (%4.2fx)", g, g / fp32[t]);
            }
            printf("\n");
            fflush(stdout);
        }
    }
    qkv_free(mem);
}
