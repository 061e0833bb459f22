/* qkv bench --ops, the bf16 part: on every vector path this CPU runs, one
 * thread's fp32 product (qkv_gemm) beside its bf16 one (qkv_gemm_bf16, the
 * products of --precision bf16), checked. Where the bf16 kernel has bf16
 * units (vdpbf16ps, bfdot: two products per fp32 lane) it must be at least
 * `need` times the fp32 kernel: a packing or a fallback that lost those
 * units would otherwise hide behind correct results. The avx2 bf16 kernel
 * widens bf16 to fp32 and does two FMAs a pair where fp32 does two a pair
 * of steps, and packs part of its operands in plain C: it must reach
 * WIDENED_NEED of fp32, which the plain-C kernel (0.2-0.4x) does not. The
 * portable kernel has no bar: its figure is what bf16 costs a CPU without
 * vectors for it.
 *
 * The shape is one of the model's (an attention projection at width 384),
 * 1.7 MB of operands: the blocked kernels' speed, not L2's bandwidth. The
 * two precisions take turns within each round, so a busy machine slows
 * them alike; each figure is the best round. */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "qkv/cpu.h"
#include "qkv/gemm.h"
#include "qkv/precision.h"
#include "qkv/qkv.h"
#include "runtime.h"
#include "threads.h"

enum { M = 384, N = 384, K = 384 };

/* The avx2 bf16 kernel's bar against fp32 (measured 0.82x on Zen 4, where
 * the plain-C kernel it replaced was 0.18x). */
#define WIDENED_NEED 0.5

/* GFLOP/s of one round: reps products in fp32 or bf16. */
static double round_gflops(bool bf16, int reps, const float *a, const float *b, float *c)
{
    double t0 = cli_now();
    for (int i = 0; i < reps; i++)
        (bf16 ? qkv_gemm_bf16 : qkv_gemm)(1, false, false, M, N, K, 1, a, K, 0, b, N, 0, 0, c, N,
                                          0);
    return 2.0 * M * N * K * reps / (cli_now() - t0) * 1e-9;
}

int bench_bf16(bool quick, double need)
{
    cli_use_threads(1);
    float *mem = qkv_alloc((size_t)(M * K + K * N + M * N) * sizeof *mem);
    if (!mem) {
        fprintf(stderr, "qkv bench: %s\n", qkv_last_error());
        return 1;
    }
    float *a = mem, *b = a + M * K, *c = b + K * N;
    qkv_rng rng;
    qkv_rng_seed(&rng, 16);
    for (int i = 0; i < M * K + K * N; i++)
        mem[i] = (float)(2 * qkv_rng_uniform(&rng) - 1);
    const int rounds = quick ? 5 : 15, reps = quick ? 4 : 12; /* about 1 and 3 ms a round */
    printf("\nbf16 products, one thread, %dx%dx%d NN, GFLOP/s (best of %d rounds)\n", M, N, K,
           rounds);
    printf("%-10s %-12s %9s %9s %9s\n", "path", "bf16 kernel", "fp32", "bf16", "bf16/fp32");
    int failed = 0;
    for (int p = 0; p < QKV_CPU_PATHS; p++) {
        if (!qkv_cpu_supported(p))
            continue;
        qkv_cpu_use(p);
        const char *kernel = qkv_precision_kernel();
        double best[2] = {0};
        for (int r = 0; r < rounds; r++)
            for (int bf16 = 0; bf16 < 2; bf16++) {
                round_gflops(bf16, 1, a, b, c); /* warm-up: Intel wakes its 512-bit units */
                double g = round_gflops(bf16, reps, a, b, c);
                best[bf16] = g > best[bf16] ? g : best[bf16];
            }
        double ratio = best[1] / best[0];
        bool widened = strcmp(kernel, "avx2") == 0, plain = strcmp(kernel, "portable") == 0;
        bool ok = plain || ratio >= (widened ? WIDENED_NEED : need);
        failed += !ok;
        printf("%-10s %-12s %9.1f %9.1f %8.2fx %s\n", qkv_cpu_name(p), kernel, best[0], best[1],
               ratio, plain ? "(plain C: no bar)" : ok ? "ok" : "SLOW");
        fflush(stdout);
    }
    qkv_cpu_use(QKV_CPU_DEFAULT);
    qkv_free(mem);
    printf("%s: a bf16 kernel with bf16 units at least %.2fx the fp32 one, avx2's %.2fx\n",
           failed ? "FAILED" : "passed", need, WIDENED_NEED);
    return failed;
}
