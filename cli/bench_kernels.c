/* qkv bench --ops, part 1: every hot kernel's throughput on every vector path
 * this CPU runs (qkv/profile.h, qkv/cpu.h), and the guard against a
 * silent scalar fallback: each path must be at least `need` times as fast as
 * the next narrower one (AVX-512 over AVX2, AVX2 over the SSE2 baseline);
 * a kernel whose speed something other than the vector width bounds (its
 * limit, qkv_kernel_limit) must only not be slower: LIMITED_NEED. Either bar catches
 * a scalar copy, which is 4-16x slower than any vector path.
 *
 * Every buffer holds 4096 floats (the 64x64 gemm's matrices), of which the
 * other kernels read and write N (8 KB): their two or three operands fit the
 * smallest L1d these paths run on (32 KB, AMD Zen 3 and 4), so the figure is
 * the kernel's arithmetic, not L2's bandwidth. (With operands of 16 KB, Zen
 * 4's L1 spilled and relu2 ran as fast on AVX2 as on SSE2.) Each
 * figure is the best of several timed rounds, and the paths take turns
 * within each round, so a busy machine slows them alike. Each timed round
 * follows an untimed one on the same path: an Intel core powers its 512-bit
 * units down when they idle and runs AVX-512 slowly for tens of µs after
 * waking them, which a turn from another path would otherwise measure.
 * A core that runs 512-bit vectors as two 256-bit halves (AMD Zen 4) does
 * no more arithmetic per cycle on AVX-512 than on AVX2: there AVX-512 over
 * AVX2 has only the not-slower bar, which still catches a scalar copy. */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "qkv/cpu.h"
#include "qkv/profile.h"
#include "qkv/qkv.h"
#include "runtime.h"
#include "threads.h"

/* Rows of 512: long enough that a row's fixed cost (the sum across lanes at
 * its end) does not hide how fast its loops run. */
enum { N = 2048, COLS = 512 };

/* The bar of a kernel with a limit other than the width: not slower, within the
 * noise of a shared machine and a core that slows its clock for AVX-512 (measured
 * 0.87-0.96 for layernorm forward, AVX-512 over AVX2); a scalar copy is 4x slower. */
#define LIMITED_NEED 0.7

/* Time of one round of `reps` runs of kernel k, in ns; *work the values it handled. */
static double round_ns(qkv_kernel_space *s, int k, int reps, double *work)
{
    double t0 = cli_now();
    *work = qkv_kernel_run(s, k, reps);
    return (cli_now() - t0) * 1e9;
}

int bench_kernels(bool quick, double need)
{
    cli_use_threads(1);
    qkv_kernel_space *s = qkv_kernel_space_new(N, COLS, 9);
    if (!s) {
        fprintf(stderr, "qkv bench: %s\n", qkv_last_error());
        return 1;
    }
    int paths[QKV_CPU_PATHS], n_paths = 0;
    for (int p = 0; p < QKV_CPU_PATHS; p++)
        if (qkv_cpu_supported(p))
            paths[n_paths++] = p;
    const int rounds = quick ? 7 : 21;
    const double round_target_ns = quick ? 1e5 : 4e5;

    printf("\nhot kernels, one thread, values per ns (best of %d rounds; operands of %d floats, "
           "in L1)\n", rounds, N);
    bool halved = qkv_cpu_avx512_halved();
    if (halved)
        printf("this core runs 512-bit vectors as two 256-bit halves (AMD Zen 4): avx512/avx2 "
               "needs %.2fx, not %.2fx\n", LIMITED_NEED, need);
    printf("%-32s", "kernel");
    for (int i = 0; i < n_paths; i++)
        printf(" %9s", qkv_cpu_name(paths[i]));
    for (int i = 0; i + 1 < n_paths; i++) {
        char h[40];
        snprintf(h, sizeof h, "%s/%s", qkv_cpu_name(paths[i]), qkv_cpu_name(paths[i + 1]));
        printf(" %16s", h);
    }
    printf("  limit\n");
    int failed = 0, n_kernels = qkv_kernel_count();
    for (int k = 0; k < n_kernels; k++) {
        /* Enough runs per round for round_target_ns on the narrowest path. */
        double work;
        qkv_cpu_use(paths[n_paths - 1]);
        round_ns(s, k, 1, &work);
        int reps = (int)(round_target_ns / (round_ns(s, k, 1, &work) + 1)) + 1;
        double best[QKV_CPU_PATHS] = {0};
        for (int r = 0; r < rounds; r++)
            for (int i = 0; i < n_paths; i++) {
                qkv_cpu_use(paths[i]);
                round_ns(s, k, reps, &work); /* warm-up: see the top */
                double rate = work / round_ns(s, k, reps, &work);
                best[i] = rate > best[i] ? rate : best[i];
            }
        const char *limit = qkv_kernel_limit(k);
        bool width = strcmp(limit, "width") == 0;
        printf("%-32s", qkv_kernel_name(k));
        for (int i = 0; i < n_paths; i++)
            printf(" %9.2f", best[i]);
        for (int i = 0; i + 1 < n_paths; i++) {
            double ratio = best[i] / best[i + 1];
            /* Only x86 compiles a row kernel once per path; elsewhere (NEON) the
             * paths run one copy, whose vectors tests/aarch64/neon_kernels.sh
             * checks in the disassembly, and a ratio of 1 says nothing. */
            bool same_width = halved && paths[i] == QKV_CPU_AVX512;
            bool ok = !BENCH_X86 || ratio >= (!width || same_width ? LIMITED_NEED : need);
            failed += !ok;
            printf(" %10.2fx %-4s", ratio, ok ? "ok" : "SLOW");
        }
        printf("  %s\n", limit);
        fflush(stdout);
    }
    qkv_cpu_use(QKV_CPU_DEFAULT);
    qkv_kernel_space_free(s);
    printf("%s: each path at least %.2fx the next narrower (%.2fx where the limit is not the "
           "width)\n", failed ? "FAILED" : "passed", need, LIMITED_NEED);
    if (failed)
        printf("%d kernel(s) too slow on a wider path: a scalar fallback?\n", failed);
    return failed;
}
